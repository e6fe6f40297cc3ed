#!/usr/bin/env bash
# The non-intrusiveness verdict on the GPU machine: the non-intrusiveness study
# (baseline, managed, commit-high-priority, unmanaged control on every core; 6 interleaved
# rounds) with FRAMES measured frames per condition (default 3000), REPEATS times (default 2:
# a verdict that flips between repeats is not one), the diagnostic study of
# non-intrusiveness-diagnostic.toml, then the bgp-* workflow presets. The NVIDIA driver's
# shader disk cache is off so every background compile is real compiler work (each variant
# is distinct within a run anyway). Everything small lands in $OUT/non-intrusiveness.tar.gz,
# split into pieces of 15 MB (`cat non-intrusiveness.tar.gz.* | tar xz` joins and unpacks them).
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/non_intrusiveness.sh [extra gpuoverlap run options]
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/non-intrusiveness"
mkdir -p "$work"
export __GL_SHADER_DISK_CACHE=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
nproc > "$work/nproc.txt"
lscpu > "$work/lscpu.txt" 2>&1
# The GPU's clocks while it runs: a CPU-starved foreground leaves the GPU idle between
# frames, and an idle GPU lowers its clocks, which lengthens GPU durations.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,pstate \
  --format=csv -lms 250 > "$work/gpu-clocks.csv" 2>&1 &
sampler=$!
status=0
for r in $(seq 1 "${REPEATS:-2}"); do
  gpuoverlap run non-intrusiveness --frames "${FRAMES:-3000}" --out "$work/run-$r" "$@" \
    > "$work/run-$r.log" 2>&1 || status=1
  tail -n 60 "$work/run-$r.log"
done
# Which part of the control intrudes: CPU load, or the driver's pipeline creation?
gpuoverlap run "$(dirname "$0")/non-intrusiveness-diagnostic.toml" --out "$work/diagnostic" \
  > "$work/diagnostic.log" 2>&1 || status=1
tail -n 80 "$work/diagnostic.log"
gpuoverlap run bgp-benchmark-priming bgp-single-frame-analysis --frames 500 --out "$work/bgp" \
  > "$work/bgp.log" 2>&1 || status=1
tail -n 5 "$work/bgp.log"
kill "$sampler" 2>/dev/null
# records.csv and trace.json (every workload of every frame) are the bulk and are left out;
# the verdict reads frames.csv, summary.csv keeps each workload's distribution per round.
find "$work" \( -name "records.csv*" -o -name "trace.json*" \) -delete
tar czf "$out/non-intrusiveness.tar.gz" -C "$out" non-intrusiveness && rm -rf "$work"
# Pieces of 15 MB, each small enough to copy and keep on its own.
split -b 15M -d "$out/non-intrusiveness.tar.gz" "$out/non-intrusiveness.tar.gz." &&
  rm "$out/non-intrusiveness.tar.gz"
exit "$status"
