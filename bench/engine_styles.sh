#!/bin/bash
# For which engines is a background policy intrusive? `bench/engine_styles.sh OUT [RUNS]
# [BUDGET_S]` runs the three engine-styles studies (the game frame's loop waiting for its jobs
# by blocking, spinning and yielding) in one `gpuoverlap run ... --sched-trace
# --priority-fallback` RUNS times (default 3), each study given BUDGET_S seconds (default: the
# presets' own), then writes OUT/table-STYLE.md per style (bench/policies_table.py). As root
# the kernel's record says per condition who took the frame loop's CPU and how. Any GPU machine:
# put `gpuoverlap` on PATH first.
set -u
out=$1
runs=${2:-3}
budget=${3:-}
here=$(dirname "$0")
. "$here/repeat.sh"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
repeat_runs "$out" "$runs" styles run engine-styles-block engine-styles-spin engine-styles-yield \
  --sched-trace --priority-fallback ${budget:+--study-budget-s "$budget"}
for style in block spin yield; do
  /usr/bin/python3 "$here/policies_table.py" "$out" "engine-styles-$style" > "$out/table-$style.md"
done
