#!/usr/bin/env bash
# Every GPU of a host at once (docs/multi-gpu.md, "All devices at once"), on a machine with two
# or more GPUs:
#   1. `run --all` on each device alone (--device N), wall time each;
#   2. `run --all --device all --concurrent`, wall time, against the slowest single run;
#   3. the frame presets with `--concurrency-rounds`: each device together against alone, a
#      verdict per device and preset (does one GPU's work disturb another's);
#   4. `report` of both (side by side, the concurrency answer).
# Keeps reports, run.json and meta.json files, verdicts, summaries and logs (no per-frame
# records) in $OUT/concurrent-gpus-$PART.tar.xz. PART: wall (steps 1, 2 and its report),
# neighbours (step 3 and its report), split (steps 1 and 2 with --shared-cpus, then step 2 and
# the game frame's step 3 with --split-cpus: each device on its own share of the CPUs, the
# default) or all (default: 1-4).
# ROUNDS (default 10) and FRAMES (default
# 5000, per condition over all rounds) size step 3; the paced game frame gets GAME_FRAMES
# (default 1200) over ROUNDS. PRESETS (default: the 14 frame presets that overlap work) names
# step 3's presets other than the game frame; CPUS=split|shared runs steps 2 and 3 with
# --split-cpus or --shared-cpus (default: neither, gpuoverlap's default).
# Usage, with the gpuoverlap binary on PATH, from the repository root:
#   OUT=OUT_DIR [PART=wall|neighbours|split|all] [ROUNDS=R] [FRAMES=N] [GAME_FRAMES=N]
#     [PRESETS="a b"] [CPUS=split|shared] bench/concurrent_gpus.sh
set -uo pipefail
shopt -s nullglob
out=${OUT:-/tmp/gpuoverlap-out}
part=${PART:-all}
work="$out/concurrent-gpus-$part"
mkdir -p "$work"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap devices > "$work/devices.txt" 2>&1
summary="$work/summary.txt"
# shellcheck source=bench/timed.sh
. "$(dirname "$0")/timed.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
cpus=()
[[ -n ${CPUS:-} ]] && cpus=("--$CPUS-cpus")
if [[ $part != neighbours ]]; then
  for ((i = 0; i < gpus; i++)); do
    timed "single-$i" gpuoverlap run --all --priority-fallback --device "$i" --out "$work/single-$i"
  done
  shared=("${cpus[@]}")
  [[ $part == split ]] && shared=(--shared-cpus)
  timed concurrent gpuoverlap run --all --priority-fallback --device all --concurrent \
    "${shared[@]}" --out "$work/concurrent"
  timed report-concurrent gpuoverlap report "$work/concurrent"
fi
if [[ $part == split ]]; then
  # Each device's threads on its own share of the CPUs: the CPU-bound scenarios no longer
  # compete across devices.
  timed concurrent-split gpuoverlap run --all --priority-fallback --device all --concurrent \
    --split-cpus --out "$work/concurrent-split"
  timed report-concurrent-split gpuoverlap report "$work/concurrent-split"
  timed neighbours-game-split gpuoverlap run game-frame --priority-fallback --device all \
    --concurrent --split-cpus --concurrency-rounds "${ROUNDS:-10}" \
    --frames "${GAME_FRAMES:-1200}" --out "$work/neighbours-game-split"
  timed report-neighbours-game-split gpuoverlap report "$work/neighbours-game-split"
fi
if [[ $part == neighbours || $part == all ]]; then
  # The presets whose frames overlap work (studies and preemption are not part of the question).
  presets=${PRESETS:-"default default-legacy default-enhanced default-enhanced-sync-all
    default-split-collapsed default-split-event no-barriers three-dispatches
    three-dispatches-legacy three-dispatches-enhanced three-dispatches-split-event barrier-cost
    cross-queue-fence high-priority-compute"}
  # shellcheck disable=SC2086
  timed neighbours gpuoverlap run $presets --priority-fallback --device all --concurrent \
    "${cpus[@]}" --concurrency-rounds "${ROUNDS:-10}" --frames "${FRAMES:-5000}" \
    --out "$work/neighbours"
  timed report-neighbours gpuoverlap report "$work/neighbours"
  timed neighbours-game gpuoverlap run game-frame --priority-fallback --device all --concurrent \
    "${cpus[@]}" --concurrency-rounds "${ROUNDS:-10}" --frames "${GAME_FRAMES:-1200}" \
    --out "$work/neighbours-game"
  timed report-neighbours-game gpuoverlap report "$work/neighbours-game"
fi
{
  echo "verdicts of the studies of neighbours (together against alone), per device:"
  for verdict in "$work"/neighbours*/gpu*/*/verdict.json; do
    /usr/bin/python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
c = v["conditions"][0]
print("  %s: %s (%s rounds)" % (sys.argv[2], c["verdict"], v["progress"]["rounds_run"]))' \
      "$verdict" "${verdict#"$work"/}"
  done
} | tee -a "$summary"
# Keep what a reader needs: no per-frame files, no plots.
find "$work" -type f ! \( -name '*.json' -o -name '*.md' -o -name 'summary.csv' \
  -o -name 'verdict.csv' -o -name '*.log' -o -name '*.txt' -o -name '*.csv' -path '*nvidia*' \) \
  -delete
tar cJf "$out/concurrent-gpus-$part.tar.xz" -C "$out" "concurrent-gpus-$part" && rm -rf "$work"
ls -la "$out"
