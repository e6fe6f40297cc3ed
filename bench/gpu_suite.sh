#!/usr/bin/env bash
# The foundation measurement on the GPU machine: devices, then MJP's five presets at 100
# frames each (10 warm-up), strict priorities (the machine runs as root, so HIGH is granted).
# Everything lands in $OUT/suite.tar.gz (the device tool returns at most 8 files).
# Run from the repository root through the bundle:
#   .devbundle/run bash .devbundle/bench/gpu_suite.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
mkdir -p "$out/suite"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$out/suite/nvidia-smi.csv" 2>&1
gpuoverlap devices | tee "$out/suite/devices.txt"
gpuoverlap run default no-barriers three-dispatches three-dispatches-split high-priority-compute \
  --frames "${FRAMES:-100}" --out "$out/suite" "$@" 2>&1 | tee "$out/suite/run.log"
status=${PIPESTATUS[0]}
tar czf "$out/suite.tar.gz" -C "$out" suite && rm -rf "$out/suite"
exit "$status"
