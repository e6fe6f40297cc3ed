#!/usr/bin/env bash
# The poll clock's uncertainty on a GPU machine: `gpuoverlap selftest` with its defaults N times
# (default 3; the poller on a CPU of its own where there are 4 or more), with the poller
# unpinned (--poller-core none), with it raised (--poller-priority realtime), and the main job
# (`run --all --priority-fallback`) with the defaults and unpinned, once each; then
# bench/poll_windows_table.py and bench/phases_table.py: per self-test run,
# the undisturbed detection p50/p99, the disturbed share, the steal, the p99 of every stamp, the
# round trip and the overhead, and per scenario of the main job its windows and disturbed stamps.
# Everything lands in $OUT/poll-windows.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/poll_windows.sh [N]
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
runs=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
work="$out/poll-windows"
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap devices > "$work/devices.txt" 2>&1
for k in $(seq 1 "$runs"); do
  gpuoverlap selftest --out "$work/selftest-$k" > "$work/selftest-$k.log" 2>&1
  echo "selftest-$k exit $?" | tee -a "$work/runs.txt"
done
gpuoverlap selftest --poller-core none --out "$work/selftest-unpinned" \
  > "$work/selftest-unpinned.log" 2>&1
echo "selftest-unpinned exit $?" | tee -a "$work/runs.txt"
gpuoverlap selftest --poller-priority realtime --out "$work/selftest-realtime" \
  > "$work/selftest-realtime.log" 2>&1
echo "selftest-realtime exit $?" | tee -a "$work/runs.txt"
for placement in all all-unpinned; do
  args=()
  [ "$placement" = all-unpinned ] && args=(--poller-core none)
  start=$EPOCHREALTIME
  gpuoverlap run --all --priority-fallback "${args[@]}" --out "$work/$placement" \
    > "$work/$placement.log" 2>&1
  echo "$placement exit $? wall_s $(awk -v a="$start" -v b="$EPOCHREALTIME" \
    'BEGIN { printf "%.1f", b - a }')" | tee -a "$work/runs.txt"
done
python3 "$here/poll_windows_table.py" "$work" > "$work/table.md" 2>&1
python3 "$here/phases_table.py" "$work/all" "$work/all-unpinned" > "$work/phases.md" 2>&1
tar czf "$out/poll-windows.tar.gz" -C "$out" poll-windows && rm -rf "$work"
