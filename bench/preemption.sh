#!/usr/bin/env bash
# Preemption on the GPU machine: preemption-matrix (4 loads x NORMAL/HIGH/REALTIME
# urgent COMPUTE queue) in one process, then with --load-process (the load in a second
# gpuoverlap process). DURATION ms of urgent submissions per configuration (default 3000).
# --priority-fallback records a refused priority instead of stopping (the GPU machine runs as
# root, which NVIDIA grants HIGH and REALTIME). Tables: bench/preemption_table.py.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/preemption.sh [extra gpuoverlap run options]
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/preemption"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv \
  > "$work/nvidia-smi.csv" 2>&1
id > "$work/user.txt"
status=0
for mode in same separate; do
  args=(run preemption-matrix --duration-ms "${DURATION:-3000}" --priority-fallback
        --out "$work/$mode")
  [ "$mode" = separate ] && args+=(--load-process)
  echo "== gpuoverlap ${args[*]}" | tee "$work/$mode.log"
  gpuoverlap "${args[@]}" "$@" >> "$work/$mode.log" 2>&1 || status=1
  tail -n 22 "$work/$mode.log"
done
python3 "$here/preemption_table.py" "$work/same" "$work/separate" > "$work/table.md" || status=1
cat "$work/table.md"
# A preemption run's records are one row per submission (a few hundred): all of it is kept.
du -sh "$work"
tar czf "$out/preemption.tar.gz" -C "$out" preemption && rm -rf "$work"
exit $status
