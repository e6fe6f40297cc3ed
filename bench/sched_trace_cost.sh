#!/usr/bin/env bash
# What the kernel's record costs the main job, and how much of the frame loop's run delay it
# explains: `gpuoverlap run --all --priority-fallback`, PAIRS times with `--sched-trace` and
# PAIRS times without, interleaved (traced first), then OUT/table.md (bench/sched_trace_table.py):
# each run's wall time and size, and per study condition the frame loop's runnable time in the
# record against the kernel's schedstat run delay over the same frames, with its verdict.
# Usage, as root (tracefs), with the gpuoverlap binary on PATH:
#   OUT=OUT_DIR PAIRS=3 bench/sched_trace_cost.sh
set -u
out=${OUT:-/tmp/gpuoverlap-out}/sched-trace-cost
pairs=${PAIRS:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
: > "$out/runs.txt"
run_one() {
  local name=$1; shift
  local start=$EPOCHREALTIME status wall bytes
  gpuoverlap run --all --priority-fallback "$@" --out "$out/$name" > "$out/$name.log" 2>&1
  status=$?
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  bytes=$(du -sb "$out/$name" 2>/dev/null | cut -f1)
  printf '%s exit %d wall_s %s bytes %s\n' "$name" "$status" "$wall" "${bytes:-0}" |
    tee -a "$out/runs.txt"
}
for k in $(seq 1 "$pairs"); do
  run_one "traced-$k" --sched-trace
  run_one "plain-$k"
done
/usr/bin/python3 "$here/sched_trace_table.py" "$out" | tee "$out/table.md"
