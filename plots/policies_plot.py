"""policies.FORMAT: for a study of scheduling policies, each policy's intrusion against its
progress (compiles per second), the policies no other beats on both joined."""
import math

import numpy as np
import pandas as pd

import output
from inputs import InputError, short
from output import plt


def pareto_front(points):
    """The points (progress, intrusion, ...) no other point beats on both: at least as many
    compiles per second and at most as much intrusion, better on one. By progress."""
    front = [p for p in points
             if not any(q[0] >= p[0] and q[1] <= p[1] and (q[0] > p[0] or q[1] < p[1])
                        for q in points)]
    return sorted(front, key=lambda p: p[0])


def plot_policies(verdict, summary, out_base, fmt, path):
    """policies.FORMAT, for a study of scheduling policies (a condition whose `scheduling`
    differs from the spec's runtime): each policy's intrusion against its progress (compiles per
    second), one point per condition: on the left the late-frame share over the baseline's, on
    the right the frame interval's median ratio with its interval and the margin band; the
    policies no other beats on both joined; green: non-intrusive, red: intrusive, hollow:
    starved or undecided."""
    judged = [c for c in summary["conditions"] if isinstance(c, dict) and c.get("scheduling")
              and not c.get("control") and not c.get("null_control")
              and not c.get("negative_control") and not c.get("spinners")]
    if not judged or all(c.get("spec_scheduling") for c in judged):
        return None
    baseline_pacing = summary.get("baseline_pacing")

    def number(value):
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value))

    def late_share(pacing):
        if (not isinstance(pacing, dict) or not number(pacing.get("frames"))
                or not number(pacing.get("late")) or pacing["frames"] <= 0):
            return np.nan
        return 100.0 * float(pacing["late"]) / float(pacing["frames"])

    base_late = late_share(baseline_pacing)
    role = verdict["role"] if "role" in verdict else pd.Series("primary", index=verdict.index)
    interval = verdict[(role == "primary") & (verdict.metric == "frame_interval_us")]
    settings = summary.get("settings") if isinstance(summary.get("settings"), dict) else {}
    p50_margin = settings.get("p50_margin", 0.05)
    if not number(p50_margin) or not 0 <= p50_margin < 1:
        raise InputError(f"{path}: settings.p50_margin must be a number in [0, 1)")
    figure, (late_axes, median_axes) = plt.subplots(1, 2, figsize=(13, 5.2), sharex=True,
                                                    constrained_layout=True)
    late_points, median_points = [], []
    for c in judged:
        progress = c.get("progress") if isinstance(c.get("progress"), dict) else {}
        rate = progress.get("compiles_per_s")
        if not number(rate) or rate < 0:
            raise InputError(f"{path}: condition {short(c['condition'])!r} has no progress "
                             "compiles_per_s")
        decision = c.get("verdict", "?")
        colour = {"intrusive": "#C44E52", "non-intrusive": "#55A868"}.get(decision, "#888888")
        filled = decision in ("intrusive", "non-intrusive") and not c.get("starved")
        name = c["condition"] + (" (spec)" if c.get("spec_scheduling") else "")
        excess = late_share(c.get("pacing")) - base_late
        if np.isfinite(excess):
            late_points.append((float(rate), excess, name))
            late_axes.plot([rate], [excess], "o", color=colour,
                           markerfacecolor=colour if filled else "white", markersize=8)
            late_axes.annotate(name, (rate, excess), fontsize=7, xytext=(4, 4),
                               textcoords="offset points")
        row = interval[interval.condition == c["condition"]]
        if not row.empty and np.isfinite(row.ratio_p50.iloc[0]):
            r = row.iloc[0]
            # Faster than the baseline is no better than as fast, for the front.
            median_points.append((float(rate), max(1.0, float(r.ratio_p50)), name))
            low, high = r.get("ci_low", np.nan), r.get("ci_high", np.nan)
            if np.isfinite(low) and np.isfinite(high):
                median_axes.errorbar([rate], [r.ratio_p50],
                                     yerr=[[r.ratio_p50 - low], [high - r.ratio_p50]],
                                     color=colour, capsize=3, linewidth=1)
            median_axes.plot([rate], [r.ratio_p50], "o", color=colour,
                             markerfacecolor=colour if filled else "white", markersize=8)
            median_axes.annotate(name, (rate, r.ratio_p50), fontsize=7, xytext=(4, 4),
                                 textcoords="offset points")
    for axes, points in ((late_axes, late_points), (median_axes, median_points)):
        front = pareto_front(points)
        if len(front) > 1:
            axes.plot([p[0] for p in front], [p[1] for p in front], "-", color="#4C72B0",
                      linewidth=1, alpha=0.7, label="no other policy beats these on both")
            axes.legend(fontsize=7, loc="upper left")
        axes.set_xlabel("progress: compiles per second (measured frames)")
        axes.grid(alpha=0.3)
    late_axes.axhline(0, color="black", linewidth=0.8)
    late_axes.set_ylabel("late frames: share over the baseline's (percentage points)")
    median_axes.axhspan(1 - p50_margin, 1 + p50_margin, color="#DDDDDD", alpha=0.6, zorder=0)
    median_axes.axhline(1, color="black", linewidth=0.8)
    median_axes.set_ylabel("frame interval: median / baseline's (95 % interval; grey: margin)")
    figure.suptitle(f"{short(summary['study'])}: intrusion against progress per policy (green: "
                    "non-intrusive, red: intrusive, hollow: undecided or starved)", fontsize=10)
    return output.save(figure, out_base / f"policies.{fmt}")
