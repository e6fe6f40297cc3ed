"""overlap.FORMAT and the overlap answer: which workload pairs ran at the same time, as a heat
map over the workloads grouped by queue (overlap.csv), titled with the report's answer counted
from the records."""
import matplotlib
import numpy as np

import output
from inputs import is_preemption, read_table, short
from output import plt
from scenario_figure import CLOCK_NAMES, answer_clock, title, workload_order

OVERLAP_COLUMNS = ("workload_a", "workload_b", "relation", "clock", "frames", "overlapped_frames")


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
    return [output.save(figure, out_base / f"overlap.{fmt}", crowded=[axes])]
