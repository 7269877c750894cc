#!/usr/bin/env bash
# Two builds of runbox side by side, each with a home (and warm daemon) of
# its own, in one hyperfine invocation per figure, so the ratio means
# something on a shared machine:
#
#   bench/ab.sh OLD_TREE NEW_TREE [startup|throughput|analyze|idle|progress|all]
#
# Each TREE is a checkout with `make build` done (bin/runbox, bin/runboxd);
# the progress figure builds each tree's plugins test binary.
set -euo pipefail
OLD=$(cd "$1" && pwd)
NEW=$(cd "$2" && pwd)
what=${3:-all}
OUT=${BENCH_OUT:-/tmp/runbox-ab}
mkdir -p "$OUT"
HO=$(mktemp -d /tmp/rbab-old.XXXX)
HN=$(mktemp -d /tmp/rbab-new.XXXX)
PY=$(python3 -c 'import sys; print(sys.executable)')
cd "$NEW"
command -v hyperfine >/dev/null || { echo "ab: needs hyperfine (apt-get install hyperfine)"; exit 1; }

old() { env RUNBOX_HOME="$HO" RUNBOX_PLUGINS="$HO/plugins" "$OLD/bin/runbox" "$@"; }
new() { env RUNBOX_HOME="$HN" RUNBOX_PLUGINS="$HN/plugins" "$NEW/bin/runbox" "$@"; }
stop() {
  for h in "$HO" "$HN"; do
    pid=$(cat "$h/daemon.lock" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  sleep 0.5
}
cleanup() { stop; rm -rf "$HO" "$HN"; }
trap cleanup EXIT

startup() {
  echo "== runbox run -- true, warm daemons: old vs new (and the Python harness)"
  old run --sandbox process -- true
  new run --sandbox process -- true
  hyperfine -N --warmup 5 --runs "${RUNS:-100}" --export-json "$OUT/startup.json" \
    -n 'python harness' "$PY bench/harness.py $OUT/harness -- true" \
    -n old "env RUNBOX_HOME=$HO $OLD/bin/runbox run --sandbox process -- true" \
    -n new "env RUNBOX_HOME=$HN $NEW/bin/runbox run --sandbox process -- true"
}

throughput() {
  echo "== 1 GiB of 60-byte lines: child > file, old and new (detached + wait, attached)"
  local child="yes 12345678901234567890123456789012345678901234567890123456789 | head -c 1073741824"
  hyperfine --warmup 1 --runs "${RUNS_TP:-3}" --export-json "$OUT/throughput.json" \
    --prepare "find $HO/runs $HN/runs -name output.log -size +64M -delete 2>/dev/null; rm -f $OUT/*.out" \
    -n 'child > file' "sh -c '$child' > $OUT/direct.out" \
    -n 'old -d + wait' "env RUNBOX_HOME=$HO $OLD/bin/runbox wait \$(env RUNBOX_HOME=$HO $OLD/bin/runbox run -d --sandbox process -- sh -c '$child')" \
    -n 'new -d + wait' "env RUNBOX_HOME=$HN $NEW/bin/runbox wait \$(env RUNBOX_HOME=$HN $NEW/bin/runbox run -d --sandbox process -- sh -c '$child')" \
    -n 'old attached' "env RUNBOX_HOME=$HO $OLD/bin/runbox run --sandbox process -- sh -c '$child' > $OUT/old.out" \
    -n 'new attached' "env RUNBOX_HOME=$HN $NEW/bin/runbox run --sandbox process -- sh -c '$child' > $OUT/new.out"
  rm -f "$OUT"/*.out
}

analyze() {
  echo "== runbox analyze: a failed run's log and a log with progress, warm cache and first run ever"
  local f=plugins/builtin/classify/testdata/cuda_oom_torch_new.log
  local g=plugins/builtin/progress/testdata/tqdm_basic.log
  old analyze --json "$f" >/dev/null; new analyze --json "$f" >/dev/null
  hyperfine -N --warmup 3 --runs "${RUNS:-30}" --export-json "$OUT/analyze.json" \
    -n 'old, failed log' "env RUNBOX_HOME=$HO $OLD/bin/runbox analyze --json $f" \
    -n 'new, failed log' "env RUNBOX_HOME=$HN $NEW/bin/runbox analyze --json $f" \
    -n 'old, log with progress' "env RUNBOX_HOME=$HO $OLD/bin/runbox analyze --json --exit-code 0 $g" \
    -n 'new, log with progress' "env RUNBOX_HOME=$HN $NEW/bin/runbox analyze --json --exit-code 0 $g"
  hyperfine --runs 5 --export-json "$OUT/analyze-cold.json" \
    --prepare "rm -rf $HO/cache $HN/cache" \
    -n 'old, first run ever' "env RUNBOX_HOME=$HO $OLD/bin/runbox analyze --json $f" \
    -n 'new, first run ever' "env RUNBOX_HOME=$HN $NEW/bin/runbox analyze --json $f"
}

idle() {
  echo "== daemon RSS after 11 runs and 50 s idle, old and new side by side"
  for _ in $(seq 11); do old run --sandbox process -- true >/dev/null; new run --sandbox process -- true >/dev/null; done
  sleep 50
  for n in old new; do
    h=$HO; [ $n = new ] && h=$HN
    echo "$n: $(grep -E 'VmRSS' /proc/"$(cat "$h/daemon.lock")"/status)"
  done | tee "$OUT/idle.txt"
}

progress() {
  echo "== progress lines/s through the wasm plugin, call timeouts on: old and new test binaries alternately"
  (cd "$OLD" && go test -c -o "$OUT/old-plugins.test" ./plugins)
  (cd "$NEW" && go test -c -o "$OUT/new-plugins.test" ./plugins)
  for _ in 1 2; do
    for n in old new; do
      tree=$OLD; [ $n = new ] && tree=$NEW
      echo "$n: $(cd "$tree/plugins" && "$OUT/$n-plugins.test" -test.run '^$' -test.bench 'ProgressWasm/interrupt=true' -test.benchtime 2s | grep -o '[0-9.]* lines/s')"
    done
  done | tee "$OUT/progress.txt"
}

case $what in
  startup) startup ;;
  throughput) throughput ;;
  analyze) analyze ;;
  idle) idle ;;
  progress) progress ;;
  all) startup; analyze; progress; idle; throughput ;;
  *) echo "usage: bench/ab.sh OLD NEW [startup|throughput|analyze|idle|progress|all]"; exit 2 ;;
esac
