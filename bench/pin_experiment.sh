#!/bin/bash
# Is the per-process spread of cpu_submit_us a matter of where the threads land? 16 runs of
# `default` (500 frames), alternating: unpinned, then the whole process pinned to CPUs 4,5
# with taskset (no background work here, so only the frame loop and the poller are pinned).
# Usage, with the gpuoverlap binary on PATH, on a machine with CPUs 4 and 5:
#   OUT=OUT_DIR bench/pin_experiment.sh
# OUT: the output folder (environment variable OUT); the runs land in $OUT/p.
export __GL_SHADER_DISK_CACHE=0
nproc; lscpu | grep -E "Thread|Core|Socket|Model name|MHz" ; cat /sys/devices/system/cpu/cpu4/topology/thread_siblings_list
for i in $(seq 1 16); do
  gpuoverlap run default --frames 500 --out $OUT/p/free-$i > /dev/null 2>&1
  taskset -c 4,5 gpuoverlap run default --frames 500 --out $OUT/p/pinned-$i > /dev/null 2>&1
done
/usr/bin/env python3 - <<'PY'
import csv, os, statistics as st
out = os.environ['OUT'] + '/p'
for kind in ('free', 'pinned'):
    sub, frame = [], []
    for i in range(1, 17):
        rows = list(csv.DictReader(open(f'{out}/{kind}-{i}/default/frames.csv')))
        sub.append(st.median(float(r['cpu_submit_us']) for r in rows))
        frame.append(st.median(float(r['cpu_frame_us']) for r in rows))
    print(kind, 'cpu_submit_us medians:', ' '.join(f'{x:.0f}' for x in sub))
    print(kind, 'cpu_frame_us medians:', ' '.join(f'{x:.0f}' for x in frame))
PY
