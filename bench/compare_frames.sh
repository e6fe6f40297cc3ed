#!/usr/bin/env bash
# compare's frame gate on the GPU machine. `game-frame` runs alone (A) and beside SPINNERS
# outside normal-priority threads (default 1) spinning for the whole run (B: what a driver
# change that adds busy threads does to a game), interleaved so that drift hits both alike; then
# bench/compare_resample.py draws 5 + 5 runs: A/A (any CHANGED is a false alarm) and A/B
# (CHANGED is a catch), and counts which section's rows changed (workloads, frames, shares).
# The records stay under $OUT/compare-frames, trace.json removed.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR A_RUNS=30 B_RUNS=25 FRAMES=300 DRAWS=200 SPINNERS=1 bench/compare_frames.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
a_runs=${A_RUNS:-30}
b_runs=${B_RUNS:-25}
frames=${FRAMES:-300}
draws=${DRAWS:-200}
spinners=${SPINNERS:-1}
work="$out/compare-frames"
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
nproc > "$work/nproc.txt"
run() {  # run NAME [OPTIONS...]
  local name=$1; shift
  gpuoverlap run game-frame --frames "$frames" "$@" --out "$work/$name" > "$work/$name.log" 2>&1 ||
    echo "$name: run failed (see $name.log)"
  find "$work/$name" \( -name trace.json -o -name trace.json.gz \) -delete
}
most=$(( a_runs > b_runs ? a_runs : b_runs ))
for i in $(seq 1 "$most"); do
  [ "$i" -le "$a_runs" ] && run "a-$i"
  if [ "$i" -le "$b_runs" ]; then
    pids=()
    for _ in $(seq 1 "$spinners"); do
      ( while :; do :; done ) &  # a normal-priority thread, spinning, that the tool knows nothing of
      pids+=($!)
    done
    run "b-$i"
    kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null
  fi
  echo "round $i of $most done"
done
# DRAWS=0: only the runs (resample them later, off the GPU machine).
if [ "$draws" -gt 0 ]; then
  /usr/bin/python3 "$here/compare_resample.py" --gpuoverlap "$(command -v gpuoverlap)" \
    --a "$work/a-*" --b "$work/b-*" --runs 5 --draws "$draws" --disjoint | tee "$work/resample.txt"
fi
