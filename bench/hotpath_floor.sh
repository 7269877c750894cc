#!/usr/bin/env bash
# How close to task-spooler a durable run service in Go can come on this
# machine (issue 23's 2x target): bench/floor, a Go client and daemon that
# do only the two fdatasyncs the issue keeps and fork+exec the command,
# beside `tsp -f true` and runbox's `run --sandbox process -- true`.
#
#   bench/hotpath_floor.sh TREE        (TREE: a checkout with make build done)
#
# All homes on one fresh ext4 without a journal, like this machine's root
# (bench/hotpath.sh says why fresh); runs interleaved (bench/abrun).
#   floor        the floor: Go client start + connect + 2 syncs + fork/exec
#   nosync       the same without the syncs: what they cost is the difference
#   noexec       the Go client and its connection alone (the daemon replies
#                at once): what a Go command line costs
#   tsp -h       task-spooler's client alone, the C command line
set -euo pipefail
TREE=$(cd "$1" && pwd)
N=${RUNS:-200}
cd "$(dirname "$0")/.."
for c in tsp mkfs.ext4; do
  command -v "$c" >/dev/null || { echo "hotpath_floor: needs $c (apt-get install task-spooler e2fsprogs)"; exit 1; }
done
W=$(mktemp -d /tmp/rbfl.XXXX)
export TS_SOCKET=$W/tsp.sock TS_MAXFINISHED=10
truncate -s 3G "$W/fs.img"
mkfs.ext4 -q -F -O ^has_journal "$W/fs.img"
mkdir "$W/fs"
mount -o loop "$W/fs.img" "$W/fs"
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  pid=$(cat "$W/fs/home/daemon.lock" 2>/dev/null || true)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  tsp -K 2>/dev/null || true
  sleep 0.5
  umount "$W/fs" || true
  rm -rf "$W"
}
trap cleanup EXIT
go build -o /tmp/rbfl-abrun ./bench/abrun
CGO_ENABLED=0 go build -o "$W/fs/floor.built" ./bench/floor # static, as runbox is (make build)
mkdir -p "$W/fs/bin" "$W/fs/home"
cp "$W/fs/floor.built" "$W/fs/bin/floor" # see bench/hotpath.sh: not where the linker wrote it
cp "$TREE/bin/runbox" "$TREE/bin/runboxd" "$W/fs/bin/"
"$W/fs/bin/floor" serve "$W/fs/sync.sock" "$W/fs/sync" & pids+=($!)
"$W/fs/bin/floor" serve -nosync "$W/fs/nosync.sock" "$W/fs/nosync" & pids+=($!)
"$W/fs/bin/floor" serve -noexec "$W/fs/noexec.sock" "$W/fs/noexec" & pids+=($!)
"$W/fs/bin/runbox" run --home "$W/fs/home" --sandbox process -- true >/dev/null
sleep 3 # the daemon compiles its plugins once, then stays idle
echo "hotpath_floor: runbox $(git -C "$TREE" rev-parse --short HEAD), $(uptime | sed 's/.*load/load/')"
echo "== interleaved, $N runs each (medians)"
/tmp/rbfl-abrun -n "$N" -block 10 \
  'tsp -f true' \
  "$W/fs/bin/floor run $W/fs/sync.sock -- true" \
  "$W/fs/bin/floor run $W/fs/nosync.sock -- true" \
  "$W/fs/bin/floor run $W/fs/noexec.sock -- true" \
  'tsp -h' \
  "$W/fs/bin/runbox run --home $W/fs/home --sandbox process -- true" | sed "s|$W/fs/||g"
