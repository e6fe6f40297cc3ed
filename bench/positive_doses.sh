#!/usr/bin/env bash
# Does one normal-priority thread cost the game frame nothing, or can the study not see it?
#   1. the kernel's record (tests/neutrality/sched_trace.py) of 300 frames of game-frame with
#      the positive control at 1 and 2 threads: per foreground thread (frame loop, poller,
#      workers), how long it waited runnable for a CPU, by whose thread held that CPU
#   2. bench/positive-doses.toml: the doses 1, 2, 4, 8 and one per hardware thread, 8 rounds
#      each, with the study's verdict (what each dose did, and what 8 rounds resolve)
# Usage, as root, with gpuoverlap on PATH, from the repository root (or a copy holding bench/,
# tests/neutrality and tests/data):   OUT=OUT_DIR bench/positive_doses.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work="$out/positive-doses"
mkdir -p "$work"
summary="$out/summary.md"
: > "$summary"
gpuoverlap --version > "$work/version.txt" 2>&1
for threads in 1 2; do
  scenario="$work/game-frame-unmanaged-$threads.toml"
  # The managed game frame's file with its [background] (the last table) replaced.
  sed -e '/^\[background\]/,$d' -e "0,/^name = .*/s//name = \"game-frame-unmanaged-$threads\"/" \
    "$root/tests/data/game-frame-managed.toml" > "$scenario"
  printf '[background]\nunmanaged_threads = %d\n' "$threads" >> "$scenario"
  echo "## kernel record: game-frame, positive control at $threads thread(s), 300 frames" >> "$summary"
  /usr/bin/python3 "$root/tests/neutrality/sched_trace.py" "$work/trace-$threads" -- \
    gpuoverlap run "$scenario" --frames 300 --priority-fallback --out "$work/trace-$threads" \
    >> "$summary" 2> "$work/trace-$threads.log"
  echo >> "$summary"
done
echo "## bench/positive-doses.toml" >> "$summary"
gpuoverlap run "$here/positive-doses.toml" --priority-fallback --out "$work/doses" \
  > "$work/doses.log" 2>&1
echo "exit status $?" >> "$summary"
/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"])' \
  "$work/doses/positive-doses/verdict.json" >> "$summary" 2>&1 || tail -20 "$work/doses.log" >> "$summary"
cp "$work/doses/positive-doses/verdict.csv" "$out/verdict.csv" 2>/dev/null
tar -czf "$out/positive-doses.tar.gz" -C "$out" positive-doses
rm -rf "$work"
cat "$summary"
