#!/usr/bin/env bash
# Submitting a sweep of N members (default 1000) to a warm daemon: time until
# `runbox sweep` returns (every member created and queued), then the store's
# size. Members run `sleep 600` under --parallel 1, so at most one runs while
# the rest queue; the sweep is stopped at the end. Run from the repository's
# root, the sweep's workspace is the repository: members take a --snapshot by
# default, one copy per sweep (sweeps/ID/snapshot), each member's own made
# as it starts (runs/ID/snapshot).
#
#   bench/sweep.sh [N] [REPEATS]
#   SWEEP_FLAGS=--no-snapshot bench/sweep.sh ...   (flags added to runbox sweep)
set -euo pipefail
N=${1:-1000}
REPEATS=${2:-3}
cd "$(dirname "$0")/.."
R=$PWD/bin/runbox
[ -x "$R" ] || { echo "sweep: make build first"; exit 1; }
vals=$(seq -s, 1 "$N")
for rep in $(seq 1 "$REPEATS"); do
  H=$(mktemp -d /tmp/rbsweep.XXXX)
  export RUNBOX_HOME=$H RUNBOX_PLUGINS=$H/plugins RUNBOX_NO_DOCKER=1
  "$R" run -- true >/dev/null # a warm daemon
  before=$(du -sk "$H/store" | cut -f1)
  t0=$(date +%s.%N)
  id=$("$R" sweep ${SWEEP_FLAGS:-} --sandbox process --param i="$vals" --parallel 1 -- sleep 600)
  t1=$(date +%s.%N)
  t2=$(date +%s.%N)
  queued=$("$R" sweep status "$id" --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(c.get("queued",0)+c.get("running",0)+c.get("preparing",0))')
  t3=$(date +%s.%N)
  after=$(du -sk "$H/store" | cut -f1)
  runs=$(du -sk "$H/runs" | cut -f1)
  sweeps=$(du -sk "$H/sweeps" 2>/dev/null | cut -f1 || echo 0) # the sweep's one snapshot of the workspace
  "$R" sweep stop "$id" >/dev/null
  printf 'rep %d: %d members: submit %.2f s (%.2f ms/member), %d queued or running; sweep status %.2f s; store +%d KiB (%.1f KiB/member), runs/ %d KiB, sweeps/ %d KiB\n' \
    "$rep" "$N" "$(echo "$t1 - $t0" | bc)" "$(echo "($t1 - $t0) * 1000 / $N" | bc -l)" "$queued" "$(echo "$t3 - $t2" | bc)" \
    "$((after - before))" "$(echo "($after - $before) / $N" | bc -l)" "$runs" "${sweeps:-0}"
  pid=$(cat "$H/daemon.lock" 2>/dev/null || true)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  sleep 1
  rm -rf "$H"
done
