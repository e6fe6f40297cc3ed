#!/usr/bin/env bash
# The results history at scale: a synthetic history of 10,000 runs x 500 series (1,000,000
# metric rows; bench/history_scale_data.py says what is in it) on SQLite and on PostgreSQL, and
# the wall time of `history list`, `history trend` (one series) and `history regressions`
# (every median series, the defaults) on each, the median of REPEAT runs. Then how many of the
# planted 5 % steps `regressions` found at their run, and its false change points.
# Usage, from the repository root with gpuoverlap built:
#   OUT=OUT_DIR [GPUOVERLAP=build/gpuoverlap] [REPEAT=3] [ENGINES="sqlite postgresql"] \
#     bench/history_scale.sh
# PostgreSQL: a throwaway server from scripts/pg-throwaway.sh, stopped on exit.
set -euo pipefail
out=${OUT:-/tmp/gpuoverlap-history-scale}
bin=${GPUOVERLAP:-build/gpuoverlap}
repeat=${REPEAT:-3}
engines=${ENGINES:-sqlite postgresql}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mkdir -p "$out"
work=$(mktemp -d)
pg_dir=
cleanup() {
  if [ -n "$pg_dir" ]; then "$root/scripts/pg-throwaway.sh" stop "$pg_dir"; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The median wall time of `gpuoverlap ARGS...` over $repeat runs, in seconds; the last run's
# output in $out/$name.txt and its exit status beside it.
time_it() {
  local name=$1
  shift
  local times=() status
  for _ in $(seq "$repeat"); do
    status=0
    /usr/bin/time -f %e -o "$work/time" "$bin" "$@" >"$out/$name.txt" 2>&1 || status=$?
    times+=("$(cat "$work/time")")
  done
  echo "exit $status" >>"$out/$name.txt"
  printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((repeat + 1) / 2))p"
}

declare -A seconds
for engine in $engines; do
  start=$(date +%s.%N)
  if [ "$engine" = sqlite ]; then
    db="$work/history.sqlite"
    "$bin" history list --db "$db" >/dev/null  # makes the tables: the binary's own schema
    /usr/bin/python3 "$here/history_scale_data.py" sqlite "$db"
  else
    started=$("$root/scripts/pg-throwaway.sh" start)
    pg_dir=$(echo "$started" | head -1)
    db=$(echo "$started" | tail -1)
    "$bin" history list --db "$db" >/dev/null
    # The metrics table's columns as this binary's schema has them (v2 added two).
    columns=$(psql -At "$db" -c "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) \
      FROM information_schema.columns WHERE table_name = 'metrics'")
    /usr/bin/python3 "$here/history_scale_data.py" csv "$work" "$columns"
    psql -q -v ON_ERROR_STOP=1 "$db" -c "\\copy machines FROM '$work/machines.csv' WITH (FORMAT csv)"
    psql -q -v ON_ERROR_STOP=1 "$db" -c "\\copy runs FROM '$work/runs.csv' WITH (FORMAT csv)"
    psql -q -v ON_ERROR_STOP=1 "$db" -c "\\copy metrics ($columns) FROM '$work/metrics.csv' WITH (FORMAT csv)"
    # The ids were given: the sequences go on after them, as after ingests. ANALYZE: what
    # autovacuum does within a minute of a load this size.
    psql -q -v ON_ERROR_STOP=1 "$db" -c "SELECT setval(pg_get_serial_sequence('machines', 'id'), \
      (SELECT MAX(id) FROM machines)); SELECT setval(pg_get_serial_sequence('runs', 'id'), \
      (SELECT MAX(id) FROM runs)); ANALYZE" >/dev/null
  fi
  echo "$engine: history made in $(echo "$(date +%s.%N) - $start" | bc) s" >&2
  seconds[$engine,list]=$(time_it "$engine-list" history list --db "$db")
  seconds[$engine,trend]=$(time_it "$engine-trend" history trend --db "$db" --machine 1 \
    --scenario s0 --series "Compute A" --metric duration_p50_us --clock ts)
  seconds[$engine,regressions]=$(time_it "$engine-regressions" history regressions --db "$db")
  /usr/bin/python3 "$here/history_scale_data.py" judge "$out/$engine-regressions.txt" \
    >"$out/$engine-detection.txt"
  if [ "$engine" = postgresql ]; then
    "$root/scripts/pg-throwaway.sh" stop "$pg_dir"
    pg_dir=
  fi
done

{
  echo "gpuoverlap: $("$bin" --version 2>/dev/null | head -1 || echo "$bin")"
  echo "history: 10,000 runs x 500 series (1,000,000 metric rows); seconds, median of $repeat"
  echo
  echo "| engine | history list | history trend (1 series) | history regressions (250 series) |"
  echo "|---|---:|---:|---:|"
  for engine in $engines; do
    echo "| $engine | ${seconds[$engine,list]} | ${seconds[$engine,trend]} |" \
      "${seconds[$engine,regressions]} |"
  done
  for engine in $engines; do
    echo
    echo "$engine, regressions: $(tail -2 "$out/$engine-regressions.txt" | head -1)"
    sed 's/^/  /' "$out/$engine-detection.txt"
  done
} | tee "$out/timings.md"
