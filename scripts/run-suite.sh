#!/usr/bin/env bash
# The main job: install, build, then run every preset on the best device found (the first
# discrete GPU, else integrated, else lavapipe) and say where the results are.
# Extra arguments go to `gpuoverlap run` (e.g. --frames 20, --device 1).
# --priority-fallback: a queue priority the driver refuses (HIGH needs CAP_SYS_NICE on NVIDIA,
# lavapipe has none) is run at the granted one and recorded in meta.json, so the suite
# completes everywhere; `gpuoverlap run high-priority-compute` alone is strict.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" "$root/build" -DGPUOVERLAP_TESTS=OFF
out="$root/results/$(date +%Y%m%d-%H%M%S)"
"$root/build/gpuoverlap" run --all --priority-fallback --out "$out" "$@"
echo "suite done: per-scenario records.csv, summary.csv and meta.json are in $out"
