#!/bin/bash
# bench/non-intrusiveness-alternating.toml on the GPU machine, from the repository root:
# prints every condition's verdict rows for the CPU metrics, an A/A check (the baseline's own
# runs cut into the same on/off/off/on blocks, judged as an alternating condition would be),
# and packs frames, background records, meta and verdicts into one file.
# $1: the study budget in seconds (default: the file's 600).
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/alternating.sh [BUDGET_S]
# OUT: the output folder (environment variable OUT).
export __GL_SHADER_DISK_CACHE=0
set -u
mkdir -p "$OUT/r"
start=$SECONDS
gpuoverlap run bench/non-intrusiveness-alternating.toml \
  ${1:+--study-budget-s "$1"} --out "$OUT/r/o" > "$OUT/r/run.log" 2>&1
echo "exit $? in $((SECONDS - start)) s"
grep -E "^(rounds|undecided|control|the smallest|positive)|: (non-intrusive|intrusive|inconclusive)" "$OUT/r/run.log" | tail -20
/usr/bin/python3 bench/alternating_summary.py "$OUT/r/o/non-intrusiveness-alternating"
cd "$OUT/r" && find . \( -name frames.csv -o -name background.csv -o -name meta.json -o -name 'verdict.*' \
  -o -name '*.log' -o -name run.json \) -print0 | tar --null -T - -cJf "$OUT/alternating.tar.xz" && rm -rf "$OUT/r"
ls -la "$OUT"
