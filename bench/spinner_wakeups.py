#!/usr/bin/python3
# Counts, per idle-spinners round of a study run with --sched-trace, the wake-ups that a spinner
# thread made outside an interrupt within the measured frames, and whom they woke: a spinner that
# shares a lock with the driver or the game shows here (docs/results/2026-12-02-lavapipe-priority-inversion).
# Usage: bench/spinner_wakeups.py RESULTS_FOLDER
import gzip, json, re, sys, pathlib
root = pathlib.Path(sys.argv[1])
for rnd in sorted(root.glob('*/idle-spinners/round-*')):
    meta = json.load(open(rnd / 'meta.json'))
    a, b = meta['measured_span_ns']['start'], meta['measured_span_ns']['end']
    n = 0; runs = 0; woken = {}
    for line in gzip.open(rnd / 'sched_record.txt.gz', 'rt'):
        m = re.match(r'\s*(\S+)-(\d+)\s+\(\s*(\d+|-+)\)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+):\s+(\w+):\s*(.*)', line)
        if not m: continue
        comm, tid, tgid, cpu, flags, ts, ev, body = m.groups()
        t = int(round(float(ts) * 1e9))
        if t < a or t > b or comm != 'spinner': continue
        runs += 1
        irq = len(flags) >= 3 and flags[2] in 'hHsS'
        if ev == 'sched_wakeup' and not irq:
            n += 1
            w = re.search(r'comm=(.*?) pid=', body).group(1)
            woken[w] = woken.get(w, 0) + 1
    print(rnd, 'spinner events', runs, 'wake-ups by a spinner', n, woken)
