"""A study's figures: verdict.FORMAT (each metric's distribution per condition, rounds pooled,
each box coloured by its verdict), then the forest, dose-response, phases and policies figures
where the study has their inputs."""
import pathlib

import numpy as np

import output
from dose_response_plot import plot_dose_response
from forest_plot import plot_forest
from inputs import (FRAME_NUMERIC, VERDICT_FIELDS, InputError, check_fields, read_json,
                    read_records, read_table, records_file, short)
from output import plt
from phases_plot import plot_phases
from policies_plot import plot_policies

FRAME_METRICS = ["cpu_frame_us", "cpu_submit_us", "submit_to_start_us", "poll_gap_max_us"]
# The frame-level endpoints: in frames.csv from the game frame on (absent in older results).
FRAME_ENDPOINTS = ["cpu_phase_us", "critical_path_us", "wake_max_us", "frame_interval_us",
                   "gpu_span_us"]


def study_samples(condition_dir, gpu_clock, active_only):
    """The per-frame samples of one condition, its rounds pooled: {metric: values}."""
    samples = {}
    for frames_path in sorted(condition_dir.rglob("frames.csv")):
        frames = read_table(frames_path, ["status", "frame"] + FRAME_METRICS, FRAME_NUMERIC)
        frames = frames[frames.status == "ok"]
        if active_only:
            frames = frames[(frames.bg_managed + frames.bg_unmanaged) > 0]
            if "bg_held" in frames:  # an alternating condition: its running blocks only
                frames = frames[frames.bg_held.astype(str) != "1"]
        for metric in FRAME_ENDPOINTS + FRAME_METRICS:
            if metric in frames:
                samples.setdefault(metric, []).extend(frames[metric].dropna().tolist())
        if records_file(frames_path.parent):
            records = read_records(frames_path.parent)
            records = records[(records.status == "ok") & records.frame.isin(frames.frame)]
            for workload, rows in records.groupby("workload", sort=False):
                start, end = rows.get(f"{gpu_clock}_start_us"), rows.get(f"{gpu_clock}_end_us")
                if start is None or end is None:
                    continue
                samples.setdefault(f"gpu_duration_us:{workload}", []).extend(
                    (end - start).dropna().tolist())
    return samples


VERDICT_NUMERIC = ("ratio_p50", "ci_low", "ci_high", "tail_excess", "tail_ci_low", "tail_ci_high")


def plot_study(study_dir, out_base, fmt):
    verdict = read_table(study_dir / "verdict.csv", ("condition", "metric", "verdict", "ratio_p50"),
                         VERDICT_NUMERIC)
    path = study_dir / "verdict.json"
    summary = check_fields(read_json(path), VERDICT_FIELDS, path,
                           required=(("study",), ("baseline",), ("conditions",)))
    baseline, gpu_clock = summary["baseline"], summary.get("gpu_clock", "poll")
    if not all(isinstance(c, dict) and isinstance(c.get("condition"), str)
               for c in summary["conditions"]):
        raise InputError(f"{path}: each entry of 'conditions' needs a 'condition' name")
    conditions = [baseline] + [c["condition"] for c in summary["conditions"]]
    for condition in conditions:  # names become paths below the study: stay inside it
        if pathlib.Path(condition).name != condition or condition in ("", ".", ".."):
            raise InputError(f"{path}: condition {short(condition)!r} is not a folder name")
    samples = {c: study_samples(study_dir / c, gpu_clock, c != baseline) for c in conditions}
    metrics = [m for m in dict.fromkeys(verdict.metric) if any(samples[c].get(m) for c in conditions)]
    if not metrics:
        return []
    columns = 4
    rows_count = (len(metrics) + columns - 1) // columns
    figure, grid = plt.subplots(rows_count, columns, figsize=(4.2 * columns, 3.4 * rows_count),
                                squeeze=False)
    for axes, metric in zip(grid.flat, metrics):
        data = [samples[c].get(metric, []) or [np.nan] for c in conditions]
        boxes = axes.boxplot(data, showfliers=False, whis=(1, 99), patch_artist=True)
        labels = []
        for c, box in zip(conditions, boxes["boxes"]):
            box.set_facecolor("white")
            if c == baseline:
                labels.append(f"{c} (baseline)")
                continue
            row = verdict[(verdict.condition == c) & (verdict.metric == metric)]
            text = row.verdict.iloc[0] if not row.empty else "?"
            ratio = row.ratio_p50.iloc[0] if not row.empty else np.nan
            # The decision as the box's colour (forest.FORMAT has the intervals); one line per
            # label, rotated, so that neighbours never overlap however many conditions there are.
            box.set_facecolor({"intrusive": "#F2B8B9", "non-intrusive": "#B9DFC2"}.get(text, "white"))
            labels.append(f"{c} x{ratio:.3f}" if np.isfinite(ratio) else c)
        axes.set_xticks(range(1, len(conditions) + 1))
        axes.set_xticklabels(labels, fontsize=6, rotation=35, ha="right", rotation_mode="anchor")
        axes.set_yscale("log")
        axes.set_title(metric, fontsize=9)
        axes.grid(axis="y", alpha=0.3)
    for axes in list(grid.flat)[len(metrics):]:
        axes.axis("off")
    control = ("positive control detected" if summary.get("control_detected")
               else "positive control NOT detected" if summary.get("has_control")
               else "no positive control")
    figure.suptitle(f"{short(summary['study'])}: per-frame metrics per condition (boxes p25-p75, "
                    f"whiskers p1-p99; red: intrusive, green: non-intrusive; x: the rounds' p50 / baseline "
                    f"p50, geometric mean); {control}", fontsize=10)
    forests = plot_forest(verdict, summary, out_base, fmt)
    dose = plot_dose_response(verdict, summary, out_base, fmt, path)
    phases = plot_phases(summary, out_base / f"phases.{fmt}", path)
    policies = plot_policies(verdict, summary, out_base, fmt, path)
    return ([output.save(figure, out_base / f"verdict.{fmt}")] + forests + ([dose] if dose else [])
            + ([phases] if phases else []) + ([policies] if policies else []))
