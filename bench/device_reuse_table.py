#!/usr/bin/python3
"""The table of bench/device_reuse.sh: per scenario, what it measures in each mode (a frame
scenario: the median of its frames' gpu_span_us; a preemption cell: its urgent job's
latency_p50_us), the median over a mode's runs, the ratio of the modes' medians, and each
mode's spread over its runs (max / min). A scenario whose ratio lies outside both spreads is
named: the mode moved it by more than repeating it does.

Usage: device_reuse_table.py OUT_DIR   (folders reuse-K and fresh-K)"""
import csv
import statistics
import sys
from pathlib import Path


def measure(scenario_dir: Path):
    frames = scenario_dir / "frames.csv"
    spans = []
    if frames.is_file():
        with frames.open() as f:
            for row in csv.DictReader(f):
                if row.get("status") == "ok" and row.get("gpu_span_us"):
                    spans.append(float(row["gpu_span_us"]))
    if spans:
        return statistics.median(spans), "gpu_span_us p50"
    summary = scenario_dir / "summary.csv"
    if summary.is_file():
        with summary.open() as f:
            for row in csv.DictReader(f):
                if row.get("latency_p50_us"):
                    return float(row["latency_p50_us"]), "urgent latency_p50_us"
    return None, None


def runs_of(root: Path, mode: str):
    return sorted(p for p in root.glob(f"{mode}-*") if p.is_dir())


def scenario_dirs(run: Path):
    return sorted(str(p.parent.relative_to(run)) for p in run.rglob("meta.json"))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    modes = {mode: runs_of(root, mode) for mode in ("reuse", "fresh")}
    if not all(modes.values()):
        print(f"{root}: needs reuse-K and fresh-K folders", file=sys.stderr)
        return 1
    names = scenario_dirs(modes["reuse"][0])
    print("| scenario | measure | reuse (median of runs) | fresh | reuse / fresh | reuse spread "
          "| fresh spread | outside both spreads |")
    print("|---|---|---|---|---|---|---|---|")
    moved = 0
    ratios = []
    for name in names:
        values = {}
        label = None
        for mode, runs in modes.items():
            got = []
            for run in runs:
                value, what = measure(run / name)
                if value:
                    got.append(value)
                    label = what
            values[mode] = got
        if not values["reuse"] or not values["fresh"]:
            continue
        r, f = statistics.median(values["reuse"]), statistics.median(values["fresh"])
        ratio = r / f
        ratios.append(ratio)
        spread = {m: max(v) / min(v) for m, v in values.items()}
        outside = ratio > max(spread.values()) or ratio < 1 / max(spread.values())
        moved += outside
        print(f"| {name} | {label} | {r:.1f} | {f:.1f} | {ratio:.3f} | {spread['reuse']:.3f} "
              f"| {spread['fresh']:.3f} | {'yes' if outside else ''} |")
    print()
    print(f"{len(ratios)} scenarios; reuse / fresh median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f}; {moved} outside both modes' spreads; "
          f"runs per mode: {len(modes['reuse'])}, {len(modes['fresh'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
