#!/usr/bin/env bash
# A sweep's snapshots in a workspace that is not a git repository, two
# builds side by side: 4 members of `true` under --parallel 2, from
# `runbox sweep` to the end of `sweep wait`, against the same sweep with
# --no-snapshot (no copy at all: the floor).
#
#   bench/snapshot.sh OLD_TREE NEW_TREE [REPEATS]
#
# Each TREE is a checkout with `make build` done. The workspace is a
# research project's shape: 40 source files and a config at the top, a
# Python virtualenv of 3 000 files (.venv, with its pyvenv.cfg) and a data
# directory of 10 000 4 KiB files two levels down. Each sitting gives each
# build a fresh ext4 filesystem without a journal (like this machine's
# root; see bench/hotpath.sh for why fresh) holding its workspace and home.
set -euo pipefail
OLD=$(cd "$1" && pwd)
NEW=$(cd "$2" && pwd)
REPEATS=${3:-3}
command -v mkfs.ext4 >/dev/null || { echo "snapshot: needs mkfs.ext4 (apt-get install e2fsprogs)"; exit 1; }
W=$(mktemp -d /tmp/rbsnap.XXXX)
cleanup() {
  for d in "$W"/*/; do
    pid=$(cat "$d/home/daemon.lock" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  sleep 0.5
  for d in "$W"/*/; do mountpoint -q "$d" && umount "$d" 2>/dev/null; done
  rm -rf "$W"
}
trap cleanup EXIT

sitting() { # name tree -> prints seconds for the snapshot sweep and the --no-snapshot one
  local d=$W/$1
  mkdir -p "$d"
  truncate -s 2G "$W/$1.img"
  mkfs.ext4 -q -F -O ^has_journal "$W/$1.img"
  mount -o loop "$W/$1.img" "$d"
  python3 - "$d/ws" <<'EOF'
import os, sys
ws = sys.argv[1]
def put(rel, data):
    p = os.path.join(ws, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
put("train.py", b"print('step 1/1')\n")
put("config.yaml", b"lr: 0.1\n")
for i in range(40):
    put(f"src/mod{i:02d}.py", b"x = 1\n" * 50)
put(".venv/pyvenv.cfg", b"home = /usr/bin\n")
for i in range(3000):
    put(f".venv/lib/python3.12/site-packages/pkg{i // 100:02d}/m{i:04d}.py", b"y = 2\n" * 100)
for i in range(10000):
    put(f"data/c{i // 100:03d}/img{i % 100:03d}.bin", os.urandom(4096))
EOF
  local R=$2/bin/runbox
  export RUNBOX_HOME=$d/home RUNBOX_NO_DOCKER=1
  cd "$d/ws"
  "$R" run --sandbox process -- true >/dev/null
  sleep 3 # the daemon's first seconds (bench/hotpath.sh)
  local out=""
  for flags in "" --no-snapshot; do
    local t0 t1 id
    t0=$(date +%s.%N)
    id=$("$R" sweep $flags --sandbox process --param i=1,2,3,4 --parallel 2 -- true)
    "$R" sweep wait "$id" >/dev/null
    t1=$(date +%s.%N)
    out+=" $(echo "$t1 - $t0" | bc)"
  done
  echo "$out $("$R" status @last~4 | sed -n 's/^snapshot: *//p' | tr -s ' ')"
  pid=$(cat "$d/home/daemon.lock" 2>/dev/null || true)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  sleep 0.5
  cd /
  umount "$d"
  rm -f "$W/$1.img"
}

printf '%-4s %-6s %10s %14s  %s\n' rep build snapshot no-snapshot "the snapshot"
for rep in $(seq 1 "$REPEATS"); do
  order="old new"
  [ $((rep % 2)) -eq 0 ] && order="new old"
  for b in $order; do
    tree=$OLD
    [ "$b" = new ] && tree=$NEW
    read -r snap nosnap what < <(sitting "$b$rep" "$tree")
    printf '%-4s %-6s %9.2fs %13.2fs  %s\n' "$rep" "$b" "$snap" "$nosnap" "$what"
  done
done
