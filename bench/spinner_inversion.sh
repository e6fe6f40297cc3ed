#!/usr/bin/env bash
# The negative control's spinners under load (run as root, for --sched-trace): the neutrality
# study of the tests, 30 frames a round, with a second gpuoverlap running game-frame beside it
# as the load (two runs at once, as CI's parallel tests are); then who the spinners woke.
# Usage: bench/spinner_inversion.sh OUT [GPUOVERLAP]   (GPUOVERLAP: the binary, e.g. an ASan build)
set -euo pipefail
out=$1
bin=${2:-gpuoverlap}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
( while [ ! -e "$out/.done" ]; do
    gpuoverlap run game-frame --frames 300 --out "$out/load" >/dev/null 2>&1 || true
  done ) &
load=$!
ASAN_OPTIONS=detect_leaks=0 "$bin" run "$here/../tests/data/neutrality-study.toml" --frames 30 \
  --sched-trace --timeout-ms 120000 --out "$out/study" | tail -3
touch "$out/.done"
wait "$load"
/usr/bin/python3 "$here/spinner_wakeups.py" "$out/study"
