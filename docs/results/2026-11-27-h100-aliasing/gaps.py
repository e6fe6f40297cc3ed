#!/usr/bin/python3
"""The hand-over's own cost: per run and mode, the gap from Read Shadow's end to Draw Bloom's
start (poll clock, p50 over frames; disturbed stamps left out) and the frame's GPU span p50,
for aliasing-handover, its legacy twin and aliasing-separate (no hand-over).
Usage: gaps.py DIR...  (each DIR a barrier-lab folder: tar xzf raw-N.tar.gz -C N)"""
import os
import sys

import pandas as pd

SCENARIOS = ['aliasing-separate', 'aliasing-handover', 'aliasing-handover-legacy']
print('| run | mode | scenario | Read Shadow end → Draw Bloom start, p50 µs (frames) | '
      'frame span p50 µs |')
print('|---|---|---|---|---|')
for lab in sys.argv[1:]:
    for mode in ['poll-only', 'with-timestamps']:
        for name in SCENARIOS:
            folder = os.path.join(lab, 'barrier-lab', mode, name)
            records = pd.read_csv(os.path.join(folder, 'records.csv.gz'))
            records = records[records['poll_disturbed'].isna()]
            end = records[records.workload == 'Read Shadow'].set_index('frame')['poll_end_us']
            start = records[records.workload == 'Draw Bloom'].set_index('frame')['poll_start_us']
            gap = (start - end).dropna()
            span = pd.read_csv(os.path.join(folder, 'frames.csv'))['gpu_span_us'].median()
            print(f'| {os.path.basename(lab.rstrip("/"))} | {mode} | `{name}` | '
                  f'{gap.median():.1f} ({len(gap)}) | {span:.1f} |')
