#!/usr/bin/env bash
# A refactoring that must change nothing a user sees, measured: the binary before it
# (gpuoverlap-before) and after it (gpuoverlap) run the foundation presets, the barrier lab and
# the preemption matrix (one process and --load-process), interleaved before, after, before
# again. Then, per group: bench/same_outputs.py (same files, CSV headers, meta.json keys,
# row counts) and `gpuoverlap compare` of before -> after beside before -> before again (the
# run-to-run noise the comparison must be read against). Everything lands in
# $OUT/before-after.tar.gz. ONLY (default "foundation barrier_lab preemption") picks groups;
# DURATION (default 1000) is each preemption configuration's ms.
# Usage, with the gpuoverlap binary on PATH and the binary from before the refactoring on PATH
# as gpuoverlap-before, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/before_after.sh
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work="$out/before-after"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv \
  > "$work/nvidia-smi.csv" 2>&1
gpuoverlap --version > "$work/versions.txt"; gpuoverlap-before --version >> "$work/versions.txt"
foundation=(default no-barriers three-dispatches three-dispatches-split-event high-priority-compute)
barrier_lab=(barrier-cost cross-queue-fence)
for v in legacy split-event split-collapsed enhanced enhanced-sync-all; do
  barrier_lab+=("three-dispatches-$v" "default-$v")
done
run() {  # run NAME BINARY ARGS...
  local name=$1 binary=$2; shift 2
  echo "== $binary $*" > "$work/$name.log"
  "$binary" "$@" --out "$work/$name" >> "$work/$name.log" 2>&1
  echo "$name: exit $?" | tee -a "$work/exits.txt"
}
groups=" ${ONLY:-foundation barrier_lab preemption} "
for group in foundation barrier_lab; do
  [[ $groups == *" $group "* ]] || continue
  declare -n presets=$group
  frames=100; [ "$group" = barrier_lab ] && frames=200
  run "$group-before" gpuoverlap-before run "${presets[@]}" --frames $frames
  run "$group-after" gpuoverlap run "${presets[@]}" --frames $frames
  run "$group-before-again" gpuoverlap-before run "${presets[@]}" --frames $frames
done
for mode in same separate; do
  [[ $groups == *" preemption "* ]] || continue
  extra=(); [ "$mode" = separate ] && extra=(--load-process)
  for side in before after; do
    binary=gpuoverlap; [ "$side" = before ] && binary=gpuoverlap-before
    run "preemption-$mode-$side" $binary run preemption-matrix --duration-ms "${DURATION:-1000}" \
      --priority-fallback "${extra[@]}"
  done
done
status=0
{
  for group in foundation barrier_lab preemption-same preemption-separate; do
    [ -d "$work/$group-before" ] || continue
    echo "## $group: same outputs (before -> after)"
    python3 "$here/same_outputs.py" "$work/$group-before" "$work/$group-after" || status=1
    echo "## $group: compare before -> after"
    gpuoverlap compare "$work/$group-before" "$work/$group-after"; echo "exit $?"
    if [ -d "$work/$group-before-again" ]; then
      echo "## $group: compare before -> before again (noise)"
      gpuoverlap compare "$work/$group-before" "$work/$group-before-again"; echo "exit $?"
    fi
  done
} > "$work/outcome.md" 2>&1
tail -n 60 "$work/outcome.md"
grep -E '^##|differences|exit [0-9]|REGRESS|CHANGED' "$work/outcome.md" | head -60
du -sh "$work"
tar czf "$out/before-after.tar.gz" -C "$out" before-after && rm -rf "$work"
exit $status
