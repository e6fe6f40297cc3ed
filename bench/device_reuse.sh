#!/bin/bash
# Does running a scenario on an idle device an earlier one created change what it measures?
# Every preset outside the study (and the preemption matrix, whose cells create their own
# devices in both modes: an A/A comparison beside the rest), RUNS times in each mode,
# alternating: the default (idle devices reused) and --device-per-scenario. The table
# (device_reuse_table.py) sets each scenario's difference between the modes beside its spread
# within a mode.
#
# Usage: OUT=DIR [RUNS=3] bench/device_reuse.sh      (gpuoverlap on PATH, or a function)
set -u
out=${OUT:?set OUT to a results folder}
runs=${RUNS:-3}
mkdir -p "$out"
presets=$(gpuoverlap list | awk '{print $1}' | grep -v -e '^non-intrusiveness$' -e '^preemption-')
: > "$out/runs.txt"
for k in $(seq 1 "$runs"); do
  for mode in reuse fresh; do
    flag=
    [ "$mode" = fresh ] && flag=--device-per-scenario
    start=$EPOCHREALTIME
    # shellcheck disable=SC2086
    gpuoverlap run $presets preemption-matrix --priority-fallback $flag --out "$out/$mode-$k" \
      > "$out/$mode-$k.log" 2>&1
    status=$?
    wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    echo "$mode-$k exit $status wall_s $wall" | tee -a "$out/runs.txt"
  done
done
