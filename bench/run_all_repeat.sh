#!/usr/bin/env bash
# The main job, repeated: `gpuoverlap run --all --priority-fallback` N times (default 3), each
# into OUT/all-K with its log, then OUT/table.md from bench/run_all_table.py: per run the wall
# time, output size, the time of the study, the preemption matrix and the rest, the study's
# rounds, stop and decisions, and how well the progress lines' "about X left" held.
#
# Usage: bench/run_all_repeat.sh OUT_DIR [N] [extra gpuoverlap run options]
#        (the gpuoverlap binary on PATH)
set -uo pipefail
out=${1:?usage: run_all_repeat.sh OUT_DIR [N] [options]}
runs=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: > "$out/runs.txt"
for k in $(seq 1 "$runs"); do
  start=$EPOCHREALTIME
  gpuoverlap run --all --priority-fallback --out "$out/all-$k" "$@" > "$out/all-$k.log" 2>&1
  status=$?
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  bytes=$(du -sb "$out/all-$k" | cut -f1)
  printf 'all-%d exit %d wall_s %s bytes %s\n' "$k" "$status" "$wall" "$bytes" | tee -a "$out/runs.txt"
done
python3 "$here/run_all_table.py" "$out" | tee "$out/table.md"
