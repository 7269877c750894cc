#!/usr/bin/env bash
# Side-by-side benchmarks for BENCHMARKS.md. Every comparison runs in one
# invocation so the ratio is meaningful on a shared, noisy machine.
#
#   make build && bench/run.sh [startup|throughput|idle|docker|analyze|all]
#
# Needs hyperfine (apt-get install hyperfine) and python3; the docker part
# needs a Docker daemon and busybox-static.
set -euo pipefail
cd "$(dirname "$0")/.."
RB=$PWD/bin/runbox
OUT=${BENCH_OUT:-/tmp/runbox-bench}
mkdir -p "$OUT"
# A home of its own, removed at the end: the throughput runs leave a GiB
# of run log each behind.
own_home=
if [ -z "${RUNBOX_HOME:-}" ]; then
  RUNBOX_HOME=$(mktemp -d /tmp/rbbench.XXXX)
  own_home=$RUNBOX_HOME
fi
export RUNBOX_HOME
what=${1:-all}
# The interpreter itself, not a version-manager shim (pyenv's shims are
# shell scripts that would triple Python's start-up time).
PY=$(python3 -c 'import sys; print(sys.executable)')

command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (apt-get install hyperfine)"; exit 1; }

stop_daemon() {
  local pid
  pid=$(cat "$RUNBOX_HOME/daemon.lock" 2>/dev/null || true)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  sleep 0.5
}
cleanup() {
  stop_daemon
  [ -n "$own_home" ] && rm -rf "$own_home"
  return 0
}
trap cleanup EXIT

startup() {
  echo "== runbox run -- true (warm daemon) vs bare exec vs python subprocess.run harness"
  "$RB" run --sandbox process -- true # start and warm the daemon
  hyperfine -N --warmup 5 --runs ${RUNS:-50} --export-json "$OUT/startup.json" \
    -n 'bare exec: true' 'true' \
    -n 'python harness: true' "$PY bench/harness.py $OUT/harness -- true" \
    -n 'runbox run -- true' "$RB run --sandbox process -- true"
}

throughput() {
  echo "== a child writing 1 GiB of 60-byte lines: through runbox vs redirected to a file"
  local child="yes 12345678901234567890123456789012345678901234567890123456789 | head -c 1073741824"
  # --prepare drops the logs of the runs before (a GiB each) so that the
  # benchmark needs a few GiB of disk, not one per run.
  hyperfine --warmup 1 --runs ${RUNS_TP:-5} --export-json "$OUT/throughput.json" \
    --prepare "find $RUNBOX_HOME/runs -name output.log -size +64M -delete 2>/dev/null; rm -f $OUT/direct.out $OUT/attached.out" \
    -n 'child > file' "sh -c '$child' > $OUT/direct.out" \
    -n 'runbox run (attached) > file' "$RB run --sandbox process -- sh -c '$child' > $OUT/attached.out" \
    -n 'runbox run -d + wait (stored only)' "$RB wait \$($RB run -d --sandbox process -- sh -c '$child')"
  rm -f "$OUT/direct.out" "$OUT/attached.out"
}

idle() {
  echo "== daemon RSS when idle"
  "$RB" run --sandbox process -- true >/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do "$RB" run --sandbox process -- true >/dev/null; done
  sleep 50 # past the 30 s after which an idle daemon unloads its plugins, and the scavenger returning the memory
  local pid
  pid=$(cat "$RUNBOX_HOME/daemon.lock")
  grep -E 'VmRSS|VmHWM' /proc/"$pid"/status | tee "$OUT/idle.txt"
}

docker_bench() {
  local img=runbox-bench-busybox ctx n=${SEQ_N:-10000000}
  if ! docker image inspect "$img" >/dev/null 2>&1; then
    ctx=$(mktemp -d); cp /bin/busybox "$ctx/"
    printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox","--install","-s","/bin"]\n' >"$ctx/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "$img" "$ctx" >/dev/null
  fi
  stop_daemon
  "$RB" run --sandbox docker --image "$img" -- true
  [ "${DOCKER_PART:-}" = true ] || docker_seq
  [ "${DOCKER_PART:-}" = seq ] || docker_true
}

docker_seq() {
  echo "== output: seq 1 $n in a container, to a file"
  hyperfine --warmup 1 --runs ${RUNS_DOCKER_SEQ:-5} --export-json "$OUT/docker-seq.json" \
    -n 'docker run --rm IMAGE seq > file' "docker run --rm --network none $img seq 1 $n > $OUT/docker.out" \
    -n 'runbox run --sandbox docker IMAGE -- seq > file (attached)' "$RB run --sandbox docker --image $img -- seq 1 $n > $OUT/attached.out" \
    -n 'runbox run -d … + wait (stored only)' "$RB wait \$($RB run -d --sandbox docker --image $img -- seq 1 $n) > /dev/null" \
    -n 'reference: docker run --rm IMAGE sh -c "seq > /dev/null"' "docker run --rm --network none $img sh -c 'seq 1 $n > /dev/null'"
  cmp "$OUT/docker.out" "$OUT/attached.out" && echo "outputs identical ($(wc -c <"$OUT/docker.out") bytes)"
  rm -f "$OUT/docker.out" "$OUT/attached.out"
}

docker_true() {
  echo "== true: warm pool (--prepare, unmeasured, gives the pool time to refill; same for both)"
  hyperfine -N --prepare 'sleep 1' --warmup 2 --runs ${RUNS_DOCKER:-20} --export-json "$OUT/docker-pool.json" \
    -n 'docker run --rm IMAGE true' "docker run --rm --network none $img true" \
    -n 'runbox run --sandbox docker IMAGE -- true (pool warm)' "$RB run --sandbox docker --image $img -- true"
  echo "== true: no pool (RUNBOX_DOCKER_POOL=0)"
  stop_daemon
  RUNBOX_DOCKER_POOL=0 "$RB" run --sandbox docker --image "$img" -- true
  hyperfine -N --prepare 'sleep 1' --warmup 2 --runs ${RUNS_DOCKER:-20} --export-json "$OUT/docker-nopool.json" \
    -n 'docker run --rm IMAGE true' "docker run --rm --network none $img true" \
    -n 'runbox run --sandbox docker IMAGE -- true (no pool)' "$RB run --sandbox docker --image $img -- true"
  stop_daemon
}

analyze_bench() {
  echo "== runbox analyze on a small log: warm compilation cache, and first run ever"
  local log=plugins/builtin/classify/testdata
  local f
  f=$(ls $log/*.log 2>/dev/null | head -1 || true)
  [ -n "$f" ] || { f=$OUT/small.log; printf 'Traceback (most recent call last):\n  File "t.py", line 1, in <module>\nModuleNotFoundError: No module named '"'"'torch'"'"'\n' >"$f"; }
  # A failed run's log with progress in it too: both kinds of plugin load.
  local g=plugins/builtin/progress/testdata/tqdm_basic.log
  "$RB" analyze --json "$f" >/dev/null
  "$RB" analyze --json "$g" >/dev/null
  hyperfine -N --warmup 3 --runs ${RUNS:-30} --export-json "$OUT/analyze.json" \
    -n 'runbox analyze (warm cache)' "$RB analyze --json $f" \
    -n 'runbox analyze, log with progress (warm cache)' "$RB analyze --json $g"
  hyperfine --runs 5 --export-json "$OUT/analyze-cold.json" \
    --prepare "rm -rf $RUNBOX_HOME/cache" \
    -n 'runbox analyze (first run ever: empty cache)' "$RB analyze --json $f"
}

case $what in
  startup) startup ;;
  throughput) throughput ;;
  idle) idle ;;
  docker) docker_bench ;;
  analyze) analyze_bench ;;
  all) startup; throughput; idle; analyze_bench; docker info >/dev/null 2>&1 && docker_bench ;;
  *) echo "unknown benchmark $what"; exit 2 ;;
esac
