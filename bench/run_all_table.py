#!/usr/bin/env python3
"""The table of bench/run_all_repeat.sh, from each run's run.json, the study's verdict.json and
the log's progress lines (the standard library only, so it runs wherever the suite ran).

The progress check: every progress line "[i/N] NAME: ... (E in, about L left)" predicts the
time from that line to the end of the suite; the actual time left is the suite's end (the
last scenario's start plus its seconds in run.json) minus E. The table gives the prediction's
error at the study's first scenario and the largest error over the study's lines with at
least 10 s left.

Usage: run_all_table.py OUT_DIR"""
import json
import re
import sys
from pathlib import Path

STUDY = "non-intrusiveness"
LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+): .*\((?P<in>[^,]+) in, about (?P<left>[^,)]+) left")


def seconds(text):
    """'42 s', '3 min 10 s', '1 h 5 min' as seconds."""
    total = 0.0
    for number, unit in re.findall(r"(\d+) (h|min|s)\b", text):
        total += int(number) * {"h": 3600, "min": 60, "s": 1}[unit]
    return total


def progress_errors(log_text, scenarios):
    """(name, predicted_s, actual_s) for every progress line of the log."""
    started = {}
    rows = []
    for line in log_text.splitlines():
        m = LINE.match(line)
        if m:
            rows.append((m.group(3), seconds(m.group("in")), seconds(m.group("left"))))
            started[m.group(3)] = seconds(m.group("in"))
    if not scenarios or scenarios[-1]["name"] not in started:
        return []
    end = started[scenarios[-1]["name"]] + scenarios[-1]["seconds"]
    return [(name, left, end - elapsed) for name, elapsed, left in rows]


def main():
    out = Path(sys.argv[1])
    runs = {}
    for line in (out / "runs.txt").read_text().splitlines():
        name, _, status, _, wall, _, size = line.split()
        runs[name] = (status, float(wall), int(size))
    print("| run | exit | wall (s) | output (MB) | study (s) | matrix (s) | rest (s) | rounds | stop "
          "| control from | managed | commit-high-priority | estimate at the study's start "
          "| worst estimate in the study |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (status, wall, size) in runs.items():
        run_json = out / name / "run.json"
        if not run_json.exists():
            print(f"| {name} | {status} | {wall} | {size / 1e6:.1f} |" + " |" * 10)
            continue
        scenarios = json.loads(run_json.read_text())["scenarios"]
        study_s = sum(s["seconds"] for s in scenarios if s["name"].startswith(STUDY + "/"))
        matrix_s = sum(s["seconds"] for s in scenarios if s["name"].startswith("preemption-"))
        rest_s = sum(s["seconds"] for s in scenarios) - study_s - matrix_s
        verdict_path = out / name / STUDY / "verdict.json"
        rounds = stop = control = ""
        decided = {}
        if verdict_path.exists():
            v = json.loads(verdict_path.read_text())
            rounds, stop = v["progress"]["rounds_run"], v["progress"]["stop"]
            control = v.get("detected_from_threads")
            decided = {c["condition"]: c["verdict"] for c in v["conditions"]}
        log = out / f"{name}.log"
        errors = progress_errors(log.read_text(errors="replace") if log.exists() else "", scenarios)
        # Lines with less than 10 s left are left out: rounding to whole seconds dominates.
        in_study = [(p, a) for n, p, a in errors if n.startswith(STUDY + "/") and a >= 10]

        def describe(predicted, actual):
            return f"{predicted:.0f} s for {actual:.0f} s ({100 * (predicted - actual) / actual:+.0f} %)"

        first = describe(*in_study[0]) if in_study else ""
        worst = max(in_study, key=lambda pa: abs(pa[0] - pa[1]) / pa[1]) if in_study else None
        print(f"| {name} | {status} | {wall} | {size / 1e6:.1f} | {study_s:.1f} | {matrix_s:.1f} "
              f"| {rest_s:.1f} | {rounds} | {stop} | {control} | {decided.get('managed', '')} "
              f"| {decided.get('commit-high-priority', '')} | {first} "
              f"| {describe(*worst) if worst else ''} |")


if __name__ == "__main__":
    main()
