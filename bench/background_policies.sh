#!/bin/bash
# The background-policies study, repeated: `bench/background_policies.sh OUT [RUNS [ARGS...]]`
# runs `gpuoverlap run background-policies --priority-fallback ARGS...` RUNS times (default 3;
# ARGS such as --sched-trace), then writes
# OUT/table.md (bench/policies_table.py), and the plots and report of the first run. Any GPU
# machine: put `gpuoverlap` on PATH (or define it as a shell function) first.
set -u
out=$1
runs=${2:-3}
shift $(($# < 2 ? $# : 2))
here=$(dirname "$0")
. "$here/repeat.sh"
repeat_runs "$out" "$runs" pol run background-policies --priority-fallback "$@"
/usr/bin/python3 "$here/policies_table.py" "$out" > "$out/table.md"
