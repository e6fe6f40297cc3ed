#!/usr/bin/env python3
"""The tables of bench/background_policies.sh and bench/engine_styles.sh, from each run's
STUDY/verdict.json and verdict.csv (the standard library only, so it runs wherever the study
ran): per condition, its decision in each run, its progress (compiles per second, queue-to-done
p50/p99) and its late frames against the baseline's, and where the run had the kernel's record
(--sched-trace) the frame loop's time behind background threads and how it mostly lost it; then
the conditions not run on the host, with why.

Usage: policies_table.py OUT_DIR [STUDY]  (STUDY: default background-policies)"""
import csv
import json
import sys
from pathlib import Path

STUDY = "background-policies"


def late(pacing):
    if not isinstance(pacing, dict) or not pacing.get("frames"):
        return None
    return 100.0 * pacing.get("late", 0) / pacing["frames"]


def main():
    out = Path(sys.argv[1])
    study = sys.argv[2] if len(sys.argv) > 2 else STUDY
    runs = [line.split()[0] for line in (out / "runs.txt").read_text().splitlines()]
    verdicts = {}
    for run in runs:
        path = out / run / study / "verdict.json"
        if path.exists():
            verdicts[run] = json.loads(path.read_text())
    print("| run | rounds | stop | positive control | null control |")
    print("|---|---|---|---|---|")
    for run, v in verdicts.items():
        null = next((c["verdict"] for c in v["conditions"] if c.get("null_control")), "")
        control = (f"detected from {v['detected_from_threads']} thread" if v.get("control_detected")
                   else "not detected")
        print(f"| {run} | {v['progress']['rounds_run']} | {v['progress']['stop']} | {control} "
              f"| {null} |")
    print()
    names = []
    for v in verdicts.values():
        for c in v["conditions"]:
            if c["condition"] not in names and not c.get("null_control"):
                names.append(c["condition"])
    print("| condition | scheduling | decision per run | compiles/s per run | queue-to-done p50 / "
          "p99 (ms), first run | commit to its event (ms), median per run | late frames per "
          "run (baseline) | frame interval median ratio [95 % interval], first run | frame loop "
          "behind background threads (ms) per run, and mostly |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        decisions, rates, lates, commits, scheduling, latency, ratio = [], [], [], [], "", "", ""
        behind, most = [], ""
        for run, v in verdicts.items():
            c = next((c for c in v["conditions"] if c["condition"] == name), None)
            if c is None:
                decisions.append("-")
                continue
            scheduling = c.get("scheduling") or ("positive control" if c.get("control") else "")
            decisions.append(c["verdict"] + (" (starved)" if c.get("starved") else ""))
            sched = c.get("sched")
            if sched:
                behind.append(f"{sched['to_background_ms']:.1f}")
                if not most and sched.get("most_way"):
                    most = f"{sched['most_way']} ({sched['most_times']} times, p50 {sched['most_p50_ms']:.2f} ms)"
            p = c["progress"]
            rates.append(f"{p['compiles_per_s']:.1f}")
            if p.get("commit_to_event_p50_ms") is not None:
                commits.append(f"{p['commit_to_event_p50_ms']:.0f}"
                               + (f" ({p['commits_not_signalled']} never)"
                                  if p.get("commits_not_signalled") else ""))
            elif p.get("commits_not_signalled"):
                commits.append("never")
            share, base = late(c.get("pacing")), late(v.get("baseline_pacing"))
            if share is not None and base is not None:
                lates.append(f"{share:.0f} % ({base:.1f} %)")
            if not latency and p.get("queue_to_done_p50_ms") is not None:
                latency = f"{p['queue_to_done_p50_ms']:.0f} / {p['queue_to_done_p99_ms']:.0f}"
            if not ratio:
                with open(out / run / study / "verdict.csv", newline="") as f:
                    for row in csv.DictReader(f):
                        if (row["condition"] == name and row["metric"] == "frame_interval_us"
                                and row.get("role", "primary") == "primary" and row["ratio_p50"]):
                            ratio = (f"×{float(row['ratio_p50']):.3f} [{float(row['ci_low']):.3f}, "
                                     f"{float(row['ci_high']):.3f}]")
        print(f"| {name} | {scheduling} | {', '.join(decisions)} | {', '.join(rates)} | {latency} "
              f"| {', '.join(commits)} | {', '.join(lates)} | {ratio} | {', '.join(behind)}"
              f"{'; ' + most if most else ''} |")
    print()
    not_run = {}
    for v in verdicts.values():
        for n in v.get("not_run", []):
            not_run.setdefault(n["condition"], n["why"])
    if not_run:
        print("| not run on this host | why |")
        print("|---|---|")
        for name, why in not_run.items():
            print(f"| {name} | {why} |")


if __name__ == "__main__":
    main()
