#!/usr/bin/env bash
# The non-intrusiveness study, repeated: does it decide, and the same way each time? Runs the
# preset N times (default 3) with the main job's options, each into OUT/study-K, and writes
# OUT/table.md with bench/study_table.py: per run, its wall time, output size, rounds and why
# it stopped; per run, condition and primary endpoint, the decision, the effect and its
# interval.
#
# Usage: bench/study_repeat.sh OUT_DIR [N] [extra gpuoverlap run options]
#        (the gpuoverlap binary on PATH)
set -uo pipefail
out=${1:?usage: study_repeat.sh OUT_DIR [N] [options]}
runs=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: > "$out/runs.txt"
for k in $(seq 1 "$runs"); do
  start=$EPOCHREALTIME
  gpuoverlap run non-intrusiveness --priority-fallback --out "$out/study-$k" "$@" \
    > "$out/study-$k.log" 2>&1
  status=$?
  wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  bytes=$(du -sb "$out/study-$k" | cut -f1)
  printf 'study-%d exit %d wall_s %s bytes %s\n' "$k" "$status" "$wall" "$bytes" | tee -a "$out/runs.txt"
done
python3 "$here/study_table.py" "$out" | tee "$out/table.md"
