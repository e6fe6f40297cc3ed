"""timeline.FORMAT: the MJP-style timeline of a frame scenario (a lane per workload grouped by
queue, p50 bars with p5-p95 whiskers, dependency arrows), poll clock."""
import output
from inputs import InputError, is_preemption, short
from output import plt
from scenario_figure import KIND_HATCH, QUEUE_COLOURS, percentiles, title, workload_order


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
    return [output.save(figure, out_base / f"timeline.{fmt}")]
