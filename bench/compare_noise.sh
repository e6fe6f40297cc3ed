#!/usr/bin/env bash
# compare's false alarms and power on the GPU machine, with several runs per side.
# A is MJP's default, three-dispatches and no-barriers, 100 frames each with --no-timestamps;
# B is the same with Compute B's iterations x1.1 (bench/compare-noise/*-slower.toml).
# Each trial runs A, A', B interleaved, RUNS times (A and A' are the same configuration), so
# that drift hits every side alike; then
#   compare --baseline A... --candidate A'...   (any CHANGED is a false alarm)
#   compare --baseline A... --candidate B...    (CHANGED is a catch; Compute B's own duration
#                                                 should be among the CHANGED rows)
#   compare A1 A'1 and compare A1 B1             (one run per side, the frames method)
# The runs' records stay in the tarball, so a later compare can be judged on the same data.
# Trials FIRST..FIRST+TRIALS-1, so that 20 trials can be run as two shorter runs of the script.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR FIRST=1 TRIALS=10 bench/compare_noise.sh
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
first=${FIRST:-1}
trials=${TRIALS:-10}
runs=${RUNS:-5}
work="$out/compare-noise-$first"
mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
a_presets=(default three-dispatches no-barriers)
b_files=("$here/compare-noise/default-slower.toml" "$here/compare-noise/three-dispatches-slower.toml"
         "$here/compare-noise/no-barriers-slower.toml")
run() {  # run NAME SCENARIOS...
  local name=$1; shift
  gpuoverlap run "$@" --frames 100 --no-timestamps --out "$work/$name" > "$work/$name.log" 2>&1 ||
    echo "$name: run failed (see $name.log)"
  # Only what compare and report read; trace.json and the rest are remade from the records.
  find "$work/$name" \( -name trace.json -o -name trace.json.gz \) -delete
}
verdict() {  # verdict FILE EXIT: one word for the summary
  local file=$1 code=$2
  case $code in
    0) echo ok ;;
    1) echo "CHANGED($(grep -c 'CHANGED' "$file"))" ;;
    *) echo "error($code)" ;;
  esac
}
: > "$work/trials.txt"
for t in $(seq "$first" $((first + trials - 1))); do
  a=() a2=() b=()
  for r in $(seq 1 "$runs"); do
    run "t$t-a-$r" "${a_presets[@]}"; a+=("$work/t$t-a-$r")
    run "t$t-a2-$r" "${a_presets[@]}"; a2+=("$work/t$t-a2-$r")
    run "t$t-b-$r" "${b_files[@]}"; b+=("$work/t$t-b-$r")
  done
  gpuoverlap compare --baseline "${a[@]}" --candidate "${a2[@]}" > "$work/t$t-aa.txt" 2>&1
  aa=$(verdict "$work/t$t-aa.txt" $?)
  gpuoverlap compare --baseline "${a[@]}" --candidate "${b[@]}" > "$work/t$t-ab.txt" 2>&1
  ab=$(verdict "$work/t$t-ab.txt" $?)
  own=$(grep -E '^(default|three-dispatches) +Compute B +duration .*CHANGED: slower' "$work/t$t-ab.txt" | wc -l)
  gpuoverlap compare "${a[0]}" "${a2[0]}" > "$work/t$t-aa-frames.txt" 2>&1
  aa1=$(verdict "$work/t$t-aa-frames.txt" $?)
  gpuoverlap compare "${a[0]}" "${b[0]}" > "$work/t$t-ab-frames.txt" 2>&1
  ab1=$(verdict "$work/t$t-ab-frames.txt" $?)
  echo "trial $t: runs A/A $aa, A/B $ab (Compute B duration flagged in $own of 2 scenarios); frames A/A $aa1, A/B $ab1" | tee -a "$work/trials.txt"
done
tar czf "$out/compare-noise-$first.tar.gz" -C "$out" "compare-noise-$first" && rm -rf "$work"
