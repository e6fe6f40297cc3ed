#!/usr/bin/env python3
"""What shared the frame loop's CPU, interval by interval: for each condition of a study folder,
its frame intervals (frames.csv: each record's interval runs from the frame before's start to its
own) grouped by whether a background compile's thread ran on the CPU the frame loop started the
frame on (background.csv: cpu_start or cpu_end, a compile running in the interval) and whether a
worker ran the frame before's jobs, which run in this interval, on the CPU the frame loop started
that frame on (the frame before's workers_on_loop_cpu), with the frame loop's mean run delay, mean
interval and share of late frames in each group. The standard library only.

Usage: frame_loop_cpu_table.py STUDY_DIR [LATE_LINE_US]   (default late line 8400 us)"""
import csv
import sys
from collections import defaultdict
from pathlib import Path


def number(text):
    return float(text) if text not in ("", None) else None


def compiles_on_cpu(tasks, begin_us, end_us, cpu):
    """Whether a compile that ran in [begin_us, end_us) started or ended on `cpu`."""
    for t in tasks:
        start, finish = number(t["start_us"]), number(t["finish_us"])
        if start is None or number(t.get("cpu_start")) is None:
            continue
        if start >= end_us or (finish is not None and finish <= begin_us):
            continue
        if cpu in (number(t["cpu_start"]), number(t["cpu_end"])):
            return True
    return False


def main():
    study = Path(sys.argv[1])
    late_line_us = float(sys.argv[2]) if len(sys.argv) > 2 else 8400.0
    print("| condition | a compile thread on its CPU | a worker on its CPU | frames | "
          "frame loop's run delay (mean) | interval (mean) | late |")
    print("|---|---|---|---|---|---|---|")
    for condition in sorted(p for p in study.iterdir() if p.is_dir()):
        groups = defaultdict(list)
        for frames_csv in sorted(condition.glob("round-*/frames.csv")):
            background_csv = frames_csv.with_name("background.csv")
            tasks = list(csv.DictReader(open(background_csv))) if background_csv.exists() else []
            before = None  # the frame before's record
            for f in csv.DictReader(open(frames_csv)):
                previous, before = before, f
                if previous is None or number(previous["frame"]) + 1 != number(f["frame"]):
                    continue
                interval, cpu = number(f["frame_interval_us"]), number(f.get("loop_cpu"))
                workers = number(previous.get("workers_on_loop_cpu"))
                if interval is None or cpu is None or workers is None:
                    continue
                start = number(f["cpu_start_us"])
                key = (compiles_on_cpu(tasks, start - interval, start, cpu), workers > 0)
                groups[key].append((number(f["loop_run_delay_us"]) or 0.0, interval))
        for (compile_there, worker_there), rows in sorted(groups.items()):
            n = len(rows)
            print(f"| {condition.name} | {'yes' if compile_there else 'no'} | "
                  f"{'yes' if worker_there else 'no'} | {n} | "
                  f"{sum(r for r, _ in rows) / n / 1000:.2f} ms | "
                  f"{sum(i for _, i in rows) / n / 1000:.2f} ms | "
                  f"{100 * sum(1 for _, i in rows if i > late_line_us) / n:.0f} % |")


if __name__ == "__main__":
    main()
