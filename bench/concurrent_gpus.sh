#!/usr/bin/env bash
# Every GPU of a host at once (docs/multi-gpu.md, "All devices at once"), on a machine with two
# or more GPUs:
#   1. `run --all` on each device alone (--device N), wall time each;
#   2. `run --all --device all --concurrent`, wall time, against the slowest single run;
#   3. the frame presets with `--concurrency-rounds`: each device together against alone, a
#      verdict per device and preset (does one GPU's work disturb another's);
#   4. `report` of both (side by side, the concurrency answer).
# Keeps reports, run.json files, verdicts, summaries and logs (no per-frame records) in
# $OUT/concurrent-gpus.tar.gz. ROUNDS (default 6) and FRAMES (default 1200, per condition over
# all rounds) size step 3.
# Usage, with the gpuoverlap binary on PATH, from the repository root:
#   OUT=OUT_DIR bench/concurrent_gpus.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/concurrent-gpus"
mkdir -p "$work"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap devices > "$work/devices.txt" 2>&1
summary="$work/summary.txt"
# shellcheck source=bench/timed.sh
. "$(dirname "$0")/timed.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
for ((i = 0; i < gpus; i++)); do
  timed "single-$i" gpuoverlap run --all --priority-fallback --device "$i" --out "$work/single-$i"
done
timed concurrent gpuoverlap run --all --priority-fallback --device all --concurrent \
  --out "$work/concurrent"
timed report-concurrent gpuoverlap report "$work/concurrent"
# The presets whose frames overlap work (studies and preemption are not part of the question).
presets="default default-legacy default-enhanced default-enhanced-sync-all default-split-collapsed
  default-split-event no-barriers three-dispatches three-dispatches-legacy three-dispatches-enhanced
  three-dispatches-split-event barrier-cost cross-queue-fence high-priority-compute game-frame"
# shellcheck disable=SC2086
timed neighbours gpuoverlap run $presets --priority-fallback --device all --concurrent \
  --concurrency-rounds "${ROUNDS:-6}" --frames "${FRAMES:-1200}" --out "$work/neighbours"
timed report-neighbours gpuoverlap report "$work/neighbours"
{
  echo "verdicts of the studies of neighbours (together against alone), per device:"
  for verdict in "$work"/neighbours/gpu*/*/verdict.json; do
    /usr/bin/python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
c = v["conditions"][0]
print("  %s: %s (%s rounds)" % (sys.argv[2], c["verdict"], v["progress"]["rounds_run"]))' \
      "$verdict" "${verdict#"$work"/neighbours/}"
  done
} | tee -a "$summary"
find "$work" \( -name 'records.csv.gz' -o -name 'records.csv' -o -name 'trace.json' \) -delete
tar czf "$out/concurrent-gpus.tar.gz" -C "$out" concurrent-gpus && rm -rf "$work"
