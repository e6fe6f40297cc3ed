#!/usr/bin/env python3
"""Markdown tables of preemption runs: one row per configuration (load, urgent priority,
process mode) with the urgent job's latency percentiles (poll clock, and ts p99), deadline
misses, the load's slowdown and the classification, from each scenario's summary.csv,
preemption.csv and meta.json.

Usage: preemption_table.py RESULTS_DIR...   (directories written by gpuoverlap run)
"""
import csv
import json
import pathlib
import sys


def rows(results):
    for meta_path in sorted(pathlib.Path(results).rglob("meta.json")):
        meta = json.loads(meta_path.read_text())
        if "preemption" not in meta:
            continue
        d = meta_path.parent
        summary = {}
        with open(d / "summary.csv", newline="") as f:
            for r in csv.DictReader(f):
                if r["workload"] == "urgent":
                    summary[r["clock"]] = r
        with open(d / "preemption.csv", newline="") as f:
            urgent = list(csv.DictReader(f))
        running = [r for r in urgent if r["load_running"] == "1"]
        # Waited for the running load to end: started within max(200 µs, 5 %) of its end.
        waited = [r for r in running if r["latency_us"] and r["load_remaining_us"]
                  and float(r["latency_us"]) >= float(r["load_remaining_us"])
                  - max(200.0, 0.05 * float(r["load_remaining_us"]))]
        calls = sorted(float(r["submit_call_us"]) for r in urgent if r["submit_call_us"])
        p = meta["preemption"]
        spec = p["spec"]
        poll = summary.get("poll") or summary.get("ts") or {}
        ts = summary.get("ts", {})
        loads = "; ".join(s["description"] for s in p.get("load_sizes", []))
        yield {
            "load": spec["load"],
            "priority": f"{spec['priority']} → {p['priority_granted']}"
            if spec["priority"] != p["priority_granted"] else spec["priority"],
            "process": p["process"],
            "size": loads,
            "p50": poll.get("latency_p50_us", ""),
            "p95": poll.get("latency_p95_us", ""),
            "p99": poll.get("latency_p99_us", ""),
            "max": poll.get("latency_max_us", ""),
            "ts_p99": ts.get("latency_p99_us", ""),
            "misses": f"{poll.get('deadline_misses', '')}/{len(urgent)}",
            "during_load": f"{len(running)}/{len(urgent)}",
            "waited": f"{100.0 * len(waited) / len(running):.0f}%" if running else "-",
            "submit_call": calls[len(calls) // 2] if calls else "",
            "skipped": p.get("skipped_ticks", ""),
            "slowdown": poll.get("load_slowdown", ""),
            "class": poll.get("preemption", ""),
            "failure": (meta.get("failure") or {}).get("message", ""),
        }


def fmt(value):
    try:
        v = float(value)
    except (TypeError, ValueError):
        return value or "-"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    print("| load | urgent priority | process | load size | p50 µs | p95 µs | p99 µs | max µs "
          "| ts p99 µs | deadline misses | skipped ticks | waited for the load's end "
          "| submit call p50 µs | load slowdown | class |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for results in argv[1:]:
        for r in rows(results):
            slowdown = f"{float(r['slowdown']):.2f}×" if r["slowdown"] else "-"
            cls = r["class"] + (f" (failed: {r['failure']})" if r["failure"] else "")
            print(f"| {r['load']} | {r['priority']} | {r['process']} | {r['size']} | {fmt(r['p50'])} "
                  f"| {fmt(r['p95'])} | {fmt(r['p99'])} | {fmt(r['max'])} | {fmt(r['ts_p99'])} "
                  f"| {r['misses']} | {r['skipped']} | {r['waited']} | {fmt(r['submit_call'])} "
                  f"| {slowdown} | {cls} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
