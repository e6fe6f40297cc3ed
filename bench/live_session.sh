#!/usr/bin/env bash
# run --script on the GPU machine (no window): no-barriers edited between frames (see
# bench/live-session.txt), into $OUT/live-session.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/live_session.sh
# OUT: the output folder (environment variable OUT, default /tmp/out).
set -euo pipefail
export __GL_SHADER_DISK_CACHE=0
out=${OUT:-/tmp/out}/live-session
gpuoverlap run no-barriers --frames 100000 --script bench/live-session.txt \
  --out "$out" 2>&1 | grep -E "script line|\] no-barriers|FAILED" || true
cat "$out/live-session.csv"
