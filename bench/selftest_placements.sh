#!/usr/bin/env bash
# The self-test's poll detection by where the poller runs: the defaults N times (default 3;
# the poller on the quietest CPU of its own), then at --poller-priority realtime, on CPU 0
# (--poller-core 0) and unpinned (--poller-core none), with /proc/interrupts before and after;
# then bench/poll_windows_table.py. Everything lands in $OUT/selftest-placements.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/selftest_placements.sh [N]
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
runs=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
work="$out/selftest-placements"
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$work/nvidia-smi.csv" 2>&1
cat /proc/interrupts > "$work/interrupts-before.txt" 2>&1
selftest() {
  local name=$1
  shift
  gpuoverlap selftest "$@" --out "$work/selftest-$name" > "$work/selftest-$name.log" 2>&1
  echo "selftest-$name exit $?" | tee -a "$work/runs.txt"
}
for k in $(seq 1 "$runs"); do selftest "$k"; done
selftest realtime --poller-priority realtime
selftest cpu0 --poller-core 0
selftest unpinned --poller-core none
cat /proc/interrupts > "$work/interrupts-after.txt" 2>&1
python3 "$here/poll_windows_table.py" "$work" > "$work/table.md" 2>&1
tar czf "$out/selftest-placements.tar.gz" -C "$out" selftest-placements && rm -rf "$work"
