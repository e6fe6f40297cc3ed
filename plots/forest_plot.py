"""forest.FORMAT and forest-diagnostics.FORMAT: each condition's effect and interval on the
primary endpoints (and, grey, the diagnostics that moved) against the margin band, titled with
the study's answer."""
import matplotlib.ticker
import numpy as np
import pandas as pd

import output
from inputs import short
from output import plt

VERDICT_COLOURS = {"intrusive": "#C44E52", "non-intrusive": "#55A868"}


def study_answer(summary):
    """The study's answer in one line, for a figure's title. The null control (the baseline
    again) says whether an intrusive call can be trusted, the negative control (idle-priority
    threads on every foreground CPU) whether the harness is neutral; neither is a policy, and
    each is named apart."""
    conditions = [c for c in summary["conditions"] if isinstance(c, dict)]
    judged = [f"{short(c['condition'])} {c.get('verdict', '?')}" for c in conditions
              if not c.get("control") and not c.get("null_control")
              and not c.get("negative_control")]
    null = [c for c in conditions if c.get("null_control")]
    negative = [c for c in conditions if c.get("negative_control")]
    detected = summary.get("detected_from_threads")
    control = (f"control detected from {detected} thread{'s' if detected != 1 else ''}"
               if summary.get("control_detected") and isinstance(detected, int)
               else "control detected" if summary.get("control_detected")
               else "control NOT detected: no power" if summary.get("has_control")
               else "no positive control")
    if null:
        control += ("; null control called intrusive: an intrusive call may be false"
                    if any(c.get("verdict") == "intrusive" for c in null)
                    else "; null control not called intrusive")
    if negative:
        control += ("; HARNESS FAULT: negative control called intrusive"
                    if any(c.get("verdict") == "intrusive" for c in negative)
                    else "; negative control not called intrusive")
    return f"{short(summary['study'])}: {', '.join(judged) or 'no condition judged'}; {control}"


def plot_forest(verdict, summary, out_base, fmt):
    """forest.FORMAT: each condition's decision on the primary endpoints, effect and interval
    against the margin band (the median's ratio on the left, the tail's excess on the right),
    coloured by the decision; forest-diagnostics.FORMAT: the diagnostics that moved for some
    condition, grey (they never decide). Returns the paths drawn."""
    role = verdict["role"] if "role" in verdict else pd.Series("primary", index=verdict.index)
    primary = verdict[role == "primary"]
    # Diagnostics that stayed within their margin for every condition add rows, not answers.
    moved_metrics = set(verdict[(role != "primary")
                                & (verdict.verdict != "diagnostic: within")].metric)
    diagnostics = verdict[(role != "primary") & verdict.metric.isin(moved_metrics)]
    scale_rows = primary
    if "tests" in verdict:  # only the endpoints whose median is judged set the median's scale
        scale_rows = primary[primary.tests.str.contains("median")]
    drawn = [forest_figure(primary, True, scale_rows, summary,
                           "(red: intrusive, green: non-intrusive, grey: undecided)",
                           out_base / f"forest.{fmt}"),
             forest_figure(diagnostics, False, diagnostics, summary,
                           "diagnostics that moved: where the time went (they never decide)",
                           out_base / f"forest-diagnostics.{fmt}")]
    return [p for p in drawn if p]


def forest_figure(rows_table, primary, scale_rows, summary, note, path):
    """One forest plot of `rows_table`'s rows, endpoint by endpoint and condition by condition;
    None when it has none."""
    settings = summary.get("settings") if isinstance(summary.get("settings"), dict) else {}
    p50_margin = float(settings.get("p50_margin", 0.05))
    tail_margin = float(settings.get("tail_margin", 0.01))
    metrics = list(dict.fromkeys(rows_table.metric))
    conditions = list(dict.fromkeys(rows_table.condition))
    if not metrics:
        return None
    height = 0.22 * len(metrics) * len(conditions) + 0.3 * len(metrics) + 1.5
    figure, (median_axes, tail_axes) = plt.subplots(1, 2, figsize=(13, height), sharey=True,
                                                    constrained_layout=True)
    ticks, labels, y = [], [], 0.0
    for metric in metrics:
        for condition in conditions:
            rows = rows_table[(rows_table.condition == condition) & (rows_table.metric == metric)]
            if rows.empty:
                continue
            row = rows.iloc[0]
            colour = VERDICT_COLOURS.get(row.verdict, "#8C8C8C") if primary else "#8C8C8C"
            tests = row.get("tests", "median+tail") or "median+tail"

            def draw(axes, value, low, high, scale=1.0):
                if not np.isfinite(value):
                    return
                low = value if not np.isfinite(low) else low
                high = value if not np.isfinite(high) else high
                axes.errorbar(scale * value, y, xerr=[[scale * (value - low)],
                                                      [scale * (high - value)]],
                              fmt="o", ms=3.5, color=colour, ecolor=colour, lw=1.2, capsize=2)

            if "median" in tests:
                draw(median_axes, row.ratio_p50, row.get("ci_low", np.nan),
                     row.get("ci_high", np.nan))
            if "tail" in tests and "tail_excess" in row:
                draw(tail_axes, row.tail_excess, row.get("tail_ci_low", np.nan),
                     row.get("tail_ci_high", np.nan), 100.0)
            ticks.append(y)
            labels.append(f"{short(metric)} · {short(condition)}")
            y -= 1.0
        y -= 0.6
    if not ticks:
        plt.close(figure)
        return None
    median_axes.axvspan(1.0 - p50_margin, 1.0 + p50_margin, color="#55A868", alpha=0.15)
    median_axes.axvline(1.0, color="black", lw=0.6)
    median_axes.set_xscale("log")
    bounds = pd.concat([scale_rows[c] for c in ("ratio_p50", "ci_low", "ci_high")
                        if c in scale_rows]).to_numpy(dtype=float)
    bounds = bounds[np.isfinite(bounds) & (bounds > 0)]
    low = min([1.0 - 2 * p50_margin] + list(bounds))
    high = max([1.0 + 2 * p50_margin] + list(bounds))
    median_axes.set_xlim(low / 1.1, high * 1.1)
    # Ratios near 1 span less than a decade: plain numbers, not powers of ten that overlap.
    plain = matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}")
    median_axes.xaxis.set_major_formatter(plain)
    median_axes.xaxis.set_minor_formatter(plain)
    median_axes.tick_params(axis="x", which="minor", labelsize=7)
    tail_axes.set_xlim(-105.0, 105.0)
    median_axes.set_xlabel(f"median: condition / baseline (band: ±{100 * p50_margin:g} %)")
    tail_axes.axvspan(-100.0 * tail_margin, 100.0 * tail_margin, color="#55A868", alpha=0.15)
    tail_axes.axvline(0.0, color="black", lw=0.6)
    tail_axes.set_xlabel(f"tail: frames beyond the baseline's p99, points over the baseline "
                         f"(band ±{100 * tail_margin:g})")
    median_axes.set_yticks(ticks)
    median_axes.set_yticklabels(labels, fontsize=7)
    for axes in (median_axes, tail_axes):
        axes.grid(axis="x", alpha=0.3, which="both")
    figure.suptitle(study_answer(summary) + "\n" + note, fontsize=10)
    return output.save(figure, path)
