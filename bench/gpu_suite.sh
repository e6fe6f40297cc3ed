#!/usr/bin/env bash
# The foundation measurement on the GPU machine: devices, then MJP's five presets at 100
# frames each (10 warm-up), strict priorities (the machine runs as root, so HIGH is granted),
# twice: with timestamp queries (poll + ts clocks) and with --no-timestamps (poll clock only,
# because an end-of-workload timestamp can serialise a queue).
# Everything lands in one file, $OUT/gpu-suite.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/gpu_suite.sh [extra gpuoverlap run options]
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/gpu-suite"
mkdir -p "$work"
presets=(default no-barriers three-dispatches three-dispatches-split-event high-priority-compute)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap devices | tee "$work/devices.txt"
status=0
gpuoverlap run "${presets[@]}" --frames "${FRAMES:-100}" --out "$work/with-timestamps" "$@" \
  2>&1 | tee "$work/with-timestamps.log" || status=1
gpuoverlap run "${presets[@]}" --frames "${FRAMES:-100}" --no-timestamps --out "$work/poll-only" "$@" \
  2>&1 | tee "$work/poll-only.log" || status=1
tar czf "$out/gpu-suite.tar.gz" -C "$out" gpu-suite && rm -rf "$work"
exit "$status"
