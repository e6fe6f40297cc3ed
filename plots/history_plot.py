"""`plot.py history TREND_CSV`: draws `gpuoverlap history trend --csv`'s series, a panel per
series, a line per machine, its change points dashed with their step and interval."""
import argparse
import pathlib
import sys

import numpy as np

import output
from inputs import EXIT_BAD_INPUT, InputError, read_table
from output import plt

HISTORY_COLUMNS = ("machine", "scenario", "series", "metric", "clock", "run", "started_at",
                   "value", "low", "high", "change_step", "change_low", "change_high")


def plot_history(csv_path, out_path):
    """`gpuoverlap history trend --csv`'s series: a panel per series (scenario, workload,
    metric, clock), a line per machine over its runs in time order, the value's interval as a
    band where it has one, and each change point as a dashed line labelled with its step and
    interval."""
    table = read_table(csv_path, HISTORY_COLUMNS,
                       ("machine", "run", "value", "low", "high", "change_step", "change_low",
                        "change_high"),
                       " (write it with: gpuoverlap history trend --csv FILE)")
    if table.empty:
        raise InputError(f"{csv_path}: no runs in it")
    keys = ["scenario", "series", "metric", "clock"]
    groups = list(table.groupby(keys, sort=False))
    figure, axes = plt.subplots(len(groups), 1, figsize=(11, 2.6 * len(groups) + 0.6),
                                squeeze=False)
    for (key, rows), ax in zip(groups, axes[:, 0]):
        for machine, points in rows.groupby("machine", sort=True):
            x = np.arange(len(points))
            line, = ax.plot(x, points.value, marker="o", ms=3, lw=1,
                            label=f"machine {int(machine)}")
            band = points.low.notna() & points.high.notna()
            if band.any():
                ax.fill_between(x[band.to_numpy()], points.low[band], points.high[band],
                                color=line.get_color(), alpha=0.15, lw=0)
            for i, (_, point) in enumerate(points.iterrows()):
                if np.isnan(point.change_step):
                    continue
                ax.axvline(i - 0.5, color=line.get_color(), ls="--", lw=1)
                ax.annotate(f"{100 * point.change_step:+.1f} % "
                            f"[{100 * point.change_low:+.1f}, {100 * point.change_high:+.1f}]",
                            (i - 0.5, point.value), fontsize=8, xytext=(4, 6),
                            textcoords="offset points")
            ax.set_xticks(x)
            ax.set_xticklabels([f"{int(r)}" for r in points.run], fontsize=7)
        ax.set_title(" · ".join(str(k) for k in key), fontsize=9)
        ax.set_ylabel("µs")
        ax.set_xlabel("run (oldest first); dashed: a change point, its step and 95 % interval")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    return [output.save(figure, out_path, crowded=list(axes[:, 0]))]


def history_main(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py history",
        description="Draw `gpuoverlap history trend --csv FILE`: a panel per series, a line "
                    "per machine, change points dashed with their step.")
    parser.add_argument("csv", type=pathlib.Path, help="written by gpuoverlap history trend --csv")
    parser.add_argument("--out", type=pathlib.Path,
                        help="the picture (default: CSV's name with .png)")
    args = parser.parse_args(argv)
    out = args.out or args.csv.with_suffix(".png")
    if out.suffix[1:] not in ("png", "svg", "pdf"):
        print(f"plot.py: --out {out}: end it in .png, .svg or .pdf", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        for path in plot_history(args.csv, out):
            print(path)
    except InputError as error:
        print(f"plot.py: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0
