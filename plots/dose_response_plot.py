"""dose-response.FORMAT: for a study whose positive control has several doses, each primary
endpoint's effect against the control's threads, the margin band and the smallest dose
detected."""
import matplotlib
import matplotlib.colors
import matplotlib.lines
import matplotlib.ticker
import numpy as np
import pandas as pd

import output
from inputs import InputError, short
from output import plt


def control_doses(summary, path):
    """verdict.json's `control_doses` (the positive control's conditions by threads), checked,
    by threads; [] where the study has none (or was written before doses were listed)."""
    doses = summary.get("control_doses", [])
    for dose in doses:
        threads = dose.get("threads") if isinstance(dose, dict) else None
        if not (isinstance(dose, dict) and isinstance(dose.get("condition"), str)
                and isinstance(threads, int) and not isinstance(threads, bool) and threads > 0):
            raise InputError(f"{path}: each entry of 'control_doses' needs a 'condition' name and "
                             "a positive whole number of 'threads'")
    return sorted(doses, key=lambda d: d["threads"])


def plot_dose_response(verdict, summary, out_base, fmt, path):
    """dose-response.FORMAT, for a study whose positive control has several doses: each primary
    endpoint's effect against the control's threads (the median's ratio on the left, the tail's
    excess on the right, with their intervals), the margin band, and the smallest dose detected."""
    doses = control_doses(summary, path)
    if len(doses) < 2:
        return None
    settings = summary.get("settings") if isinstance(summary.get("settings"), dict) else {}
    p50_margin = float(settings.get("p50_margin", 0.05))
    tail_margin = float(settings.get("tail_margin", 0.01))
    role = verdict["role"] if "role" in verdict else pd.Series("primary", index=verdict.index)
    primary = verdict[role == "primary"]
    threads = [d["threads"] for d in doses]
    conditions = [d["condition"] for d in doses]
    rows = primary[primary.condition.isin(conditions)]
    metrics = list(dict.fromkeys(rows.metric))
    if rows.empty:
        return None
    figure, (median_axes, tail_axes) = plt.subplots(1, 2, figsize=(13, 5.2), sharex=True,
                                                    constrained_layout=True)
    colours = matplotlib.colormaps["tab10"]
    medians, handles = [], {}
    for m, metric in enumerate(metrics):
        # Side by side at each dose (a small step on the log axis) so intervals do not hide.
        shift = 2.0 ** ((m - (len(metrics) - 1) / 2) * 0.05)
        points = {"median": [], "tail": []}
        for dose in doses:
            found = rows[(rows.condition == dose["condition"]) & (rows.metric == metric)]
            if found.empty:
                continue
            row = found.iloc[0]
            tests = row.get("tests", "median+tail") or "median+tail"
            detected = row.verdict == "intrusive"
            if "median" in tests and np.isfinite(row.ratio_p50):
                points["median"].append((dose["threads"] * shift, row.ratio_p50,
                                         row.get("ci_low", np.nan), row.get("ci_high", np.nan),
                                         detected))
            if "tail" in tests and np.isfinite(row.get("tail_excess", np.nan)):
                points["tail"].append((dose["threads"] * shift, 100.0 * row.tail_excess,
                                       100.0 * row.get("tail_ci_low", np.nan),
                                       100.0 * row.get("tail_ci_high", np.nan), detected))
        for axes, key in ((median_axes, "median"), (tail_axes, "tail")):
            if not points[key]:
                continue
            x, value, low, high, detected = (np.array(v) for v in zip(*points[key]))
            low, high = np.where(np.isfinite(low), low, value), np.where(np.isfinite(high), high,
                                                                         value)
            colour = colours(m % 10)
            axes.plot(x, value, color=colour, lw=1, alpha=0.6)
            axes.errorbar(x, value, yerr=[value - low, high - value], fmt="none", ecolor=colour,
                          lw=1.2, capsize=2)
            axes.scatter(x, value, s=30, zorder=3, edgecolors=colour, linewidths=1.3,
                         facecolors=np.where(detected[:, None], matplotlib.colors.to_rgba(colour),
                                             (1, 1, 1, 1)))
            handles[metric] = matplotlib.lines.Line2D([], [], color=colour, marker="o", lw=1)
            if key == "median":
                medians += list(value) + list(low) + list(high)
    smallest = summary.get("detected_from_threads")
    if not isinstance(smallest, int) or isinstance(smallest, bool):
        smallest = next((d["threads"] for d in doses if d.get("verdict") == "intrusive"), None)
    marks = {"intrusive": matplotlib.lines.Line2D([], [], color="black", marker="o", lw=0),
             "not intrusive": matplotlib.lines.Line2D([], [], color="black", marker="o", lw=0,
                                                      markerfacecolor="white")}
    if smallest is not None:
        marks[f"smallest dose detected: {smallest} thread{'s' if smallest != 1 else ''}"] = (
            matplotlib.lines.Line2D([], [], color="black", ls=":", lw=1.2))
    for axes in (median_axes, tail_axes):
        if smallest is not None:
            axes.axvline(smallest, color="black", ls=":", lw=1.2)
        axes.set_xscale("log", base=2)
        axes.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        axes.set_xticks(threads)
        axes.set_xticklabels([f"{t}\n{short(c)}" for t, c in zip(threads, conditions)], fontsize=7)
        axes.set_xlim(min(threads) / 1.5, max(threads) * 1.5)
        axes.set_xlabel("positive control: normal-priority compile threads (log scale)")
        axes.grid(alpha=0.3, which="both")
    median_axes.axhspan(1.0 - p50_margin, 1.0 + p50_margin, color="#55A868", alpha=0.15)
    median_axes.axhline(1.0, color="black", lw=0.6)
    median_axes.set_yscale("log")
    median_axes.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 1.5, 2, 3, 5, 7)))
    median_axes.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    median_axes.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    bounds = np.array([v for v in medians if np.isfinite(v) and v > 0])
    median_axes.set_ylim(min([1.0 - 2 * p50_margin] + list(bounds)) / 1.1,
                         max([1.0 + 2 * p50_margin] + list(bounds)) * 1.1)
    median_axes.set_ylabel(f"median: condition / baseline (band ±{100 * p50_margin:g} %)")
    tail_axes.axhspan(-100.0 * tail_margin, 100.0 * tail_margin, color="#55A868", alpha=0.15)
    tail_axes.axhline(0.0, color="black", lw=0.6)
    tail_axes.set_ylim(-105.0, 105.0)
    tail_axes.set_ylabel(f"tail: % of frames beyond the baseline's p99,\nminus the "
                         f"baseline's (band ±{100 * tail_margin:g})", fontsize=9)
    legend = {short(metric): handle for metric, handle in handles.items()} | marks
    tail_axes.legend(list(legend.values()), list(legend.keys()), loc="center left",
                     bbox_to_anchor=(1.02, 0.5), fontsize=8)
    detected = sum(1 for d in doses if d.get("verdict") == "intrusive")
    span = f"{threads[0]}–{threads[-1]} threads"
    answer = (f"the positive control is detected from {smallest} normal-priority thread"
              f"{'s' if smallest != 1 else ''} (intrusive at {detected} of {len(doses)} doses, "
              f"{span})" if smallest is not None
              else f"the positive control is NOT detected at any dose ({span}): the study cannot "
                   "see intrusion")
    figure.suptitle(f"{short(summary['study'])}: {answer}\n(primary endpoints; filled: intrusive "
                    "on that endpoint, hollow: not; bars: the interval; green: the margin)",
                    fontsize=10)
    return output.save(figure, out_base / f"dose-response.{fmt}", crowded=[median_axes, tail_axes])
