#!/usr/bin/env bash
# compare's false alarms and power on the GPU machine (issue 19): MJP's default,
# three-dispatches and no-barriers, 100 frames each with --no-timestamps, run as A (the
# presets) and B (bench/compare-noise/*-slower.toml: Compute B's iterations x1.1, nothing
# else), interleaved A, B, A so that drift hits both alike: 2*PAIRS runs of A, PAIRS of B.
# Then `compare` of each A/A pair (A2i-1 vs A2i: any CHANGED is a false alarm) and each A/B
# pair (A2i-1 vs Bi: CHANGED is a catch). The runs' records stay in the tarball, so a later
# compare can be judged on the same data without the GPU.
# Run from the repository root through the bundle:
#   .devbundle/run bash .devbundle/bench/compare_noise.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/compare-noise"
pairs=${PAIRS:-20}
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
  # Only what compare and report read; trace.json and the rest are remade from records.csv.
  find "$work/$name" -name trace.json -delete
}
for i in $(seq 1 "$pairs"); do
  run "a-$((2 * i - 1))" "${a_presets[@]}"
  run "b-$i" "${b_files[@]}"
  run "a-$((2 * i))" "${a_presets[@]}"
done
false_alarms=0
catches=0
for i in $(seq 1 "$pairs"); do
  gpuoverlap compare "$work/a-$((2 * i - 1))" "$work/a-$((2 * i))" > "$work/aa-$i.txt" 2>&1
  [ $? -eq 1 ] && false_alarms=$((false_alarms + 1))
  gpuoverlap compare "$work/a-$((2 * i - 1))" "$work/b-$i" > "$work/ab-$i.txt" 2>&1
  [ $? -eq 1 ] && catches=$((catches + 1))
done
{
  echo "compare (default options) on $pairs A/A pairs and $pairs A/B pairs"
  echo "A/A false alarms: $false_alarms of $pairs"
  echo "A/B catches:      $catches of $pairs"
} | tee "$work/summary.txt"
tar czf "$out/compare-noise.tar.gz" -C "$out" compare-noise && rm -rf "$work"
