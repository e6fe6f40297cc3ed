#!/usr/bin/env bash
# What a CPU of the poller's own does to the study: the non-intrusiveness preset with the
# poller unpinned (the default) and with `--poller-core 0` (pinned, the process's other
# threads kept off that CPU), each with bench/thread_sampler.py sampling every thread of the
# process every 100 ms (state, policy, CPU, CPU time), then bench/phases_table.py on both.
# Everything lands in $OUT/poller-reservation.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/poller_reservation.sh [EXTRA RUN ARGUMENTS...]
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
here=$(cd "$(dirname "$0")" && pwd)
work="$out/poller-reservation"
mkdir -p "$work"
nproc > "$work/nproc.txt"
for placement in default core0; do
  args=()
  [ "$placement" = core0 ] && args=(--poller-core 0)
  start=$EPOCHREALTIME
  gpuoverlap run non-intrusiveness --priority-fallback "${args[@]}" "$@" \
    --out "$work/$placement" > "$work/$placement.log" 2>&1 &
  pid=$!
  python3 "$here/thread_sampler.py" "$pid" 0.1 > "$work/$placement-threads.csv"
  wait "$pid"
  echo "$placement exit $? wall_s $(awk -v a="$start" -v b="$EPOCHREALTIME" \
    'BEGIN { printf "%.1f", b - a }')" | tee -a "$work/runs.txt"
done
python3 "$here/phases_table.py" "$work/default" "$work/core0" > "$work/phases.md" 2>&1
tar czf "$out/poller-reservation.tar.gz" -C "$out" poller-reservation && rm -rf "$work"
