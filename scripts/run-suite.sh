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
status=0
"$root/build/gpuoverlap" run --all --priority-fallback --out "$out" "$@" || status=$?
# Plot whatever was measured, also after a failure (its scenarios' files are written).
if [ -f "$out/run.json" ]; then
  /usr/bin/python3 "$root/plots/plot.py" "$out" >/dev/null
  "$root/build/gpuoverlap" report "$out" >/dev/null
fi
echo "plots: $out/plots   report: $out/report.md   (data and trace.json per scenario: $out/<scenario>/)"
exit "$status"
