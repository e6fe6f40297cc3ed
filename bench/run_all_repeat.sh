#!/usr/bin/env bash
# The main job, repeated: `gpuoverlap run --all --priority-fallback` N times (default 3), each
# into OUT/all-K with its log, then OUT/table.md from bench/run_all_table.py: per run the wall
# time, output size, the time of the study, the preemption matrix and the rest, the study's
# rounds, stop and decisions, and how well the progress lines' "about X left" held.
#
# Usage: bench/run_all_repeat.sh OUT_DIR [N] [extra gpuoverlap run options]
#        (the gpuoverlap binary on PATH)
set -uo pipefail
out=${1:?usage: run_all_repeat.sh OUT_DIR [N] [options]}
runs=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/repeat.sh
. "$here/repeat.sh"
repeat_runs "$out" "$runs" all run --all --priority-fallback "$@"
python3 "$here/run_all_table.py" "$out" | tee "$out/table.md"
