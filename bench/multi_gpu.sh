#!/usr/bin/env bash
# Every GPU of a host in one run (docs/multi-gpu.md), on a machine with two or more GPUs:
#   1. `run --all` on each device alone (--device N), wall time each;
#   2. `run --all --device all`, wall time, against the sum of the single runs;
#   3. its side-by-side report (rows marked apart: beyond both devices' 95 % intervals), and
#      `compare gpu0 gpu1` (an A/A between two GPUs of one model);
#   4. `history ingest` of one device's `run --all`, timed (the history's ingest goal).
# Keeps the reports, run.json files, summaries and logs (no per-frame records) in
# $OUT/multi-gpu.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root:
#   OUT=OUT_DIR bench/multi_gpu.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/multi-gpu"
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
timed all gpuoverlap run --all --priority-fallback --device all --out "$work/all"
timed report gpuoverlap report "$work/all"
timed compare gpuoverlap compare "$work/all/gpu0" "$work/all/gpu1"
timed ingest gpuoverlap history ingest "$work/single-0" --db "$work/history.sqlite"
timed ingest-all gpuoverlap history ingest "$work/all" --db "$work/history.sqlite"
gpuoverlap history list --machines --db "$work/history.sqlite" > "$work/machines.txt" 2>&1
echo "rows marked apart in the side-by-side report: $(grep -c '| \*\*yes\*\* |$' "$work/all/report.md")" \
  | tee -a "$summary"
# Keep what a reader needs, not the per-frame records.
find "$work" \( -name 'records.csv.gz' -o -name 'records.csv' -o -name 'trace.json' \
  -o -name 'history.sqlite*' \) -delete
tar czf "$out/multi-gpu.tar.gz" -C "$out" multi-gpu && rm -rf "$work"
