#!/usr/bin/python3
"""Per run, mode and scenario: each copy dependency's gap (the consumer's start less its
producer's end, p50 and minimum of the frames, per clock, with the count of negative gaps) and
each copy's median poll duration. Usage, in this folder after unpacking raw-N.tar.gz into N/:
./gaps.py 1 2"""
import sys

import pandas as pd

SCENARIOS = ['readback', 'readback-legacy', 'upload-copy', 'upload-copy-legacy',
             'upload-texture', 'upload-texture-legacy']
print('| run | mode | scenario | dependency | clock | gap p50 | gap min | negative | copy p50 |')
print('|---|---|---|---|---|---|---|---|---|')
for run in sys.argv[1:]:
    for mode in ('poll-only', 'with-timestamps'):
        clocks = ['poll', 'ts'] if mode == 'with-timestamps' else ['poll']
        for scenario in SCENARIOS:
            df = pd.read_csv(f'{run}/barrier-lab/{mode}/{scenario}/records.csv.gz')
            df = df[df.status == 'ok']
            for consumer in df.workload.unique():
                deps = df[df.workload == consumer].depends_on.dropna()
                if deps.empty:
                    continue
                producer = deps.iloc[0]
                copy = consumer if (df[df.workload == consumer].kind == 'copy').all() else producer
                c = df[df.workload == copy]
                copy_p50 = (c.poll_end_us - c.poll_start_us).median()
                a = df[df.workload == producer].set_index('frame')
                b = df[df.workload == consumer].set_index('frame')
                for clock in clocks:
                    gap = (b[f'{clock}_start_us'] - a[f'{clock}_end_us']).dropna()
                    print(f'| {run} | {mode} | {scenario} | {producer} → {consumer} | {clock} | '
                          f'{gap.median():.1f} µs | {gap.min():.1f} µs | {(gap < 0).sum()} | '
                          f'{copy_p50:.1f} µs |')
