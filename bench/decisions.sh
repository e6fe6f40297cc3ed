#!/usr/bin/env bash
# Does a study decide, the same way each time, and does its null control stay quiet? Runs the
# main job (default) or one study N times (default 3), each into OUT/run-K with its log, then
# OUT/decisions.md from bench/decisions_table.py: per condition, how often each decision came,
# its late frames and median against the baseline's, and the null control's false alarms.
#
# Usage: bench/decisions.sh OUT_DIR [N] [extra gpuoverlap run options]
#        STUDY=FILE_OR_PRESET bench/decisions.sh ...   one study instead of run --all
#        (the gpuoverlap binary on PATH)
set -uo pipefail
out=${1:?usage: decisions.sh OUT_DIR [N] [options]}
runs=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/repeat.sh
. "$here/repeat.sh"
if [ -n "${STUDY:-}" ]; then
  repeat_runs "$out" "$runs" run run "$STUDY" --priority-fallback "$@"
else
  repeat_runs "$out" "$runs" run run --all --priority-fallback "$@"
fi
/usr/bin/python3 "$here/decisions_table.py" "$out" | tee "$out/decisions.md"
