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
# gpuoverlap refuses an --out that holds files: a run started in the same second gets -2, -3...
base=$out
n=2
while [ -e "$out" ]; do
  out="$base-$n"
  n=$((n + 1))
done
status=0
# Every completed run is kept in the results history beside the results (docs/history.md).
"$root/build/gpuoverlap" run --all --priority-fallback --out "$out" \
  --history "${GPUOVERLAP_DB:-$root/results/history.sqlite}" "$@" || status=$?
# Plot and report whatever was measured, also after a failure (its scenarios' files are
# written). A plot or report that fails is said, and fails the job, after the other is made.
if [ -f "$out/run.json" ]; then
  echo "drawing plots and writing the report..." >&2
  /usr/bin/python3 "$root/plots/plot.py" "$out" >/dev/null || status=1
  "$root/build/gpuoverlap" report "$out" >/dev/null || status=1
fi
echo "report: $out/report.md (answers first; every scenario: report-details.md)   plots: $out/plots   data and trace.json.gz per scenario: $out/<scenario>/"
echo "browse every frame: $root/build/gpuoverlap view $out   (needs a display; see docs/viewer.md)"
echo "this machine's runs so far: $root/build/gpuoverlap history list --db ${GPUOVERLAP_DB:-$root/results/history.sqlite}"
exit "$status"
