#!/usr/bin/env python3
"""Per run, mode and scenario: in how many frames Simulate (COMPUTE queue) ran alone before the
draw on the DIRECT queue got going (it ends within 200 us of the gate), and its median poll
duration. Usage, in this folder after unpacking raw-N.tar.gz into N/: ./modes.py 1 2 3"""
import csv
import gzip
import sys

print('| run | mode | scenario | frames Simulate ran first | Simulate p50 (poll) |')
print('|---|---|---|---|---|')
for run in sys.argv[1:]:
    for mode in ('with-timestamps', 'poll-only'):
        for scenario in ('readback', 'readback-legacy'):
            path = f'{run}/barrier-lab/{mode}/{scenario}/records.csv.gz'
            rows = [r for r in csv.DictReader(gzip.open(path, 'rt'))
                    if r['workload'] == 'Simulate' and r['poll_end_us']]
            first = sum(1 for r in rows if float(r['poll_end_us']) < 200)
            durations = sorted(float(r['poll_end_us']) - float(r['poll_start_us']) for r in rows)
            print(f'| {run} | {mode} | {scenario} | {first} of {len(rows)} | '
                  f'{durations[len(durations) // 2]:.1f} us |')
