#!/usr/bin/env bash
# The real results history: every measurement under docs/results/ (its raw.tar.xz unpacked in
# a temporary copy) ingested into one history, then the machines, every series' change points,
# and the trends docs/history.md shows, as text, CSV and plots.
# Usage, from the repository root with gpuoverlap built:
#   OUT=OUT_DIR [GPUOVERLAP=build/gpuoverlap] bench/history_from_docs.sh
set -uo pipefail
out=${OUT:-/tmp/gpuoverlap-history}
bin=${GPUOVERLAP:-build/gpuoverlap}
root=$(pwd)
mkdir -p "$out"
db="$out/history.sqlite"
rm -f "$db" "$db-wal" "$db-shm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for folder in docs/results/*/; do
  name=$(basename "$folder")
  cp -r "$folder" "$work/$name"
  if [ -f "$work/$name/raw.tar.xz" ]; then tar xJf "$work/$name/raw.tar.xz" -C "$work/$name"; fi
  find "$work/$name" -name run.json -printf '%h\n' | sort | while read -r run; do
    printf '%s: ' "${run#"$work"/}"
    "$bin" history ingest "$run" --db "$db" 2>&1 | head -1
  done
done > "$out/ingest.txt"
"$bin" history list --db "$db" > "$out/runs.txt"
"$bin" history list --machines --db "$db" > "$out/machines.txt"
"$bin" history regressions --db "$db" > "$out/regressions.txt"
echo "regressions exit $?" >> "$out/regressions.txt"
for series in "default:Compute A:ts" "game-frame:frame:cpu" "no-barriers:Compute A:ts"; do
  IFS=: read -r scenario workload clock <<<"$series"
  slug=$(echo "$scenario-$workload-$clock" | tr ' ' '-')
  metric=duration_p50_us
  [ "$workload" = frame ] && metric=frame_interval_p50_us
  "$bin" history trend --db "$db" --scenario "$scenario" --series "$workload" --clock "$clock" \
    --metric "$metric" --csv "$out/trend-$slug.csv" > "$out/trend-$slug.txt" 2>&1
  /usr/bin/python3 "$root/plots/plot.py" history "$out/trend-$slug.csv" >/dev/null
done
ls "$out"
