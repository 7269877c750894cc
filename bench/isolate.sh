#!/usr/bin/env bash
# runbox run -- true at each isolation level, beside an older build's
# --isolate full and bubblewrap doing the same confinement (new user and
# network namespace, system directories read-only, the workspace writable,
# fresh /proc, /dev and /tmp), interleaved by bench/abrun:
#
#   bench/isolate.sh NEW_RUNBOX OLD_RUNBOX [RUNS]
#
# Run it as root and as an unprivileged user (e.g. `su USER -c ...`): the
# two take different paths (docs/RATIONALE.md, "Process runs are confined
# without root or Docker"). Each build gets a home (and warm daemon) of its
# own under a temp dir, removed at the end; the workspace is a temp dir.
set -euo pipefail
NEW=$1 OLD=$2 RUNS=${3:-300}
cd "$(dirname "$0")/.."
T=$(mktemp -d /tmp/rbiso.XXXX)
trap 'for h in "$T/hn" "$T/ho"; do kill "$(cat "$h/daemon.lock" 2>/dev/null)" 2>/dev/null || true; done; rm -rf "$T"' EXIT
go build -o "$T/abrun" ./bench/abrun
WS=$T/ws
mkdir -p "$WS"
cd "$WS"
BW="bwrap --unshare-user --unshare-net --die-with-parent --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --ro-bind /etc /etc --proc /proc --dev /dev --tmpfs /tmp --bind $WS $WS --chdir $WS true"
"$NEW" --home "$T/hn" run -- true >/dev/null 2>&1
"$OLD" --home "$T/ho" run -- true >/dev/null 2>&1
"$T/abrun" -n "$RUNS" -block 10 \
  "$NEW --home $T/hn run --isolate none -- true" \
  "$NEW --home $T/hn run --isolate fs -- true" \
  "$NEW --home $T/hn run --isolate full -- true" \
  "$OLD --home $T/ho run --isolate full -- true" \
  "$NEW --home $T/hn run --isolate none -- $BW" 2>/dev/null | sed "s| --symlink.*true | … |; s|$T/||g"
