#!/usr/bin/env bash
# The non-intrusiveness study, repeated: does it decide, and the same way each time? Runs the
# preset N times (default 3) with the main job's options, each into OUT/study-K, and writes
# OUT/table.md with bench/study_table.py: per run, its wall time, output size, rounds and why
# it stopped; per run, condition and primary endpoint, the decision, the effect and its
# interval.
#
# Usage: bench/study_repeat.sh OUT_DIR [N] [extra gpuoverlap run options]
#        (the gpuoverlap binary on PATH)
set -uo pipefail
out=${1:?usage: study_repeat.sh OUT_DIR [N] [options]}
runs=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/repeat.sh
. "$here/repeat.sh"
repeat_runs "$out" "$runs" study run non-intrusiveness --priority-fallback "$@"
python3 "$here/study_table.py" "$out" | tee "$out/table.md"
