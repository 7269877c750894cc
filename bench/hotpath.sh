#!/usr/bin/env bash
# The hot path side by side (issue 23): `runbox run --sandbox process --
# true` of two builds, each with a warm daemon, against task-spooler's
# `tsp -f true`, on this machine.
#
#   bench/hotpath.sh OLD_TREE NEW_TREE [interleaved|sustained|steps|all]
#
# Each TREE is a checkout with `make build` done. Each build's binaries and
# home go on a filesystem of its own, made fresh for the sitting: ext4
# without a journal, like this machine's root (HOTPATH_FS=journal for ext4
# with one, HOTPATH_FS=tmp for homes in /tmp). Fresh, because that kind of
# disk makes each file creation pass over the inodes freed in the last
# minutes, so what one build (or anything else on the disk) freed would
# slow the other down; of its own, so that one build's files cannot.
# The binaries are copied (cp), not used where the linker wrote them: a
# binary fresh from the linker starts ~0.2 ms slower here until rewritten.
#
#   interleaved  tsp, OLD and NEW in shuffled blocks of 10 (bench/abrun),
#                200 runs each: the comparison (medians)
#   sustained    1 000 runs of each build back to back, ms per run for each
#                100: does a build slow down as it goes
#   steps        where each millisecond goes, from kernel tracepoints
#                (perf; bench/hotpath_steps.py): no trace code in runbox
set -euo pipefail
OLD=$(cd "$1" && pwd)
NEW=$(cd "$2" && pwd)
what=${3:-all}
N=${RUNS:-200}
cd "$(dirname "$0")/.."
for c in tsp perf mkfs.ext4; do
  command -v "$c" >/dev/null || { echo "hotpath: needs $c (apt-get install task-spooler linux-perf e2fsprogs)"; exit 1; }
done
go build -o /tmp/rbhp-abrun ./bench/abrun
W=$(mktemp -d /tmp/rbhp.XXXX)
export TS_SOCKET=$W/tsp.sock TS_MAXFINISHED=10

mkhome() { # name tree
  local d=$W/$1
  mkdir -p "$d"
  case ${HOTPATH_FS:-nojournal} in
    tmp) ;;
    journal) truncate -s 3G "$W/$1.img"; mkfs.ext4 -q -F "$W/$1.img"; mount -o loop "$W/$1.img" "$d" ;;
    *) truncate -s 3G "$W/$1.img"; mkfs.ext4 -q -F -O ^has_journal "$W/$1.img"; mount -o loop "$W/$1.img" "$d" ;;
  esac
  mkdir -p "$d/bin" "$d/home"
  cp "$2/bin/runbox" "$2/bin/runboxd" "$d/bin/"
  "$d/bin/runbox" run --home "$d/home" --sandbox process -- true >/dev/null
}
cleanup() {
  for b in old new; do
    pid=$(cat "$W/$b/home/daemon.lock" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  tsp -K 2>/dev/null || true
  sleep 0.5
  for b in old new; do mountpoint -q "$W/$b" && umount "$W/$b"; done
  rm -rf "$W"
}
trap cleanup EXIT
mkhome old "$OLD"
mkhome new "$NEW"
sleep 3 # each daemon compiles its plugins once, then stays idle
cmd() { echo "$W/$1/bin/runbox run --home $W/$1/home --sandbox process -- true"; }
echo "hotpath: OLD $(git -C "$OLD" rev-parse --short HEAD) NEW $(git -C "$NEW" rev-parse --short HEAD), fs ${HOTPATH_FS:-nojournal}, $(uptime | sed 's/.*load/load/')"

interleaved() {
  echo "== interleaved, $N runs each (medians)"
  /tmp/rbhp-abrun -n "$N" -block 10 'tsp -f true' "$(cmd old)" "$(cmd new)" | sed "s|$W/||g"
}

sustained() {
  echo "== sustained: ms per run, each 100 of ${SUSTAINED:-1000} back to back (new first: on a shared disk what old frees would slow new)"
  for b in new old; do
    read -ra c <<<"$(cmd $b)"
    line="$b:"
    for _ in $(seq $((${SUSTAINED:-1000} / 100))); do
      s=$(date +%s%N)
      for _ in $(seq 100); do "${c[@]}" >/dev/null; done
      e=$(date +%s%N)
      line+=" $(awk -v d=$((e - s)) 'BEGIN{printf "%.2f", d/1e8}')"
    done
    echo "$line"
  done
}

steps() {
  echo "== steps (perf tracepoints, medians of 60 runs each)"
  ev=sched:sched_process_exec,sched:sched_process_exit,syscalls:sys_enter_connect,syscalls:sys_exit_accept4
  ev+=,syscalls:sys_enter_fdatasync,syscalls:sys_exit_fdatasync,syscalls:sys_enter_clone3,syscalls:sys_enter_exit_group
  for b in old new; do
    perf record -q -a -e "$ev" -o "$W/$b.perf" -- sh -c "for i in \$(seq 62); do $(cmd $b) >/dev/null; done" >/dev/null 2>&1
    perf script -i "$W/$b.perf" -F comm,tid,time,event,trace 2>/dev/null >"$W/$b.txt"
    python3 bench/hotpath_steps.py "$W/$b.txt" "$b"
  done
}

case $what in
  interleaved | sustained | steps) $what ;;
  all) interleaved; steps; sustained ;;
  *) echo "usage: bench/hotpath.sh OLD_TREE NEW_TREE [interleaved|sustained|steps|all]"; exit 2 ;;
esac
