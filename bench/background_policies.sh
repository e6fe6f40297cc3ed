#!/bin/bash
# The background-policies study, repeated: `bench/background_policies.sh OUT [RUNS]` runs
# `gpuoverlap run background-policies --priority-fallback` RUNS times (default 3), then writes
# OUT/table.md (bench/policies_table.py), and the plots and report of the first run. Any GPU
# machine: put `gpuoverlap` on PATH (or define it as a shell function) first.
set -u
out=$1
runs=${2:-3}
here=$(dirname "$0")
. "$here/repeat.sh"
repeat_runs "$out" "$runs" pol run background-policies --priority-fallback
/usr/bin/python3 "$here/policies_table.py" "$out" > "$out/table.md"
