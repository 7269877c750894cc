#!/usr/bin/env bash
# runbox run -- true with no isolation, with --isolate net, and with
# --allow-net (the network cut plus an egress proxy started and stopped
# around the command), interleaved by bench/abrun; then the proxy's
# throughput (1 GiB from a loopback server, direct and through CONNECT):
#
#   bench/allownet.sh RUNBOX [RUNS]
#
# Run it as root or as a user whose supervisor gets a user namespace of its
# own (--allow-net needs the same as --isolate net on a supervisor thread).
set -euo pipefail
B=$1 RUNS=${2:-200}
cd "$(dirname "$0")/.."
T=$(mktemp -d /tmp/rban.XXXX)
trap 'kill "$(cat "$T/h/daemon.lock" 2>/dev/null)" 2>/dev/null || true; rm -rf "$T"' EXIT
go build -o "$T/abrun" ./bench/abrun
mkdir -p "$T/ws"
(cd "$T/ws" && "$B" --home "$T/h" run -- true >/dev/null 2>&1)
(cd "$T/ws" && "$T/abrun" -n "$RUNS" -block 10 \
  "$B --home $T/h run --isolate none -- true" \
  "$B --home $T/h run --isolate net -- true" \
  "$B --home $T/h run --allow-net example.org -- true" 2>/dev/null | sed "s|$T/||g")
go test -run XXX -bench Download1GiB -benchtime 5x ./sandbox/egress/
