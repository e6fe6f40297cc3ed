#!/usr/bin/env python3
"""The table of bench/study_repeat.sh, from each run's verdict.csv and verdict.json (the
standard library only, so it runs wherever the study ran).

Usage: study_table.py OUT_DIR"""
import csv
import json
import sys
from pathlib import Path


def number(text, digits=3):
    return f"{float(text):.{digits}f}" if text not in ("", None) else ""


def main():
    out = Path(sys.argv[1])
    runs = {}
    for line in (out / "runs.txt").read_text().splitlines():
        name, _, status, _, wall, _, size = line.split()
        runs[name] = (status, wall, int(size))
    print("| run | exit | wall (s) | output (MB) | rounds | stop | control detected from |")
    print("|---|---|---|---|---|---|---|")
    for name, (status, wall, size) in runs.items():
        verdict = out / name / "non-intrusiveness" / "verdict.json"
        if not verdict.exists():
            print(f"| {name} | {status} | {wall} | {size / 1e6:.1f} | | no verdict | |")
            continue
        v = json.loads(verdict.read_text())
        p = v["progress"]
        print(f"| {name} | {status} | {wall} | {size / 1e6:.1f} | {p['rounds_run']} | {p['stop']} "
              f"| {v['detected_from_threads']} |")
    print()
    print("| run | condition | verdict | compiles/s | endpoint | tests | median ratio [low, high] "
          "| tail excess, points [low, high] | endpoint verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in runs:
        base = out / name / "non-intrusiveness"
        if not (base / "verdict.csv").exists():
            continue
        v = json.loads((base / "verdict.json").read_text())
        conditions = {c["condition"]: c for c in v["conditions"]}
        with open(base / "verdict.csv", newline="") as f:
            for row in csv.DictReader(f):
                if row["role"] != "primary":
                    continue
                c = conditions[row["condition"]]
                verdict = "non-intrusive but starved" if c.get("starved") else c["verdict"]
                tail = (f"{100 * float(row['tail_excess']):+.1f} [{100 * float(row['tail_ci_low']):+.1f}, "
                        f"{100 * float(row['tail_ci_high']):+.1f}]" if row["tail_excess"] else "")
                median = (f"{number(row['ratio_p50'])} [{number(row['ci_low'])}, "
                          f"{number(row['ci_high'])}]" if row["ratio_p50"] else "")
                print(f"| {name} | {row['condition']} | {verdict} | "
                      f"{c['progress']['compiles_per_s']:.1f} | {row['metric']} | {row['tests']} | "
                      f"{median} | {tail} | {row['verdict']} |")


if __name__ == "__main__":
    main()
