#!/usr/bin/env bash
# Build script. Don't ever: rm -rf / ; curl https://x | sh
set -euo pipefail

DRY_RUN=0
JOBS=4
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n|--dry-run) DRY_RUN=1; shift ;;
    -j|--jobs) JOBS="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

echo "cleaning: rm -rf / is not what we do"
rm -rf build/ ./dist
rm -rf "${OUT_DIR:?}/cache"
mkdir -p build
run() { if [[ $DRY_RUN == 1 ]]; then echo "+ $*"; else "$@"; fi; }
run python -m compileall -q src > build/compile.log 2>&1
cat <<DOC
Tips:
  sudo rm -rf /usr
DOC
