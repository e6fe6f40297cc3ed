#!/usr/bin/env bash
# The game frame's design on the GPU machine: which waiting mode, job size and period let the
# study see one normal-priority compile thread, and how noisy each frame-level endpoint is
# from round to round. For each foreground variant (a [cpu] table on MJP's default GPU work),
# a study of four conditions (baseline, managed, unmanaged-1, unmanaged-2) in interleaved rounds
# of 200 frames on one device, then bench/game_frame_table.py: per endpoint and condition, the
# mean and spread over rounds of the ratio to the same round's baseline (p50, p99, stutters).
#
# Usage: bench/game_frame_sweep.sh OUT_DIR [ROUNDS]   (the gpuoverlap binary on PATH)
set -uo pipefail
out=${1:?usage: game_frame_sweep.sh OUT_DIR [ROUNDS]}
rounds=${2:-8}
per_round=${FRAMES_PER_ROUND:-200}  # smaller to try the script on a CPU device
warmup=${WARMUP:-20}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# The default GPU work of the game-frame preset, under each variant's [cpu] table.
gpu_work=$(sed -n '/^\[queues.direct\]/,$p' "$here/../scenarios/presets/game-frame.toml" 2>/dev/null ||
           sed -n '/^\[queues.direct\]/,$p' "$here/../presets/game-frame.toml")
# VARIANTS="a b" runs only those variants (default: all).
variant() {  # variant NAME CPU_TABLE_LINES
  local name=$1 table=$2
  {
    printf 'name = "%s"\nframes = %d\nwarmup_frames = %d\n\n[cpu]\n%s\n\n' "$name" "$per_round" \
      "$warmup" "$table"
    echo "$gpu_work"
  } > "$out/$name.toml"
  if [ -n "${VARIANTS:-}" ] && [[ " $VARIANTS " != *" $name "* ]]; then return; fi
  cat > "$out/study-$name.toml" <<STUDY
name = "study-$name"
foreground = "$name.toml"
frames = $((per_round * rounds))
warmup_frames = $warmup
rounds = $rounds
budget_s = 0
[[condition]]
name = "baseline"
[[condition]]
name = "managed"
[condition.background]
tasks = 8
[[condition]]
name = "managed-shaderc-only"  # a diagnostic: the same compiles without the driver's pipeline build
[condition.background]
tasks = 8
create_pipelines = false
[[condition]]
name = "unmanaged-1"
[condition.background]
unmanaged_threads = 1
[[condition]]
name = "unmanaged-2"
[condition.background]
unmanaged_threads = 2
STUDY
  local start=$EPOCHREALTIME
  gpuoverlap run "$out/study-$name.toml" --share-device --washout-ms 200 --study-budget-s 0 \
    --priority-fallback --out "$out/$name" > "$out/$name.log" 2>&1
  local status=$?
  printf '%-28s exit %d  wall %.1f s\n' "$name" "$status" \
    "$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" | tee -a "$out/summary.txt"
}
common='workers = "cores"
frame_period_ms = 8
frames_in_flight = 2'
variant spin-then-sleep-4jobs "$common
jobs_per_worker = 4
critical_jobs = 3
cpu_ms_per_worker = 5.0
wait = \"spin_then_sleep\"
spin_us = 50"
variant spin-4jobs "$common
jobs_per_worker = 4
critical_jobs = 3
cpu_ms_per_worker = 5.0
wait = \"spin\""
variant sleep-4jobs "$common
jobs_per_worker = 4
critical_jobs = 3
cpu_ms_per_worker = 5.0
wait = \"sleep\""
variant spin-then-sleep-1job "$common
jobs_per_worker = 1
critical_jobs = 1
cpu_ms_per_worker = 5.0
wait = \"spin_then_sleep\"
spin_us = 50"
variant spin-then-sleep-16jobs "$common
jobs_per_worker = 16
critical_jobs = 3
cpu_ms_per_worker = 5.0
wait = \"spin_then_sleep\"
spin_us = 50"
for pinned in spin-4jobs spin-then-sleep-1job spin-then-sleep-4jobs spin-then-sleep-16jobs; do
  table=$(sed -n '/^\[cpu\]/,/^$/p' "$out/$pinned.toml" 2>/dev/null | sed '1d;/^$/d')
  [ -n "$table" ] || continue
  variant "$pinned-pinned" "$table
pin_workers = true"
done
# The table where a python with pandas exists (the GPU machine may have none: run it here).
if python3 -c 'import pandas' 2>/dev/null; then
  python3 "$here/game_frame_table.py" "$out" | tee "$out/table.md"
fi
