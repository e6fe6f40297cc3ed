#!/usr/bin/env bash
# The main job on the GPU machine, as a user meets it.
#   1. `gpuoverlap run --all --priority-fallback` (what scripts/run-suite.sh runs), wall time
#      and the time per scenario (run.json `seconds`)
#   2. `gpuoverlap selftest` with its defaults
#   3. `--no-timestamps`: the shader clock columns and their verification without queries
#   4. frames past their deadline (bench/deadline.toml, ~8 ms a frame): finished late
#      (--timeout-ms 6), and still running at the deadline (deadline-long.toml, --timeout-ms 50)
# Everything lands in $OUT/main-job.tar.gz.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/main_job.sh
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/main-job"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap devices > "$work/devices.txt" 2>&1
summary="$work/summary.txt"
# shellcheck source=bench/timed.sh
. "$(dirname "$0")/timed.sh"
timed run-all gpuoverlap run --all --priority-fallback --out "$work/all"
timed selftest gpuoverlap selftest --out "$work/selftest"
timed no-timestamps gpuoverlap run default three-dispatches no-barriers --no-timestamps \
  --out "$work/no-timestamps"
timed deadline-late gpuoverlap run "$here/deadline.toml" --timeout-ms 6 --out "$work/deadline-late"
timed deadline-long gpuoverlap run "$here/deadline-long.toml" --timeout-ms 50 --out "$work/deadline-long"
# What a user reads first: the tail of each log.
for log in "$work"/*.log; do echo "== $(basename "$log")"; grep -v '^\s*$' "$log" | tail -4; done
tar czf "$out/main-job.tar.gz" -C "$out" main-job && rm -rf "$work"
