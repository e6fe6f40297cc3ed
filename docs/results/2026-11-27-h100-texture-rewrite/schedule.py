#!/usr/bin/python3
"""Per run, mode and scenario: the workloads' shader-clock durations (p50 µs), where Write mip 1
starts after Write mip 0, the gap from Write mip 1's end to Rewrite mip 0's start, and the share
of frames in which the pairs overlap. Usage: schedule.py DIR... (tar xzf raw-N.tar.gz -C N)"""
import os
import sys

import pandas as pd

print('| run | mode | scenario | Write mip 0 | Write mip 1 | Rewrite mip 0 | mip 1 starts after mip 0 by '
      '| Write mip 1 end → Rewrite start | mip 0 ∥ mip 1 | Rewrite ∥ mip 1 |')
print('|---|---|---|---|---|---|---|---|---|---|')
for lab in sys.argv[1:]:
    for mode in ['poll-only', 'with-timestamps']:
        for name in ['texture-rewrite', 'texture-rewrite-legacy']:
            d = pd.read_csv(os.path.join(lab, 'barrier-lab', mode, name, 'records.csv.gz'))
            w = {n: d[d.workload == n].set_index('frame') for n in d.workload.unique()}
            w0, w1, rw = w['Write mip 0'], w['Write mip 1'], w['Rewrite mip 0']
            dur = lambda x: (x.clk_end_us - x.clk_start_us).median()
            print(f'| {os.path.basename(lab.rstrip("/"))} | {mode} | `{name}` | {dur(w0):.1f} | '
                  f'{dur(w1):.1f} | {dur(rw):.1f} | '
                  f'{(w1.clk_start_us - w0.clk_start_us).median():.1f} | '
                  f'{(rw.clk_start_us - w1.clk_end_us).median():.1f} | '
                  f'{(w1.clk_start_us < w0.clk_end_us).mean():.0%} | '
                  f'{(rw.clk_start_us < w1.clk_end_us).mean():.0%} |')
