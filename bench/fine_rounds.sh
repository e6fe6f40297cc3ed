#!/bin/bash
# bench/fine-rounds.toml with a device per scenario, then with one shared device and no
# washout, on the GPU machine from the repository root; prints the managed condition's CPU
# verdict rows both ways and packs the frames, meta and verdicts into one file.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/fine_rounds.sh
# OUT: the output folder (environment variable OUT).
export __GL_SHADER_DISK_CACHE=0
set -u
run() {  # $1: label, then extra arguments
  local label=$1; shift
  local start=$SECONDS
  gpuoverlap run bench/fine-rounds.toml --study-budget-s 0 --out "$OUT/r/$label" "$@" \
    > "$OUT/r/$label.log" 2>&1
  echo "$label: exit $? in $((SECONDS - start)) s"
}
mkdir -p "$OUT/r"
run per-scenario
run shared --share-device --washout-ms 0
/usr/bin/env python3 - <<'PY'
import csv, os
root = os.environ['OUT'] + '/r'
for label in ('per-scenario', 'shared'):
    for row in csv.DictReader(open(f'{root}/{label}/fine-rounds/verdict.csv')):
        if row['condition'] == 'managed' and not row['metric'].startswith('gpu_duration_us:Compute '):
            print(f"{label:12} {row['metric']:26} {row['ratio_p50']} [{row['ci_low']}, {row['ci_high']}] "
                  f"tail {row['tail_excess']} [{row['tail_ci_low']}, {row['tail_ci_high']}] units {row['units']} -> {row['verdict']}")
PY
cd "$OUT/r" && find . \( -name frames.csv -o -name 'verdict.*' -o -name '*.log' -o -name run.json \) -print0 \
  | tar --null -T - -cJf "$OUT/fine-rounds.tar.xz" && rm -rf "$OUT/r"
ls -la "$OUT"
