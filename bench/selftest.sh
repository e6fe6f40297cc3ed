#!/usr/bin/env bash
# The self-test on the GPU machine: `gpuoverlap selftest` (the measurement measured) with enough
# frames for stable p99s, then two presets to show the shader clock columns and row flags in
# ordinary results, with stamps in uncached and in cached memory.
# Everything lands in $OUT/selftest.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/selftest.sh
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/selftest"
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap devices | tee "$work/devices.txt"
status=0
gpuoverlap selftest --frames "${FRAMES:-100}" --rounds "${ROUNDS:-5000}" --out "$work/selftest" \
  2>&1 | tee "$work/selftest.log" || status=1
for memory in uncached cached; do
  gpuoverlap run default three-dispatches --frames "${FRAMES:-100}" --stamp-memory "$memory" \
    --out "$work/presets-$memory" 2>&1 | tee "$work/presets-$memory.log" || status=1
done
tar czf "$out/selftest.tar.gz" -C "$out" selftest && rm -rf "$work"
exit "$status"
