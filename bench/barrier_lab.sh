#!/usr/bin/env bash
# The barrier lab on the GPU machine: the barrier variants of three-dispatches and
# default, barrier-cost, cross-queue-fence, the texture presets, upload-copy, readback,
# aliasing-handover and depth-prepass with their legacy twins
# (PRESETS overrides the list), 200 frames each
# (FRAMES overrides), twice: with
# timestamp queries (poll + ts + clk clocks) and with --no-timestamps (an end-of-workload
# timestamp serialises an H100 queue, which would hide whether a split barrier lets B overlap
# C). Everything lands in $OUT/barrier-lab.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/barrier_lab.sh [extra gpuoverlap run options]
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/barrier-lab"
mkdir -p "$work"
variants=(legacy split-event split-collapsed enhanced enhanced-sync-all)
presets=(three-dispatches barrier-cost cross-queue-fence)
for v in "${variants[@]}"; do presets+=("three-dispatches-$v" "default-$v"); done
for t in mip-chain render-target-discard texture-read-after-render texture-rewrite upload-copy \
  upload-texture readback aliasing-handover depth-prepass; do presets+=("$t" "$t-legacy"); done
# PRESETS="barrier-cost ..." runs only those.
if [ -n "${PRESETS:-}" ]; then read -r -a presets <<< "$PRESETS"; fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap devices | tee "$work/devices.txt"
status=0
gpuoverlap run "${presets[@]}" --frames "${FRAMES:-200}" --out "$work/with-timestamps" "$@" \
  2>&1 | tail -n 400 > "$work/with-timestamps.log" || status=1
gpuoverlap run "${presets[@]}" --frames "${FRAMES:-200}" --no-timestamps --out "$work/poll-only" "$@" \
  2>&1 | tail -n 400 > "$work/poll-only.log" || status=1
# report.md, question 3: each scenario against its legacy twin, with a 95 % interval and the
# A/A margin.
gpuoverlap report "$work/with-timestamps" > /dev/null 2>&1 || status=1
gpuoverlap report "$work/poll-only" > /dev/null 2>&1 || status=1
# Only the small files: records.csv.gz of 200 frames x 20 workloads is kept too (it is the data).
tar czf "$out/barrier-lab.tar.gz" -C "$out" barrier-lab && rm -rf "$work"
exit "$status"
