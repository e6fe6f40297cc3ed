#!/usr/bin/python3
"""Per run, mode and scenario: each copy's duration p50 on the poll clock (start stamp to end
stamp) and on the timestamp clock, and the gap from each copy's end to its reader's start
(poll clock, p50; disturbed stamps left out). Usage: durations.py DIR...
(each DIR holds a barrier lab: tar xzf raw-N.tar.gz -C N)"""
import os
import sys

import pandas as pd

SCENARIOS = ['upload-texture', 'upload-texture-legacy', 'upload-copy', 'upload-copy-legacy']
print('| run | mode | scenario | copy | poll µs | ts µs | copy end → reader start, poll µs |')
print('|---|---|---|---|---|---|---|')
for lab in sys.argv[1:]:
    for mode in ['poll-only', 'with-timestamps']:
        for name in SCENARIOS:
            d = pd.read_csv(os.path.join(lab, 'barrier-lab', mode, name, 'records.csv.gz'))
            d = d[d['poll_disturbed'].isna()]
            for copy in [w for w in d.workload.unique() if w.startswith('Upload')]:
                c = d[d.workload == copy].set_index('frame')
                reader = d[d.depends_on == copy].set_index('frame')
                ts = (c.ts_end_us - c.ts_start_us).median() if c.ts_start_us.notna().any() else None
                gap = (reader.poll_start_us - c.poll_end_us).dropna().median()
                print(f'| {os.path.basename(lab.rstrip("/"))} | {mode} | `{name}` | {copy} | '
                      f'{(c.poll_end_us - c.poll_start_us).median():.0f} | '
                      f'{"–" if ts is None else f"{ts:.0f}"} | {gap:.1f} |')
