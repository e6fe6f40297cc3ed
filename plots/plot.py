#!/usr/bin/python3
"""Draws every scenario of a gpuoverlap results directory.

Usage: python3 plots/plot.py RESULTS_DIR [--out DIR] [--format png|svg|pdf]
       python3 plots/plot.py history TREND_CSV [--out FILE.png]
         (`gpuoverlap history trend --csv TREND_CSV`: a panel per series, a line per machine,
         its change points dashed with their step and interval; docs/history.md)

For each scenario directory (one with records.csv.gz, or records.csv in older results, and
meta.json) it writes, under OUT/<scenario>/ (OUT defaults to RESULTS_DIR/plots):
  timeline.FORMAT  MJP-style timeline: a lane per workload grouped by queue, a bar from the
                   p50 start to the p50 end (poll clock) with p5-p95 whiskers on both ends,
                   dependency arrows from producer end to consumer start, ms from t0;
  clocks.FORMAT    clock agreement, when more than one clock was recorded: per workload, the
                   timestamp clock minus the poll clock at start and end (p50, p5-p95);
  gaps.FORMAT      the barrier lab, when the scenario has dependencies: per dependency, labelled
                   with its barrier kind, the gap from the producer's end to the consumer's
                   start on each clock (p50, p5-p95), from dependencies.csv. A negative gap
                   means the consumer started before its producer ended.
  background.FORMAT  background compiles (background.csv), when the scenario had [background]:
                   a lane per compile thread (idle, high-priority commit, unmanaged), a bar per
                   compile, on the same time axis as the measured frames (shaded), so the
                   training passes of a workflow and the compiles under each frame show.
  preemption.FORMAT  a preemption scenario (preemption.csv) instead of the timeline and gaps:
                   on top the load's submissions (DIRECT lane) and the urgent jobs (COMPUTE
                   lane) over the first 0.5 s of the urgent phase; below every urgent job's
                   latency (CPU submit to its first thread) against its submit time, on a log
                   scale, with the period and the 100 µs "preempts" line.
  overlap.FORMAT   which workload pairs ran at the same time, for a scenario run on its own (not
                   a study's round or a preemption scenario) with overlap.csv: a heat map over
                   the workloads grouped by queue, each cell the % of frames in which the pair
                   overlapped, dependent pairs hatched, on the clock the report's answers use
                   (timestamps where recorded, else the poll clock); the title says in how many
                   frames DIRECT and COMPUTE, and workloads of one queue, overlapped.
For each study (a directory with verdict.csv) it also writes OUT/<study>/verdict.FORMAT: each
metric's distribution per condition (rounds pooled; frames.csv, and the records for the GPU
durations where present), every box labelled with its verdict, OUT/<study>/forest.FORMAT:
each condition's effect and interval on the primary endpoints (those that decide) against the
margin band (the median's ratio, the tail's excess), coloured by the decision, and
OUT/<study>/forest-diagnostics.FORMAT: the same, grey, for the diagnostics that moved, and for
a paced game frame OUT/<study>/phases.FORMAT: each condition's mean frame interval split into
the frame loop's phases (verdict.json's time_account) beside the baseline's, with its shift.
For a study whose positive control has several doses (verdict.json control_doses) it also
writes OUT/<study>/dose-response.FORMAT: each primary endpoint's effect against the control's
threads (the median's ratio and the tail's excess with their intervals, filled where intrusive),
the margin band, and the smallest dose detected. For a study of scheduling policies (a
condition scheduled other than the spec's runtime: verdict.json's `scheduling`) it writes
OUT/<study>/policies.FORMAT: each policy's intrusion (late frames over the baseline's share;
the frame interval's median ratio with its interval and the margin) against its progress
(compiles per second), the policies no other beats on both joined.
OUT/barrier-cost.FORMAT: each barrier kind's gap (consumer start minus producer end) as a bar:
p50, the 95 % order-statistics interval of the p50 (from the frames in the records), p5-p95
(dependencies.csv), on the report's clock; from the barrier-cost scenario (pairs "P <kind>" ->
"C <kind>") where the run has it, else every dependency of the scenarios run on their own.
For each group of preemption scenarios (a matrix: <matrix>/<cell>) it writes
OUT/<matrix>/matrix.FORMAT: the urgent job's p99 latency per load and priority (and process) as
a heat map, each cell labelled with its p99 and the jobs that missed the period.
Each kind of plot is one function in PLOTS; a later kind of result adds its own there.
Only the documented CSV columns (docs/output-format.md) are read.

A results folder is untrusted input (they are attached to bug reports): every file must be a
regular file, every numeric cell a finite number, meta.json's fields of the types written,
and plots are written only under OUT, never through a symbolic link. A scenario that cannot
be drawn is one line on stderr and does not stop the others.
Exit status: 0 every plot drawn; 2 some input could not be read or drawn (one line each).
"""
import argparse
import gzip
import io
import json
import math
import os
import pathlib
import stat
import sys
import tempfile
import zlib

import matplotlib
import matplotlib.colors
import matplotlib.lines
import matplotlib.ticker

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

EXIT_BAD_INPUT = 2
MAX_NAME_CHARS = 64  # names in titles and labels (the tool's own limit: scenarios/names.h)
RECORD_NUMERIC = ("frame", "poll_start_us", "poll_end_us", "ts_start_us", "ts_end_us",
                  "frame_t0_us", "clk_start_us", "clk_end_us")
FRAME_NUMERIC = ("frame", "cpu_start_us", "cpu_frame_us", "cpu_submit_us", "submit_to_start_us",
                 "poll_gap_max_us", "bg_managed", "bg_unmanaged", "frame_interval_us",
                 "gpu_span_us", "cpu_phase_us", "critical_path_us", "wake_max_us",
                 "worker_busy_min_us", "worker_busy_max_us")
RECORD_COLUMNS = [
    "scenario", "frame", "workload", "queue", "queue_type", "priority", "kind", "groups",
    "iterations", "depends_on", "barrier", "poll_start_us", "poll_end_us", "ts_start_us",
    "ts_end_us", "status",
]
QUEUE_COLOURS = {"direct": "#4C72B0", "compute": "#DD8452"}
KIND_HATCH = {"compute": None, "graphics": "//", "copy": ".."}


class InputError(Exception):
    """Bad input: reported as one line naming the file, exit status 2."""


def check_regular_file(path):
    """A FIFO would block the reader, a directory or device is a mistake."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from error
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: not a regular file")


# A .gz input may inflate at most this many times its size once past 1 MiB (the C++ readers'
# bound): gpuoverlap's CSVs compress 4- to 15-fold, a decompression bomb a thousandfold.
MAX_GZIP_RATIO = 200
MAX_TEXT_BYTES = 2 << 30


def read_text(path):
    """A file's text, inflated when its name ends in .gz. Damage (not gzip, truncated, a bad
    checksum, bytes after the data) and decompression bombs are an InputError naming the file."""
    check_regular_file(path)
    try:
        if path.suffix != ".gz":
            with open(path, "rb") as f:
                return f.read().decode("utf-8")
        limit = min(MAX_TEXT_BYTES, max(1 << 20, MAX_GZIP_RATIO * path.stat().st_size))
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                raise InputError(f"{path}: not a gzip file (its first bytes are not 1f 8b)")
        with gzip.open(path, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise InputError(f"{path}: inflates more than {MAX_GZIP_RATIO}-fold (a decompression "
                             "bomb, or not written by gpuoverlap)")
        return data.decode("utf-8")
    except EOFError as error:
        raise InputError(f"{path}: truncated (the gzip stream ends early)") from error
    except (OSError, zlib.error, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read: {error}") from error


def read_table(path, required, numeric=(), hint=""):
    """A CSV written by gpuoverlap, every cell as text. `numeric` columns that are present become
    numbers: an empty cell is NaN (no value), anything else must be a finite number. An
    unreadable file, a missing column of `required` or a bad number is an InputError naming
    the line and column."""
    text = read_text(path)
    try:
        table = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as error:
        raise InputError(f"{path}: cannot read: {error}") from error
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}{hint}")
    for column in numeric:
        if column not in table.columns:
            continue
        text = table[column].str.strip()
        values = pd.to_numeric(text.where(text != ""), errors="coerce")
        bad = (text != "") & ~np.isfinite(values.astype(float))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{path}: line {row + 2}, column {column}: "
                             f"{short(text.iloc[row])!r} is not a finite number")
        table[column] = values.astype(float)
    return table


def records_file(directory):
    """records.csv.gz, or records.csv in results from before it was compressed; None: neither."""
    for name in ("records.csv.gz", "records.csv"):
        if (directory / name).exists():
            return directory / name
    return None


def read_records(directory):
    path = records_file(directory) or directory / "records.csv.gz"
    return read_table(path, RECORD_COLUMNS, RECORD_NUMERIC,
                      " (not a gpuoverlap records table, or from an older version)")


def read_json(path):
    check_regular_file(path)
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InputError(f"{path}: cannot read: {error}") from error


# meta.json fields the plots use, with the types gpuoverlap writes (absent ones are fine).
META_FIELDS = [
    (("scenario",), dict), (("scenario", "name"), str), (("device",), dict),
    (("device", "name"), str), (("device", "driver_name"), str), (("device", "driver_info"), str),
    (("preemption",), dict), (("preemption", "spec"), dict),
    (("preemption", "spec", "period_ms"), (int, float)), (("preemption", "spec", "load"), str),
    (("preemption", "priority_granted"), str), (("preemption", "process"), str),
    (("scenario", "study"), dict),
]
VERDICT_FIELDS = [
    (("study",), str), (("baseline",), str), (("conditions",), list), (("gpu_clock",), str),
    (("control_doses",), list),
]


def check_fields(document, fields, path, required=()):
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a JSON object")
    for keys, kind in fields:
        value, present = document, True
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                present = False
                break
            value = value[key]
        name = ".".join(keys)
        if not present:
            if keys in required:
                raise InputError(f"{path}: '{name}' is missing")
            continue
        if not isinstance(value, kind) or isinstance(value, bool) and kind != bool or (
                isinstance(value, float) and not math.isfinite(value)):
            raise InputError(f"{path}: '{name}' has the wrong type ({type(value).__name__})")
    return document


# The newest results format this script reads: gpuoverlap's kResultsFormatVersion
# (timeline/results_format.h; docs/output-format.md, "Format version").
RESULTS_FORMAT_VERSION = 1


def check_format_version(document, path):
    """A run.json or meta.json of a newer results format than this script reads is refused in one
    line rather than misread; a file without `format_version` predates the number (version 0)."""
    version = document.get("format_version", 0) if isinstance(document, dict) else 0
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise InputError(f"{path}: 'format_version' must be a whole number")
    if version > RESULTS_FORMAT_VERSION:
        raise InputError(f"{path}: results format {version}, newer than this plot.py reads "
                         f"({RESULTS_FORMAT_VERSION}): use the plot.py of the gpuoverlap that "
                         "wrote it")
    return document


def read_meta(directory):
    path = directory / "meta.json"
    return check_format_version(check_fields(read_json(path), META_FIELDS, path), path)


def short(name):
    """A name for a title or label: one line, at most MAX_NAME_CHARS characters."""
    text = "".join(c if c.isprintable() else "?" for c in str(name))
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "…"


def output_directory(out, relative):
    """OUT/relative, created; refuses a symbolic link at OUT or anywhere below it, so a planted
    link in a results folder cannot send the plots elsewhere."""
    target = out
    for part in (pathlib.Path(".") / relative).parts:
        if part in ("..",) or os.path.isabs(part):
            raise InputError(f"{relative}: leaves the output folder")
    for part in [None] + list(pathlib.Path(relative).parts):
        if part is not None:
            target = target / part
        if target.is_symlink():
            raise InputError(f"{target}: is a symbolic link; plot.py writes only into real folders")
        try:
            target.mkdir(parents=part is None, exist_ok=True)
        except OSError as error:
            raise InputError(f"{target}: cannot create: {error.strerror}") from error
    return target


def percentiles(values):
    values = values.dropna()
    if values.empty:
        return None
    return np.percentile(values, [5, 50, 95])


def workload_order(records):
    """Workloads grouped by queue, in the order the scenario lists them."""
    first = records[records.frame == records.frame.min()]
    queues = list(dict.fromkeys(first.queue))
    return [(q, list(first[first.queue == q].workload)) for q in queues]


def title(meta, what):
    device = meta.get("device", {})
    return (f"{short(meta.get('scenario', {}).get('name', '?'))}: {what}\n"
            f"{short(device.get('name', 'unknown device'))} ({short(device.get('driver_name', '?'))} "
            f"{short(device.get('driver_info', ''))})")


def drop_crowded_labels(figure, axes_list):
    """Hides each tick label that would touch one already kept (in tick order), once the figure
    is laid out: with a hundred conditions, doses or workloads some labels are left out, and the
    ones drawn never overlap. Removing labels only gives the axes more room, so a later layout
    pass cannot make the kept ones collide."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for axes in axes_list:
        for labels in (axes.get_xticklabels(), axes.get_yticklabels()):
            kept = []
            for label in labels:
                if not label.get_visible() or not label.get_text():
                    continue
                box = label.get_window_extent(renderer).padded(1.0)
                if any(box.overlaps(other) for other in kept):
                    label.set_visible(False)
                else:
                    kept.append(box)


def save(figure, path, crowded=()):
    """Into a new temporary beside `path`, then renamed over it: a link planted at `path` is
    replaced, never written through, and no half file is left. `crowded`: axes whose tick labels
    may be too many to show (drop_crowded_labels)."""
    try:
        if not figure.get_constrained_layout():  # constrained figures lay themselves out
            figure.tight_layout()
        if crowded:
            drop_crowded_labels(figure, crowded)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                                 suffix=path.suffix)
        try:
            with os.fdopen(descriptor, "wb") as file:
                figure.savefig(file, format=path.suffix[1:])
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    finally:
        plt.close(figure)
    return path


def is_preemption(meta):
    return "preemption" in meta


def plot_timeline(directory, records, meta, out_base, fmt):
    if is_preemption(meta):
        return []  # submissions, not frames: plot_preemption
    ok = records[records.status == "ok"]
    if ok.empty:
        raise InputError(f"{short(meta.get('scenario', {}).get('name', '?'))}: no frame with status "
                         "ok to plot")
    lanes = []  # (queue, workload)
    for queue, workloads in workload_order(records):
        lanes += [(queue, w) for w in workloads]
    figure, axes = plt.subplots(figsize=(11, 0.55 * len(lanes) + 1.8))
    y_of = {}
    ends = {}
    for index, (queue, workload) in enumerate(lanes):
        y = len(lanes) - 1 - index
        y_of[workload] = y
        rows = ok[ok.workload == workload]
        start, end = percentiles(rows.poll_start_us), percentiles(rows.poll_end_us)
        if start is None or end is None:
            continue
        start_ms, end_ms = start / 1000.0, end / 1000.0
        ends[workload] = end_ms[1]
        queue_type = rows.queue_type.iloc[0]
        axes.barh(y, end_ms[1] - start_ms[1], left=start_ms[1], height=0.6,
                  color=QUEUE_COLOURS.get(queue_type, "#777777"), edgecolor="black", linewidth=0.5,
                  hatch=KIND_HATCH.get(rows.kind.iloc[0]))
        axes.errorbar([start_ms[1], end_ms[1]], [y, y],
                      xerr=[[start_ms[1] - start_ms[0], end_ms[1] - end_ms[0]],
                            [start_ms[2] - start_ms[1], end_ms[2] - end_ms[1]]],
                      fmt="none", ecolor="black", elinewidth=1, capsize=3)
    # Dependency arrows: producer p50 end -> consumer p50 start.
    for workload in y_of:
        rows = ok[ok.workload == workload]
        if rows.empty:
            continue
        deps, barrier = str(rows.depends_on.iloc[0]), str(rows.barrier.iloc[0])
        if not deps:
            continue
        starts = percentiles(rows.poll_start_us)
        for producer, kind in zip(deps.split(";"), barrier.split(";")):
            if producer not in ends or starts is None or kind == "none":
                continue
            axes.annotate("", xy=(starts[1] / 1000.0, y_of[workload] + 0.3),
                          xytext=(ends[producer], y_of[producer] - 0.3),
                          arrowprops=dict(arrowstyle="->", color="#333333", lw=0.8,
                                          linestyle="--" if kind == "split" else "-"))
    axes.set_yticks([y_of[w] for _, w in lanes])
    axes.set_yticklabels([f"{short(w)}  [{short(q)}]" for q, w in lanes])
    axes.set_xlabel("time from the frame's gate release (ms), poll clock; bars p50, whiskers p5-p95")
    axes.set_xlim(left=0)
    axes.grid(axis="x", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in QUEUE_COLOURS.values()]
    labels = ["DIRECT queue", "COMPUTE queue"]
    for kind, text in (("graphics", "graphics (draw)"), ("copy", "copy")):
        if kind in set(ok.kind):  # a hatch in the legend only where the plot has one
            handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="black",
                                         hatch=KIND_HATCH[kind]))
            labels.append(text)
    axes.legend(handles, labels, loc="lower right", fontsize=8)
    frames = ok.frame.nunique()
    axes.set_title(title(meta, f"timeline over {frames} frames"), fontsize=10)
    return [save(figure, out_base / f"timeline.{fmt}")]


def plot_clock_agreement(directory, records, meta, out_base, fmt):
    ok = records[(records.status == "ok") & records.ts_start_us.notna() & records.ts_end_us.notna()]
    if ok.empty:
        return []  # one clock only: nothing to compare
    workloads = [w for _, ws in workload_order(records) for w in ws]
    figure, axes = plt.subplots(figsize=(9, 0.45 * len(workloads) + 1.8))
    for offset, (label, ts, poll, colour) in enumerate([
            ("start", "ts_start_us", "poll_start_us", "#4C72B0"),
            ("end", "ts_end_us", "poll_end_us", "#C44E52")]):
        for index, workload in enumerate(workloads):
            rows = ok[ok.workload == workload]
            diff = percentiles(rows[ts] - rows[poll])
            if diff is None:
                continue
            y = len(workloads) - 1 - index + (0.15 if offset == 0 else -0.15)
            axes.errorbar(diff[1], y, xerr=[[diff[1] - diff[0]], [diff[2] - diff[1]]], fmt="o",
                          color=colour, capsize=3, label=label if index == 0 else None)
    axes.axvline(0, color="black", lw=0.8)
    axes.set_yticks(range(len(workloads)))
    axes.set_yticklabels([short(w) for w in reversed(workloads)])
    axes.set_xlabel("timestamp clock minus poll clock (µs); p50, whiskers p5-p95")
    axes.legend(fontsize=8)
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(title(meta, "clock agreement"), fontsize=10)
    return [save(figure, out_base / f"clocks.{fmt}")]


DEPENDENCY_COLUMNS = ["producer", "consumer", "barrier", "clock", "gap_p5_us", "gap_p50_us",
                      "gap_p95_us"]
CLOCK_COLOURS = {"poll": "#4C72B0", "ts": "#C44E52", "clk": "#55A868"}


def plot_gaps(directory, records, meta, out_base, fmt):
    path = directory / "dependencies.csv"
    if not path.exists():
        return []  # results from before the barrier lab
    gaps = read_table(path, DEPENDENCY_COLUMNS, DEPENDENCY_COLUMNS[4:])
    gaps = gaps.dropna(subset=["gap_p50_us"])
    if gaps.empty:
        return []
    def label(producer, consumer, barrier):
        return f"{short(producer)} → {short(consumer)}  [{short(barrier)}]"

    labels = list(dict.fromkeys(
        label(p, c, b) for p, c, b in zip(gaps.producer, gaps.consumer, gaps.barrier)))
    clocks = [c for c in CLOCK_COLOURS if c in set(gaps.clock)]
    figure, axes = plt.subplots(figsize=(10, 0.5 * len(labels) + 1.8))
    for offset, clock in enumerate(clocks):
        rows = gaps[gaps.clock == clock]
        for _, row in rows.iterrows():
            index = labels.index(label(row.producer, row.consumer, row.barrier))
            y = len(labels) - 1 - index + (offset - (len(clocks) - 1) / 2) * 0.22
            axes.errorbar(row.gap_p50_us, y,
                          xerr=[[row.gap_p50_us - row.gap_p5_us], [row.gap_p95_us - row.gap_p50_us]],
                          fmt="o", color=CLOCK_COLOURS[clock], capsize=3, markersize=4,
                          label=clock)
    axes.axvline(0, color="black", lw=0.8)
    axes.set_yticks(range(len(labels)))
    axes.set_yticklabels(list(reversed(labels)), fontsize=8)
    axes.set_xlabel("consumer start minus producer end (µs); p50, whiskers p5-p95")
    handles, names = axes.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    axes.legend(unique.values(), unique.keys(), fontsize=8, title="clock")
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(title(meta, "gap per dependency and barrier kind"), fontsize=10)
    return [save(figure, out_base / f"gaps.{fmt}")]


BACKGROUND_COLOURS = {"idle": "#55A868", "boosted": "#C44E52", "unmanaged": "#8172B2"}


def plot_background(directory, records, meta, out_base, fmt):
    path = directory / "background.csv"
    if not path.exists():
        return []
    tasks = read_table(path, ("kind", "worker", "boosted", "start_us", "finish_us", "ran"),
                       ("worker", "start_us", "finish_us"))
    ran = tasks[(tasks.ran == "1") & tasks.worker.notna() & tasks.start_us.notna()
                & tasks.finish_us.notna()].copy()
    if ran.empty:
        return []

    def lane(row):
        if row.kind == "unmanaged":
            return ("unmanaged", int(row.worker))
        return ("boosted" if str(row.boosted) == "1" else "idle", int(row.worker))

    ran["lane"] = ran.apply(lane, axis=1)
    lanes = sorted(set(ran.lane))
    figure, axes = plt.subplots(figsize=(11, 0.35 * len(lanes) + 2))
    for index, key in enumerate(lanes):
        rows = ran[ran.lane == key]
        axes.broken_barh([(r.start_us / 1000.0, (r.finish_us - r.start_us) / 1000.0)
                          for r in rows.itertuples()], (index - 0.35, 0.7),
                         facecolors=BACKGROUND_COLOURS[key[0]], edgecolor="black", linewidth=0.3)
    frames_path = directory / "frames.csv"
    if frames_path.exists():
        frames = read_table(frames_path, ("cpu_start_us", "cpu_frame_us"), FRAME_NUMERIC)
        if not frames.empty:
            end_ms = (frames.cpu_start_us + frames.cpu_frame_us).max() / 1000.0
            axes.axvspan(frames.cpu_start_us.min() / 1000.0, end_ms, color="#4C72B0", alpha=0.12,
                         label="measured frames")
    axes.set_yticks(range(len(lanes)))
    axes.set_yticklabels([f"{kind} thread {worker}" for kind, worker in lanes], fontsize=8)
    axes.set_xlabel("time from the first measured frame (ms); negative: training and warm-up")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in BACKGROUND_COLOURS.values()]
    handles.append(plt.Rectangle((0, 0), 1, 1, color="#4C72B0", alpha=0.12))
    axes.legend(handles, ["idle-priority compile", "high-priority commit compile",
                          "unmanaged compile", "measured frames"], loc="upper right", fontsize=8)
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(title(meta, f"{len(ran)} background compiles"), fontsize=10)
    return [save(figure, out_base / f"background.{fmt}")]


CLOCK_NAMES = {"poll": "poll clock", "ts": "timestamp clock", "clk": "shader clock"}
OVERLAP_COLUMNS = ("workload_a", "workload_b", "relation", "clock", "frames", "overlapped_frames")


def answer_clock(records):
    """The clock the report's answers use: the timestamp clock where it was recorded, else the
    poll clock; None when no ok record has either."""
    ok = records[records.status == "ok"]
    for clock in ("ts", "poll"):
        if (ok[f"{clock}_start_us"].notna() & ok[f"{clock}_end_us"].notna()).any():
            return clock
    return None


def frames_overlapped(records, clock, chosen):
    """(frames with two workloads or more, frames in which a pair that `chosen(rows)` marks ran
    at the same time for a while) on `clock`: the count the report's overlap answers give.
    `chosen` returns a square boolean matrix over the frame's rows."""
    start, end = f"{clock}_start_us", f"{clock}_end_us"
    ok = records[(records.status == "ok") & records[start].notna() & records[end].notna()]
    frames = overlapped = 0
    for _, rows in ok.groupby("frame", sort=False):
        if len(rows) < 2:
            continue
        frames += 1
        starts, ends = rows[start].to_numpy(), rows[end].to_numpy()
        both = np.minimum.outer(ends, ends) - np.maximum.outer(starts, starts)
        pairs = np.triu(np.ones(both.shape, dtype=bool), 1) & chosen(rows)
        overlapped += bool(((both > 0) & pairs).any())
    return frames, overlapped


def direct_and_compute(rows):
    kinds = rows.queue_type.to_numpy()
    direct, compute = kinds == "direct", kinds == "compute"
    return np.logical_or.outer(direct, direct) & np.logical_or.outer(compute, compute) & ~(
        np.logical_and.outer(direct, direct) | np.logical_and.outer(compute, compute))


def one_queue(rows):
    queues = rows.queue.to_numpy()
    return queues[:, None] == queues[None, :]


def overlap_answer(records, clock):
    """The overlap answer in words, for the title: DIRECT with COMPUTE, and workloads of one
    queue, where the scenario has such pairs."""
    first = records[records.frame == records.frame.min()]
    parts = []
    if {"direct", "compute"} <= set(first.queue_type):
        frames, overlapped = frames_overlapped(records, clock, direct_and_compute)
        parts.append(f"DIRECT and COMPUTE overlap in {overlapped} of {frames} frames")
    if first.queue.duplicated().any():
        frames, overlapped = frames_overlapped(records, clock, one_queue)
        parts.append(f"workloads of one queue overlap in {overlapped} of {frames} frames")
    if not parts:
        frames, overlapped = frames_overlapped(records, clock, lambda rows: one_queue(rows) | True)
        parts.append(f"two workloads overlap in {overlapped} of {frames} frames")
    return ";\n".join(parts) + f" ({CLOCK_NAMES[clock]})"


def plot_overlap(directory, records, meta, out_base, fmt):
    """overlap.FORMAT: which workload pairs ran at the same time, as a heat map over the
    workloads (grouped by queue): each cell the share of frames in which the pair overlapped
    (overlap.csv), on the clock the report's answers use."""
    scenario = meta.get("scenario", {})
    if is_preemption(meta) or "study" in scenario:
        return []  # submissions, not frames; a study's rounds are answered by its verdict
    path = directory / "overlap.csv"
    if not path.exists():
        return []  # results from before overlap.csv
    table = read_table(path, OVERLAP_COLUMNS, ("frames", "overlapped_frames"))
    clocks = [c for c in (answer_clock(records), "poll", "ts", "clk")
              if c and c in set(table.clock) and f"{c}_start_us" in records]
    if not clocks:
        return []
    clock = clocks[0]
    table = table[(table.clock == clock) & (table.frames > 0)]
    lanes = [(q, w) for q, ws in workload_order(records) for w in ws
             if w in set(table.workload_a) | set(table.workload_b)]
    if len(lanes) < 2:
        return []
    index = {w: i for i, (_, w) in enumerate(lanes)}
    n = len(lanes)
    share = np.full((n, n), np.nan)
    dependent = np.zeros((n, n), dtype=bool)
    for row in table.itertuples():
        if row.workload_a in index and row.workload_b in index:
            a, b = index[row.workload_a], index[row.workload_b]
            share[a, b] = share[b, a] = 100.0 * row.overlapped_frames / row.frames
            dependent[a, b] = dependent[b, a] = row.relation == "dependent"
    cell = 0.5 if n <= 12 else 0.3 if n <= 30 else 0.15
    font = 8 if n <= 12 else 7 if n <= 30 else 5
    figure, axes = plt.subplots(figsize=(max(cell * n + 4.8, 9.0), max(cell * n + 3.2, 5.0)),
                                constrained_layout=True)
    colours = matplotlib.colormaps["Blues"].copy()
    colours.set_bad("#E4E4E4")
    image = axes.imshow(np.ma.masked_invalid(share), cmap=colours, vmin=0.0, vmax=100.0,
                        aspect="equal", interpolation="nearest")
    for a in range(n):
        for b in range(n):
            if dependent[a, b]:
                axes.add_patch(plt.Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, hatch="///",
                                             edgecolor="#999999", linewidth=0))
            if n <= 30 and np.isfinite(share[a, b]):
                axes.text(b, a, f"{share[a, b]:.0f}", ha="center", va="center",
                          fontsize=font - 1, color="white" if share[a, b] > 60 else "black")
    queues = [q for q, _ in lanes]
    for k in range(1, n):  # a line between queues
        if queues[k] != queues[k - 1]:
            axes.axhline(k - 0.5, color="black", lw=1.2)
            axes.axvline(k - 0.5, color="black", lw=1.2)
    names = [f"{short(w)} [{short(q)}]" for q, w in lanes]
    axes.set_xticks(range(n))
    axes.set_xticklabels(names, fontsize=font, rotation=90)
    axes.set_yticks(range(n))
    axes.set_yticklabels(names, fontsize=font)
    axes.tick_params(length=2)
    bar = figure.colorbar(image, ax=axes, shrink=min(1.0, 0.6 + 0.04 * n))
    bar.set_label("% of frames the pair overlapped", fontsize=8)
    figure.supxlabel(f"cell: % of frames in which both ran at once ({CLOCK_NAMES[clock]}); "
                    "hatched: dependent pair;\nlines between queues; grey: the workload "
                    "itself, or a pair never measured together", fontsize=8)
    figure.suptitle(title(meta, overlap_answer(records, clock)), fontsize=9)
    return [save(figure, out_base / f"overlap.{fmt}", crowded=[axes])]


# Each entry: (name, function(directory, records, meta, out_base, fmt) -> written paths).
def plot_preemption(directory, records, meta, out_base, fmt):
    if not is_preemption(meta):
        return []
    path = directory / "preemption.csv"
    urgent = read_table(path, ("submit_us", "latency_us", "poll_start_us", "poll_end_us",
                               "period_ms", "deadline_met"),
                        ("latency_us", "submit_us", "poll_start_us", "poll_end_us", "period_ms",
                         "deadline_met"))
    spec = meta["preemption"].get("spec", {})
    period_ms = float(spec.get("period_ms", 11.1))
    loads = records[(records.workload != "urgent") & records.poll_start_us.notna()
                    & records.poll_end_us.notna()].copy()
    loads["start_ms"] = (loads.frame_t0_us + loads.poll_start_us) / 1000.0
    loads["end_ms"] = (loads.frame_t0_us + loads.poll_end_us) / 1000.0
    figure, (lanes, scatter) = plt.subplots(2, 1, figsize=(11, 6.5),
                                            gridspec_kw={"height_ratios": [1, 2]})
    window_ms = 500.0
    for _, row in loads[(loads.end_ms >= 0) & (loads.start_ms <= window_ms)].iterrows():
        lanes.barh(1, row.end_ms - row.start_ms, left=row.start_ms, height=0.6,
                   color=QUEUE_COLOURS["direct"], edgecolor="black", linewidth=0.5,
                   hatch=KIND_HATCH.get(row.kind))
    jobs = urgent[urgent.poll_start_us.notna() & urgent.poll_end_us.notna()]
    for _, row in jobs[jobs.submit_us / 1000.0 <= window_ms].iterrows():
        lanes.barh(0, max((row.poll_end_us - row.poll_start_us) / 1000.0, 0.05),
                   left=row.poll_start_us / 1000.0, height=0.6, color=QUEUE_COLOURS["compute"],
                   edgecolor="black", linewidth=0.5)
        lanes.plot([row.submit_us / 1000.0] * 2, [-0.35, 0.35], color="black", lw=0.6)
    lanes.set_yticks([0, 1])
    lanes.set_yticklabels(["urgent [COMPUTE]", "load [DIRECT]"])
    lanes.set_xlim(0, window_ms)
    lanes.set_xlabel("ms from the first urgent submission (poll clock); ticks: CPU submits")
    lanes.grid(axis="x", alpha=0.3)
    measured = urgent[urgent.latency_us.notna()]
    met = measured[measured.deadline_met == 1]
    missed = measured[measured.deadline_met != 1]
    scatter.scatter(met.submit_us / 1000.0, met.latency_us.clip(lower=0.1), s=8,
                    color=QUEUE_COLOURS["compute"], label="completed within the period")
    scatter.scatter(missed.submit_us / 1000.0, missed.latency_us.clip(lower=0.1), s=10,
                    marker="x", color="#C44E52", label="missed the period")
    scatter.axhline(period_ms * 1000.0, color="black", lw=0.8, ls="--",
                    label=f"period {period_ms:g} ms")
    scatter.axhline(100.0, color="#55A868", lw=0.8, ls=":", label="100 µs (preempts)")
    scatter.set_yscale("log")
    scatter.set_ylabel("latency: submit to first thread (µs)")
    scatter.set_xlabel("submit time (ms from the first urgent submission)")
    scatter.grid(alpha=0.3, which="both")
    scatter.legend(fontsize=8, loc="upper right")
    granted = meta["preemption"].get("priority_granted", "?")
    process = meta["preemption"].get("process", "?")
    lanes.set_title(title(meta, f"{spec.get('load', '?')} load vs urgent job at {granted} "
                                f"priority ({process} process)"), fontsize=10)
    return [save(figure, out_base / f"preemption.{fmt}")]


PLOTS = [
    ("timeline", plot_timeline),
    ("preemption", plot_preemption),
    ("clocks", plot_clock_agreement),
    ("gaps", plot_gaps),
    ("background", plot_background),
    ("overlap", plot_overlap),
]

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


VERDICT_COLOURS = {"intrusive": "#C44E52", "non-intrusive": "#55A868"}
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
    return ([save(figure, out_base / f"verdict.{fmt}")] + forests + ([dose] if dose else [])
            + ([phases] if phases else []) + ([policies] if policies else []))


PHASE_COLOURS = ["#4C72B0", "#8172B2", "#937860", "#55A868", "#CCCCCC", "#C44E52"]


def time_account_phases(condition, path):
    """A condition's time account phases as (name, baseline mean us, condition mean us), or None
    where it has none (an unpaced foreground, files from before the account)."""
    account = condition.get("time_account")
    if account is None:
        return None
    phases = account.get("phases") if isinstance(account, dict) else None
    if not isinstance(phases, list) or not phases:
        raise InputError(f"{path}: {short(condition['condition'])}'s time_account has no phases")
    out = []
    for phase in phases:
        values = [phase.get(k) if isinstance(phase, dict) else None
                  for k in ("phase", "baseline_mean_us", "condition_mean_us")]
        if not isinstance(values[0], str) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in values[1:]):
            raise InputError(f"{path}: {short(condition['condition'])}'s time_account phases need "
                             "a phase name and finite means")
        out.append(tuple(values))
    return out


def plot_phases(summary, target, path):
    """phases.FORMAT: where each condition's frame interval went, beside the baseline's: the
    frame loop's mean interval split into its phases (verdict.json's time_account, which add up
    to the interval), one bar per condition, labelled with the interval's shift and the
    decision. None when no condition has a time account."""
    accounts = [(c, time_account_phases(c, path)) for c in summary["conditions"]]
    accounts = [(c, phases) for c, phases in accounts if phases]
    if not accounts:
        return None
    names = [phase for phase, _, _ in accounts[0][1]]
    for c, phases in accounts:
        if [phase for phase, _, _ in phases] != names:
            raise InputError(f"{path}: the conditions' time accounts name different phases")
    # Each condition is paired with the baseline rounds it ran beside (a condition decided early
    # stops with fewer): one baseline bar where every pairing has the same means, else one above
    # each condition.
    baselines = [[b for _, b, _ in phases] for _, phases in accounts]
    one_baseline = all(
        all(abs(x - y) <= 0.005 * max(abs(y), 1.0) for x, y in zip(means, baselines[0]))
        for means in baselines)
    baseline_label = f"{short(summary['baseline'])} (baseline)"
    rows = [(baseline_label, baselines[0], "")] if one_baseline else []
    for (c, phases), baseline_means in zip(accounts, baselines):
        shift_ms = (sum(m for _, _, m in phases) - sum(baseline_means)) / 1000
        tag = " (null)" if c.get("null_control") else " (control)" if c.get("control") else ""
        if not one_baseline:
            rows.append((f"{baseline_label}, its rounds", baseline_means, ""))
        rows.append((f"{short(c['condition'])}{tag}", [m for _, _, m in phases],
                     f"{shift_ms:+.2f} ms, {c.get('verdict', '?')}"))
    figure, axes = plt.subplots(figsize=(11, 0.55 * len(rows) + 1.8))
    for y, (_, means_us, note) in enumerate(rows):
        left = 0.0
        for k, mean_us in enumerate(means_us):
            width = max(mean_us, 0) / 1000
            axes.barh(y, width, left=left, color=PHASE_COLOURS[k % len(PHASE_COLOURS)],
                      edgecolor="white", label=names[k] if y == 0 else None)
            left += width
        axes.text(left, y, f"  {note}", va="center", fontsize=8)
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([label for label, _, _ in rows], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("mean frame interval, ms (the frame loop's phases, left to right)")
    axes.set_xlim(0, axes.get_xlim()[1] * 1.25)
    axes.legend(fontsize=7, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(f"{short(summary['study'])}: where each condition's frame interval went "
                   "(mean per interval; the text: the shift against the baseline, the decision)",
                   fontsize=9)
    return save(figure, target)




def study_answer(summary):
    """The study's answer in one line, for a figure's title. The null control (the baseline
    again) says whether an intrusive call can be trusted; it is no policy, and is named apart."""
    conditions = [c for c in summary["conditions"] if isinstance(c, dict)]
    judged = [f"{short(c['condition'])} {c.get('verdict', '?')}" for c in conditions
              if not c.get("control") and not c.get("null_control")]
    null = [c for c in conditions if c.get("null_control")]
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
    return save(figure, path)


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
    return save(figure, out_base / f"dose-response.{fmt}", crowded=[median_axes, tail_axes])


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
              and not c.get("control") and not c.get("null_control")]
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
    return save(figure, out_base / f"policies.{fmt}")


def plot_preemption_matrix(name, cells, out_base, fmt):
    """matrix.FORMAT for a group of preemption scenarios (a matrix's cells): the urgent job's p99
    latency (poll clock, else timestamps) per load (rows) and priority and process (columns)."""
    entries = []
    for directory in cells:
        meta = read_meta(directory)
        if not is_preemption(meta):
            continue
        preemption = meta["preemption"]
        spec = preemption.get("spec", {}) if isinstance(preemption.get("spec"), dict) else {}
        summary = read_table(directory / "summary.csv",
                             ("workload", "clock", "latency_p99_us", "deadline_misses"),
                             ("latency_p99_us", "deadline_misses"))
        urgent = summary[(summary.workload == "urgent") & summary.latency_p99_us.notna()]
        for clock in ("poll", "ts"):
            rows = urgent[urgent.clock == clock]
            if not rows.empty:
                break
        if rows.empty:
            continue
        process = str(preemption.get("process", "same"))
        column = short(str(spec.get("priority", "?"))) + ("" if process == "same"
                                                          else f"\n({short(process)} process)")
        entries.append((short(str(spec.get("load", "?"))), column,
                        float(rows.latency_p99_us.iloc[0]),
                        float(np.nan_to_num(rows.deadline_misses.iloc[0])),
                        float(spec.get("period_ms", np.nan))))
    if len(entries) < 2:
        return []
    loads = list(dict.fromkeys(e[0] for e in entries))
    columns = list(dict.fromkeys(e[1] for e in entries))
    grid = np.full((len(loads), len(columns)), np.nan)
    figure, axes = plt.subplots(figsize=(2.2 * len(columns) + 3, 0.8 * len(loads) + 2.2))
    for load, column, p99, misses, _ in entries:
        grid[loads.index(load), columns.index(column)] = p99
    finite = grid[np.isfinite(grid)]
    image = axes.imshow(grid, cmap="RdYlGn_r", aspect="auto",
                        norm=matplotlib.colors.LogNorm(vmin=max(finite.min(), 1.0),
                                                       vmax=max(finite.max(), 10.0)))
    for load, column, p99, misses, _ in entries:
        axes.text(columns.index(column), loads.index(load),
                  f"{p99:,.0f} µs" + (f"\n{misses:.0f} missed" if misses else ""),
                  ha="center", va="center", fontsize=8)
    axes.set_xticks(range(len(columns)))
    axes.set_xticklabels(columns, fontsize=8)
    axes.set_yticks(range(len(loads)))
    axes.set_yticklabels(loads, fontsize=8)
    figure.colorbar(image, ax=axes, label="urgent job p99: submit to first thread (µs)")
    periods = sorted({e[4] for e in entries if np.isfinite(e[4])})
    fast = sum(1 for e in entries if e[2] < 100.0)
    axes.set_title(f"{short(name)}: the urgent job starts within 100 µs at p99 in {fast} of "
                   f"{len(entries)} cells\n(period {', '.join(f'{p:g}' for p in periods) or '?'} ms;"
                   f" 'missed': urgent jobs that finished later than their period)", fontsize=9)
    return [save(figure, out_base / f"matrix.{fmt}")]


def median_interval(values, level=0.95):
    """A distribution-free interval for the median from order statistics: the k-th smallest and
    k-th largest value, k the largest rank whose binomial(n, 1/2) tail stays within
    (1 - level) / 2, so the interval covers the median with at least `level`. None below 6
    values (no such k)."""
    values = np.sort(np.asarray(values, dtype=float))
    n = len(values)
    tail, below, k = (1.0 - level) / 2.0, 0.0, 0
    for rank in range(n // 2 + 1):  # below = P(binomial(n, 1/2) <= rank - 1)
        if below > tail:
            break
        k = rank
        below += math.exp(math.lgamma(n + 1) - math.lgamma(rank + 1) - math.lgamma(n - rank + 1)
                          - n * math.log(2.0))
    if k < 1:
        return None
    return values[k - 1], values[n - k]


def frame_gaps(records, producer, consumer, clock):
    """Per ok frame: the consumer's start minus the producer's end on `clock` (µs)."""
    ok = records[records.status == "ok"]
    ends = ok[ok.workload == producer].drop_duplicates("frame").set_index("frame")[f"{clock}_end_us"]
    starts = ok[ok.workload == consumer].drop_duplicates("frame").set_index("frame")[
        f"{clock}_start_us"]
    return (starts - ends.reindex(starts.index)).dropna().to_numpy()


def top_level_scenarios(results, scenarios):
    """(name, directory) of the scenarios run on their own: not a study's round or a matrix's
    cell. A lone scenario directory is named as it is drawn (its folder's name)."""
    found = []
    for directory in scenarios:
        relative = directory.relative_to(results)
        if relative == pathlib.Path("."):
            found.append((directory.resolve().name, directory))
        elif len(relative.parts) == 1:
            found.append((relative.parts[0], directory))
    return found


def plot_barrier_costs(results, scenarios, out_base, fmt):
    """barrier-cost.FORMAT: what each barrier kind costs, as bars: the gap from the producer's
    end to the consumer's start (p50, its 95 % order-statistics interval, p5-p95), on the clock
    the report's answers use. From the `barrier-cost` scenario (a producer "P <kind>" and a
    consumer "C <kind>" per kind) where the run has it, else every dependency of the run's
    top-level scenarios."""
    top = top_level_scenarios(results, scenarios)
    isolated = [(n, d) for n, d in top if n == "barrier-cost"]
    entries, device, clocks, named = [], None, set(), set()
    for name, directory in isolated or top:
        path = directory / "dependencies.csv"
        if not path.exists():
            continue
        meta = read_meta(directory)
        if is_preemption(meta):
            continue
        records = read_records(directory)
        clock = answer_clock(records)
        if clock is None:
            continue
        gaps = read_table(path, DEPENDENCY_COLUMNS, DEPENDENCY_COLUMNS[4:])
        gaps = gaps[(gaps.clock == clock) & gaps.gap_p50_us.notna()]
        for row in gaps.itertuples():
            if isolated:  # the pairs that isolate one kind, not the chain's links between them
                if not (row.producer.startswith("P ") and row.consumer.startswith("C ")
                        and row.producer[2:] == row.consumer[2:]):
                    continue
                label = short(row.consumer[2:])
            else:
                label = (f"{short(name)}: {short(row.producer)} → {short(row.consumer)}  "
                         f"[{short(row.barrier)}]")
            interval = median_interval(frame_gaps(records, row.producer, row.consumer, clock))
            entries.append((label, row.gap_p50_us, row.gap_p5_us, row.gap_p95_us, interval,
                            clock, row.barrier))
            named.add(name)
        if entries and device is None:
            device = meta.get("device", {})
        clocks.add(clock)
    if not entries:
        return []
    if isolated:
        entries.sort(key=lambda e: e[1])  # cheapest on top
    clock = entries[0][5] if len(clocks) == 1 else None
    if clock is None:  # scenarios on different clocks: each row says which
        entries = [(f"{e[0]} ({e[5]})",) + e[1:] for e in entries]
    n = len(entries)
    row_height = 0.32 if n <= 30 else 0.2
    longest = max(len(e[0]) for e in entries)
    figure, axes = plt.subplots(figsize=(7.5 + 0.055 * longest, row_height * n + 2.2))
    y = np.arange(n)[::-1]
    p50 = np.array([e[1] for e in entries])
    axes.barh(y, p50, height=0.6, color=["#BBBBBB" if e[6] == "none" else "#4C72B0"
                                         for e in entries], edgecolor="black", linewidth=0.5)
    low, high = np.array([e[2] for e in entries]), np.array([e[3] for e in entries])
    axes.errorbar(p50, y, xerr=[np.clip(p50 - low, 0, None), np.clip(high - p50, 0, None)],
                  fmt="none", ecolor="#999999", lw=1, capsize=2, label="p5-p95 of the frames")
    bounded = [(i, e[4]) for i, e in enumerate(entries) if e[4] is not None]
    if bounded:
        index = [i for i, _ in bounded]
        axes.errorbar(p50[index], y[index],
                      xerr=[np.clip(p50[index] - [b[0] for _, b in bounded], 0, None),
                            np.clip([b[1] for _, b in bounded] - p50[index], 0, None)],
                      fmt="none", ecolor="black", lw=2, capsize=4,
                      label="95 % interval of the p50 (order statistics)")
    none = [e[1] for e in entries if e[6] == "none"]
    if isolated and none:
        axes.axvline(none[0], color="black", ls=":", lw=1,
                     label=f"no barrier: {none[0]:.1f} µs")
    axes.axvline(0, color="black", lw=0.8)
    axes.set_yticks(y)
    axes.set_yticklabels([e[0] for e in entries], fontsize=8 if n <= 30 else 6)
    axes.set_ylim(-0.6, n - 0.4)
    axes.set_xlabel(f"consumer start minus producer end (µs"
                    f"{', ' + CLOCK_NAMES[clock] if clock else ''})\nbar: p50 over the frames; "
                    "negative: they overlapped", fontsize=9)
    axes.grid(axis="x", alpha=0.3)
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.9 / (row_height * n + 2.2)),
                ncol=3, frameon=False)
    cheapest, dearest = min(entries, key=lambda e: e[1]), max(entries, key=lambda e: e[1])
    where = "" if clock is None else f", on the {CLOCK_NAMES[clock]}"
    if isolated:
        name = "barrier-cost"
        answer = (f"{dearest[0]} costs the most ({dearest[1]:.1f} µs at p50), {cheapest[0]} the "
                  f"least ({cheapest[1]:.1f} µs)\n{where.lstrip(', ')}")
    else:
        name = "barrier gaps"
        answer = (f"the consumer starts {cheapest[1]:.1f} to {dearest[1]:.1f} µs after its "
                  f"producer ends (p50){where}\nover {n} dependencies of "
                  f"{len(named)} scenarios (run barrier-cost "
                  "for each kind's own cost)")
    axes.set_title(title({"scenario": {"name": name}, "device": device or {}}, answer),
                   fontsize=10)
    return [save(figure, out_base / f"barrier-cost.{fmt}", crowded=[axes])]


def preemption_groups(results, scenarios):
    """Scenario directories one level below a common folder (a matrix's cells), by folder."""
    groups = {}
    for directory in scenarios:
        relative = directory.relative_to(results)
        if len(relative.parts) == 2 and (directory / "preemption.csv").exists():
            groups.setdefault(relative.parent, []).append(directory)
    return groups


def study_directories(results):
    return sorted(p.parent for p in results.rglob("verdict.csv") if "plots" not in p.parts)


def scenario_directories(results):
    if not results.is_dir():
        raise InputError(f"{results}: not a directory")
    if (results / "run.json").is_file():
        check_format_version(read_json(results / "run.json"), results / "run.json")
    # A study's conditions (and rounds) are nested: <study>/<condition>[/round-<r>].
    found = sorted({p.parent for pattern in ("records.csv.gz", "records.csv")
                    for p in results.rglob(pattern)
                    if p.parent != results and "plots" not in p.relative_to(results).parts})
    if records_file(results):
        found.insert(0, results)  # a single scenario directory works too
    if not found and not study_directories(results):
        raise InputError(f"{results}: no scenario results (no */records.csv.gz); "
                         "pass the directory `gpuoverlap run --out` wrote")
    return found


def draw_scenario(directory, target, fmt):
    records, meta = read_records(directory), read_meta(directory)
    return [path for _, draw in PLOTS for path in draw(directory, records, meta, target, fmt)]


def draw_each(directory, draw, written):
    """Runs one scenario's or study's drawing; a failure is one line, and 1 is returned. A
    failure that is not an InputError is a case the checks above missed: still one line (with
    the exception's type, for a bug report), never a traceback."""
    try:
        written += draw()
        return 0
    except InputError as error:
        print(f"plot.py: {error}", file=sys.stderr)
    except (Exception, RecursionError) as error:  # noqa: BLE001 (see the docstring)
        print(f"plot.py: {directory}: cannot draw: {type(error).__name__}: {short(error)}",
              file=sys.stderr)
    plt.close("all")
    return 1


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
    return [save(figure, out_path, crowded=list(axes[:, 0]))]


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


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "history":
        return history_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[2:]))
    parser.add_argument("results", type=pathlib.Path, help="directory written by gpuoverlap run")
    parser.add_argument("--out", type=pathlib.Path, help="output directory (default RESULTS/plots)")
    parser.add_argument("--format", choices=["png", "svg", "pdf"], default="png")
    args = parser.parse_args(argv)
    try:
        scenarios = scenario_directories(args.results)
        out = args.out or (args.results / "plots")
        written, failures = [], 0
        # Plots mirror the results' own layout (OUT/<scenario dir relative to RESULTS>/), never a
        # name read from meta.json: a results folder someone sent must not choose where we write.
        # One scenario that cannot be drawn does not stop the others; the exit status says so.
        for directory in scenarios:
            # A lone scenario directory is drawn under its own (directory) name.
            relative = directory.relative_to(args.results)
            if relative == pathlib.Path("."):
                relative = pathlib.Path(directory.resolve().name)
            failures += draw_each(directory, lambda d=directory, r=relative: draw_scenario(
                d, output_directory(out, r), args.format), written)
        for group, cells in preemption_groups(args.results, scenarios).items():
            failures += draw_each(group, lambda g=group, c=cells: plot_preemption_matrix(
                str(g), c, output_directory(out, g), args.format), written)
        failures += draw_each(args.results, lambda: plot_barrier_costs(
            args.results, scenarios, output_directory(out, "."), args.format), written)
        for study in study_directories(args.results):
            failures += draw_each(study, lambda s=study: plot_study(
                s, output_directory(out, s.relative_to(args.results)), args.format), written)
    except InputError as error:
        print(f"plot.py: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for path in written:
        print(path)
    return EXIT_BAD_INPUT if failures else 0


if __name__ == "__main__":
    sys.exit(main())
