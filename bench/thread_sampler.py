#!/usr/bin/env python3
"""Samples every thread of one process until it exits: where each ran, in what state and
policy, and the CPU time it got. For questions such as "what was runnable, and where, while
the study stopped its background work".

Usage: bench/thread_sampler.py PID [INTERVAL_S] > threads.csv
Columns: t_s (since the first sample), tid, state (R running or runnable, S sleeping, ...),
policy (0 normal, 1 FIFO, 2 RR, 3 batch, 5 idle), nice, cpu (last ran on), cpu_s (user +
system CPU time so far), allowed (Cpus_allowed_list).
"""
import os
import sys
import time

pid = int(sys.argv[1])
interval_s = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
ticks = os.sysconf("SC_CLK_TCK")
start = time.monotonic()
print("t_s,tid,state,policy,nice,cpu,cpu_s,allowed")
while True:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        break
    now = time.monotonic() - start
    lines = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                allowed = next((l.split(":", 1)[1].strip() for l in f
                                if l.startswith("Cpus_allowed_list")), "")
        except (FileNotFoundError, ProcessLookupError):
            continue
        # Fields after the command's closing parenthesis, numbered from 3 (the state).
        fields = stat[stat.rindex(")") + 2:].split()
        state, utime, stime = fields[0], int(fields[11]), int(fields[12])
        nice, cpu, policy = fields[16], fields[36], fields[38]
        lines.append(f"{now:.3f},{tid},{state},{policy},{nice},{cpu},"
                     f"{(utime + stime) / ticks:.2f},\"{allowed}\"")
    print("\n".join(lines), flush=True)
    time.sleep(interval_s)
