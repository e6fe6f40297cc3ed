#!/usr/bin/env python3
"""The table of bench/decisions.sh: every study verdict.json under OUT/run-*/ (the standard
library only, so it runs wherever the runs ran).

Per run: exit status, wall time, output size, and each study's rounds. Per study and condition
over the runs: how often it was called intrusive, non-intrusive or inconclusive, its late
frames and frame-interval median beside the baseline's (means over runs), and for the null
control the false-alarm rate.

Usage: decisions_table.py OUT_DIR"""
import json
import sys
from collections import defaultdict
from pathlib import Path


def main():
    out = Path(sys.argv[1])
    runs = []
    for line in (out / "runs.txt").read_text().splitlines():
        name, _, status, _, wall, _, size = line.split()
        runs.append((name, status, float(wall), int(size)))
    print("| run | exit | wall (s) | output (MB) | study: rounds, stop |")
    print("|---|---|---|---|---|")
    decisions = defaultdict(lambda: defaultdict(int))
    pacing = defaultdict(list)
    null = {}
    for name, status, wall, size in runs:
        studies = []
        for verdict in sorted((out / name).glob("**/verdict.json")):
            v = json.loads(verdict.read_text())
            study = v.get("study", verdict.parent.name)
            progress = v.get("progress", {})
            studies.append(f"{study}: {progress.get('rounds_run', '?')}, {progress.get('stop', '?')}")
            base = v.get("baseline_pacing") or {}
            for c in v.get("conditions", []):
                key = (study, c["condition"])
                decisions[key][c["verdict"]] += 1
                p = c.get("pacing") or {}
                if p.get("frames") and base.get("frames"):
                    pacing[key].append((p["late"] / p["frames"], base["late"] / base["frames"],
                                        p["interval_p50_us"], base["interval_p50_us"],
                                        p["stutters"] / p["frames"], base["stutters"] / base["frames"]))
                if c.get("null_control"):
                    calls = null.setdefault(study, [0, 0])
                    calls[0] += c["verdict"] == "intrusive"
                    calls[1] += 1
        print(f"| {name} | {status} | {wall:.1f} | {size / 1e6:.1f} | {'; '.join(studies)} |")
    print()
    print("| study | condition | intrusive | non-intrusive | inconclusive | late frames (baseline) "
          "| stutters (baseline) | interval p50, µs (baseline) |")
    print("|---|---|---|---|---|---|---|---|")
    for (study, condition), counts in decisions.items():
        undecided = sum(n for d, n in counts.items() if d.startswith("inconclusive"))
        rows = pacing.get((study, condition), [])

        def mean(i):
            return sum(r[i] for r in rows) / len(rows)

        late = f"{100 * mean(0):.1f} % ({100 * mean(1):.1f} %)" if rows else ""
        stutters = f"{100 * mean(4):.1f} % ({100 * mean(5):.1f} %)" if rows else ""
        median = f"{mean(2):.0f} ({mean(3):.0f})" if rows else ""
        print(f"| {study} | {condition} | {counts.get('intrusive', 0)} | "
              f"{counts.get('non-intrusive', 0)} | {undecided} | {late} | {stutters} | {median} |")
    if null:
        print()
        for study, (false, total) in null.items():
            print(f"Null control of `{study}`: called intrusive in {false} of {total} studies "
                  f"({100 * false / total:.0f} %).")


if __name__ == "__main__":
    main()
