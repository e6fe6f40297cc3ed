# Sourced by the bench scripts: `timed NAME COMMAND...` runs the command with its stdout and
# stderr in $work/NAME.log, and appends its exit status and wall time to $summary (and prints
# them). The caller sets `work` and `summary`.
timed() {
  local name=$1; shift
  local start=$EPOCHREALTIME
  "$@" > "$work/$name.log" 2>&1
  local status=$?
  local end=$EPOCHREALTIME
  printf '%-16s exit %d  wall %.2f s\n' "$name" "$status" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" | tee -a "$summary"
}
