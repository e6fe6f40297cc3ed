#!/usr/bin/env python3
"""The table of bench/game_frame_sweep.sh: for each variant (a study folder), condition and
frame-level endpoint, the ratio of the condition's round to the same round's baseline, as a mean
and a standard deviation over rounds: p50 and p99 ratios, and frames past 1.5 periods per 1000.
The baseline's own row (an A/A check) compares each baseline round with the next one.

Usage: game_frame_table.py SWEEP_DIR"""
import json
import statistics
import sys
from pathlib import Path

import pandas as pd

ENDPOINTS = ["cpu_phase_us", "critical_path_us", "wake_max_us", "frame_interval_us",
             "gpu_span_us", "cpu_submit_us"]


def rounds_of(condition_dir):
    out = {}
    for frames in sorted(condition_dir.glob("round-*/frames.csv")):
        r = int(frames.parent.name.split("-")[1])
        df = pd.read_csv(frames)
        out[r] = df[df.status == "ok"]
    return out


def spread(values):
    if not values:
        return "", ""
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.3f}", f"{sd:.3f}"


def main():
    sweep = Path(sys.argv[1])
    print("| variant | condition | endpoint | p50 ratio (sd) | p99 ratio (sd) | stutters /1000 (baseline) | verdict |")
    print("|---|---|---|---|---|---|---|")
    for study in sorted(p for p in sweep.iterdir() if p.is_dir()):
        studies = [d for d in study.iterdir() if d.is_dir()]
        if not studies:
            continue
        root = studies[0]
        verdict_path = root / "verdict.csv"
        verdicts = {}
        if verdict_path.exists():
            v = pd.read_csv(verdict_path)
            for _, row in v.iterrows():
                verdicts[(row["condition"], row["metric"])] = row["verdict"]
        base = rounds_of(root / "baseline")
        meta = json.loads(next((root / "baseline").glob("round-1/meta.json")).read_text())
        period_us = 1000.0 * meta["cpu"]["frame_period_ms"]
        for condition in ["baseline", "managed", "managed-shaderc-only", "unmanaged-1",
                          "unmanaged-2"]:
            if not (root / condition).exists():
                continue
            rounds = rounds_of(root / condition)
            for endpoint in ENDPOINTS:
                p50, p99, stutter, base_stutter = [], [], [], []
                keys = sorted(rounds)
                for r in keys:
                    # A/A: the baseline's round against its next round.
                    ref_key = r + 1 if condition == "baseline" else r
                    if ref_key not in base or endpoint not in rounds[r]:
                        continue
                    c, b = rounds[r][endpoint].dropna(), base[ref_key][endpoint].dropna()
                    if len(c) == 0 or len(b) == 0 or b.median() <= 0:
                        continue
                    p50.append(c.median() / b.median())
                    p99.append(c.quantile(0.99) / b.quantile(0.99))
                    if endpoint == "frame_interval_us":
                        stutter.append(1000.0 * (c > 1.5 * period_us).mean())
                        base_stutter.append(1000.0 * (b > 1.5 * period_us).mean())
                m50, s50 = spread(p50)
                m99, s99 = spread(p99)
                st = (f"{statistics.fmean(stutter):.1f} ({statistics.fmean(base_stutter):.1f})"
                      if stutter else "")
                print(f"| {study.name} | {condition} | {endpoint} | {m50} ({s50}) | {m99} ({s99}) "
                      f"| {st} | {verdicts.get((condition, endpoint), '')} |")


if __name__ == "__main__":
    main()
