#!/usr/bin/env bash
# The refused-priority path on a real driver: NVIDIA grants HIGH/REALTIME queue priority only
# to root or CAP_SYS_NICE. Runs high-priority-compute (HIGH) and a REALTIME variant as root and
# as an unprivileged user (nobody, via setpriv), strict and with --priority-fallback, and
# records exit codes, messages and the priorities meta.json says were granted.
# The report lands in $OUT/priority-refusal.txt.
# Usage, as root with setpriv and the gpuoverlap binary on PATH, from the repository (or a copy
# holding bench/ and scenarios/presets/):
#   OUT=OUT_DIR bench/priority_refusal.sh
# OUT: the output folder (environment variable OUT, default /tmp/gpuoverlap-out).
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-out}
work=$(mktemp -d /tmp/priority.XXXX)
chmod 777 "$work"
here=$(cd "$(dirname "$0")/.." && pwd)
sed 's/priority = "high"/priority = "realtime"/; s/name = "high-priority-compute"/name = "realtime-compute"/' \
  "$here/scenarios/presets/high-priority-compute.toml" > "$work/realtime-compute.toml"
chmod 644 "$work/realtime-compute.toml"
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
report="$work/priority-refusal.txt"
for user in root nobody; do
  for scenario in high-priority-compute "$work/realtime-compute.toml"; do
    for mode in strict fallback; do
      name=$(basename "$scenario" .toml)-$user-$mode
      args=(run "$scenario" --frames 20 --warmup 2 --out "$work/$name")
      [ "$mode" = fallback ] && args+=(--priority-fallback)
      prefix=()
      [ "$user" = nobody ] && prefix=("${as_nobody[@]}")
      "${prefix[@]}" env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "$(command -v gpuoverlap)" "${args[@]}" > "$work/$name.log" 2>&1
      rc=$?
      granted=$(python3 -c "import json,glob,sys; m=json.load(open(glob.glob('$work/$name/*/meta.json')[0])); print(', '.join(q['name']+': '+q['priority_requested']+' -> '+q['priority_granted'] for q in m['queues']), '|', '; '.join(m['priority_notes']))" 2>/dev/null || echo "no results")
      { echo "== $name: exit $rc"; grep -E "^gpuoverlap:" "$work/$name.log"; echo "granted: $granted"; } | tee -a "$report"
    done
  done
done
cp "$report" "$out/"
