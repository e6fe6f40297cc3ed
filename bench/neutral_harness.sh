#!/usr/bin/env bash
# Is the harness neutral on a GPU machine, and what do the background answers become there?
#   1. the kernel's scheduler record (tests/neutrality/sched_trace.py, tracefs) of game-frame
#      with the runtime's managed compiles, of the same with the idle-gaps policy's holds
#      (dispatch = "gaps": the frame loop holds and releases the compiles every frame) and of
#      the bare game-frame, 300 frames each (TRACES: which of the three, by name): per
#      run, threads created or ended and yields in the measured frames, the runnable frame
#      loop's switches and every stretch it was off its CPU, by who took it
#   2. the non-intrusiveness preset, REPEAT times (default 1), each with its report
#   3. run --all --priority-fallback (the main job), REPEAT_ALL times (default 1), timed
#   4. bench/aa-controls.toml (baseline, null control, negative control), AA times (default 0):
#      how often each control is called intrusive
# Everything lands in $OUT/neutral-harness.tar.gz, the tables in $OUT/summary.md.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/
# and tests/neutrality, tests/data:
#   OUT=OUT_DIR [REPEAT=N] [REPEAT_ALL=N] [AA=N] bench/neutral_harness.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work="$out/neutral-harness"
mkdir -p "$work"
summary="$out/summary.md"
: > "$summary"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$work/nvidia-smi.csv" 2>&1
gpuoverlap --version > "$work/version.txt" 2>&1
gpuoverlap host > "$work/host.txt" 2>&1
trace=$root/tests/neutrality/sched_trace.py
for name in ${TRACES:-game-frame-managed game-frame-managed-gaps game-frame}; do
  scenario=$root/tests/data/$name.toml
  [ "$name" = game-frame ] && scenario=game-frame
  if [ "$name" = game-frame-managed-gaps ]; then
    # The managed game frame's file with the idle-gaps policy's dispatch added to [background]
    # (its last table).
    scenario=$work/$name.toml
    sed -e "0,/^name = .*/s//name = \"$name\"/" "$root/tests/data/game-frame-managed.toml" \
      > "$scenario"
    printf 'dispatch = "gaps"\n' >> "$scenario"
  fi
  echo "## kernel record: $name, 300 frames" >> "$summary"
  python3 "$trace" "$work/trace-$name" -- gpuoverlap run "$scenario" --frames 300 \
    --priority-fallback --out "$work/trace-$name" >> "$summary" 2> "$work/trace-$name.log"
  echo >> "$summary"
done
for i in $(seq 1 "${REPEAT:-1}"); do
  gpuoverlap run non-intrusiveness --priority-fallback --out "$work/non-intrusiveness-$i" \
    > "$work/non-intrusiveness-$i.log" 2>&1
  gpuoverlap report "$work/non-intrusiveness-$i" > /dev/null 2>&1
  echo "## non-intrusiveness, run $i" >> "$summary"
  grep -A1 '^\*\*4\.' "$work/non-intrusiveness-$i/report.md" >> "$summary"
  echo >> "$summary"
done
for i in $(seq 1 "${REPEAT_ALL:-1}"); do
  start=$EPOCHREALTIME
  gpuoverlap run --all --priority-fallback --out "$work/all-$i" > "$work/all-$i.log" 2>&1
  status=$?
  end=$EPOCHREALTIME
  gpuoverlap report "$work/all-$i" > /dev/null 2>&1
  echo "## run --all $i: exit $status, $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s, $(du -sh "$work/all-$i" | cut -f1)" >> "$summary"
  grep -A1 '^\*\*[1-5]\.' "$work/all-$i/report.md" >> "$summary"
  echo >> "$summary"
done
if [ "${AA:-0}" -gt 0 ]; then
  echo "## A/A: bench/aa-controls.toml, $AA studies" >> "$summary"
  echo "| study | null control | negative control | late frames: baseline / null / negative |" >> "$summary"
  echo "|---|---|---|---|" >> "$summary"
  for i in $(seq 1 "$AA"); do
    gpuoverlap run "$here/aa-controls.toml" --priority-fallback --out "$work/aa-$i" > "$work/aa-$i.log" 2>&1
    python3 - "$work/aa-$i/aa-controls/verdict.json" "$i" >> "$summary" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
calls = {c["condition"]: c for c in v["conditions"]}
def late(p):
    return f"{p['late']}/{p['frames']}" if p else "?"
print(f"| {sys.argv[2]} | {calls['null']['verdict']} | {calls['idle-spinners']['verdict']} | "
      f"{late(v.get('baseline_pacing'))} / {late(calls['null'].get('pacing'))} / "
      f"{late(calls['idle-spinners'].get('pacing'))} |")
PY
  done
  echo >> "$summary"
fi
tar -czf "$out/neutral-harness.tar.gz" -C "$out" neutral-harness
rm -rf "$work"
cat "$summary"
