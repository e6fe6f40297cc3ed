#!/bin/bash
# bench/device-sharing.toml with a device per scenario, then with one shared device (without a
# washout: neither condition is heavy enough to carry over), on the GPU
# machine from the repository root; prints the per-round medians of the CPU metrics and the
# managed condition's cpu_submit_us verdict both ways, and packs the results into one file.
# Usage, with the gpuoverlap binary on PATH, from the repository root or a copy holding bench/:
#   OUT=OUT_DIR bench/device_sharing.sh
# OUT: the output folder (environment variable OUT).
export __GL_SHADER_DISK_CACHE=0
set -u
run() {  # $1: label, then extra arguments
  local label=$1; shift
  gpuoverlap run bench/device-sharing.toml --study-budget-s 0 --out "$OUT/r/$label" "$@" \
    > "$OUT/r/$label.log" 2>&1
  echo "$label: exit $?"
}
mkdir -p "$OUT/r"
run per-scenario
run shared --share-device --washout-ms 0
/usr/bin/env python3 - <<'PY'
import csv, os, statistics as st
root = os.environ['OUT'] + '/r'
for label in ('per-scenario', 'shared'):
    study = f'{root}/{label}/device-sharing'
    for condition in ('baseline', 'managed'):
        for metric in ('cpu_submit_us', 'cpu_frame_us'):
            medians = []
            for r in range(1, 25):
                path = f'{study}/{condition}/round-{r}/frames.csv'
                if not os.path.exists(path): continue
                rows = [row for row in csv.DictReader(open(path)) if row['status'] == 'ok']
                medians.append(st.median(float(x[metric]) for x in rows))
            print(f'{label:12} {condition:8} {metric:13} per-round medians: sd {st.stdev(medians):6.1f}, '
                  f'range {min(medians):.0f}-{max(medians):.0f}, median {st.median(medians):.0f}')
    for row in csv.DictReader(open(f'{study}/verdict.csv')):
        if row['condition'] == 'managed' and row['metric'] in ('cpu_submit_us', 'cpu_frame_us'):
            print(f"{label:12} managed {row['metric']}: ratio {row['ratio_p50']} "
                  f"[{row['ci_low']}, {row['ci_high']}] tail {row['tail_excess']} -> {row['verdict']}")
PY
cd "$OUT/r" && find . \( -name frames.csv -o -name meta.json -o -name 'verdict.*' -o -name summary.csv -o -name '*.log' -o -name run.json \) -print0 \
  | tar --null -T - -cJf "$OUT/device-sharing.tar.xz" && rm -rf "$OUT/r"
ls -la "$OUT"
