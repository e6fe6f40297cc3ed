#!/usr/bin/env bash
# run --all with the -O2 binary (gpuoverlap-before), then the -O1 one (gpuoverlap); compare; reports.
set -uo pipefail
out=${OUT:?}
s="$out/times.txt"
nvidia-smi -L > "$s" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv >> "$s" 2>&1
gpuoverlap --version >> "$s"; gpuoverlap-before --version >> "$s"
t() { local name=$1; shift; local a=$EPOCHREALTIME; "$@" > "$out/$name.log" 2>&1; local rc=$?; local b=$EPOCHREALTIME
  printf '%-10s exit %d  wall %.2f s  (%s)\n' "$name" "$rc" "$(awk -v a="$a" -v b="$b" 'BEGIN{print b-a}')" "$*" | tee -a "$s"; }
t o2 gpuoverlap-before run --all --priority-fallback --out "$out/o2"
t o1 gpuoverlap run --all --priority-fallback --out "$out/o1"
gpuoverlap compare "$out/o2" "$out/o1" > "$out/compare-all.txt" 2>&1; echo "compare o2 -> o1: exit $?" | tee -a "$s"
gpuoverlap-before report "$out/o2" > "$out/o2/report.log" 2>&1; echo "report o2 (by -O2): exit $?" | tee -a "$s"
gpuoverlap report "$out/o1" > "$out/o1/report.log" 2>&1; echo "report o1 (by -O1): exit $?" | tee -a "$s"
gpuoverlap report "$out/o2" --out "$out/o2-by-o1.md" > /dev/null 2>&1; echo "report o2 (by -O1): exit $?" | tee -a "$s"
if cmp -s "$out/o2/report.md" "$out/o2-by-o1.md" && cmp -s "$out/o2/report-details.md" "$out/o2-by-o1-details.md"; then
  echo "report of o2 by -O1 identical to by -O2: yes" | tee -a "$s"
else echo "report of o2 by -O1 identical to by -O2: NO" | tee -a "$s"; diff "$out/o2/report.md" "$out/o2-by-o1.md" | head -20 >> "$s"; fi
mv "$out/o2-by-o1.md" "$out/o2-by-o1-details.md" "$out/o2/" 2>/dev/null
for r in o2 o1; do cp "$out/$r/report.md" "$out/report-$r.md"; du -sh "$out/$r" | tee -a "$s"; done
cat "$out/o2.log" "$out/o1.log" > "$out/run-all-logs.txt"; rm -f "$out/o2.log" "$out/o1.log"
for r in o2 o1; do tar czf "$out/$r.tar.gz" -C "$out" "$r" && rm -rf "$out/$r"; done
ls -la "$out"; grep -cE 'CHANGED|REGRESS' "$out/compare-all.txt"; tail -n 25 "$out/compare-all.txt"; cat "$s"
