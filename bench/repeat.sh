# Sourced by the bench scripts that repeat a run: `repeat_runs OUT N PREFIX ARGS...` runs
# `gpuoverlap ARGS... --out OUT/PREFIX-K` for K = 1..N, each with its log in OUT/PREFIX-K.log,
# and writes OUT/runs.txt, one line a run: `PREFIX-K exit S wall_s W bytes B` (the tables read
# it). A failed run is recorded and the next one runs.
repeat_runs() {
  local out=$1 runs=$2 prefix=$3
  shift 3
  mkdir -p "$out"
  : > "$out/runs.txt"
  local k start status wall bytes
  for k in $(seq 1 "$runs"); do
    start=$EPOCHREALTIME
    gpuoverlap "$@" --out "$out/$prefix-$k" > "$out/$prefix-$k.log" 2>&1
    status=$?
    wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    bytes=$(du -sb "$out/$prefix-$k" 2>/dev/null | cut -f1)
    printf '%s-%d exit %d wall_s %s bytes %s\n' "$prefix" "$k" "$status" "$wall" "${bytes:-0}" |
      tee -a "$out/runs.txt"
  done
}
