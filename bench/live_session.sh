#!/usr/bin/env bash
# run --script on the GPU machine (no window): no-barriers edited between frames (see
# bench/live-session.txt). Usage: bash bench/live_session.sh  (OUT set by the device tool)
set -euo pipefail
export __GL_SHADER_DISK_CACHE=0
out=${OUT:-/tmp/out}/live-session
.devbundle/run gpuoverlap run no-barriers --frames 100000 --script bench/live-session.txt \
  --out "$out" 2>&1 | grep -E "script line|\] no-barriers|FAILED" || true
cat "$out/live-session.csv"
