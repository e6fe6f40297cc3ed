#!/usr/bin/env python3
"""Markdown tables of a gpuoverlap results directory: per scenario and workload, p50 start,
end and duration on each clock (plus the p5-p95 spread of the duration), from summary.csv,
with the device from meta.json. Standard library only.

Usage: bench/results_tables.py RESULTS_DIR [RESULTS_DIR...] > tables.md
"""
import csv
import json
import pathlib
import sys


def scenario_dirs(results):
    run = json.loads((results / "run.json").read_text())
    for entry in run["scenarios"]:
        if entry.get("directory"):
            yield results / entry["directory"]


def table(directory):
    meta = json.loads((directory / "meta.json").read_text())
    rows = list(csv.DictReader((directory / "summary.csv").open()))
    clocks = [c for c in ("poll", "ts") if any(r["clock"] == c for r in rows)]
    device = meta["device"]
    queues = ", ".join(
        f"{q['name']}: family {q['family']} ({q['family_flags']}), priority {q['priority_granted']}"
        + (f", shares {q['shares_queue_of']}" if q.get("shares_queue_of") else "")
        for q in meta["queues"])
    out = [f"### {meta['scenario']['name']}", "",
           f"{meta['scenario']['description']}  ",
           f"{device['name']}, driver {device['driver_name']} {device['driver_info']}; {queues}; "
           f"{meta['settings']['frames']} frames; timestamp queries "
           f"{'on' if meta['settings'].get('timestamp_queries', True) else 'off'}.", ""]
    header = ["workload", "queue"]
    for c in clocks:
        header += [f"{c} start", f"{c} end", f"{c} duration (p5-p95)"]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    workloads = []
    for r in rows:
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
    for w in workloads:
        cells = None
        for c in clocks:
            match = [r for r in rows if r["workload"] == w and r["clock"] == c]
            if not match:
                cells = (cells or [w, ""]) + ["", "", ""]
                continue
            r = match[0]
            cells = (cells or [w, r["queue"]]) + [
                f"{float(r['start_p50_us']):.1f}", f"{float(r['end_p50_us']):.1f}",
                f"{float(r['duration_p50_us']):.1f} ({float(r['duration_p5_us']):.1f}-"
                f"{float(r['duration_p95_us']):.1f})"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return "\n".join(out)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    for results in map(pathlib.Path, argv[1:]):
        if not (results / "run.json").exists():
            sys.exit(f"{results}: no run.json (not a gpuoverlap results directory)")
        print(f"## {results.name}\n\nTimes in µs from the frame's gate release, p50 over frames.\n")
        for d in scenario_dirs(results):
            print(table(d))


if __name__ == "__main__":
    main(sys.argv)
