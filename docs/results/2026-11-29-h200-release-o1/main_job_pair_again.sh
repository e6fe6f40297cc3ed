#!/usr/bin/env bash
# A second interleaved pair of run --all: -O2 again, then -O1 again (compare is done offline).
set -uo pipefail
out=${OUT:?}
s="$out/times-again.txt"
nvidia-smi -L > "$s" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv >> "$s" 2>&1
t() { local name=$1; shift; local a=$EPOCHREALTIME; "$@" > "$out/$name.log" 2>&1; local rc=$?; local b=$EPOCHREALTIME
  printf '%-10s exit %d  wall %.2f s  (%s)\n' "$name" "$rc" "$(awk -v a="$a" -v b="$b" 'BEGIN{print b-a}')" "$*" | tee -a "$s"; }
t o2b gpuoverlap-before run --all --priority-fallback --out "$out/o2b"
t o1b gpuoverlap run --all --priority-fallback --out "$out/o1b"
cat "$out/o2b.log" "$out/o1b.log" > "$out/run-all-logs-again.txt"; rm -f "$out/o2b.log" "$out/o1b.log"
for r in o2b o1b; do tar czf "$out/$r.tar.gz" -C "$out" "$r" && rm -rf "$out/$r"; done
ls -la "$out"; cat "$s"
