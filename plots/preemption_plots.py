"""The preemption figures: preemption.FORMAT for one preemption scenario (the load's and the
urgent jobs' lanes, every urgent job's latency) and matrix.FORMAT for a matrix of them (the
urgent job's p99 per load and priority)."""
import matplotlib.colors
import numpy as np

import output
from inputs import is_preemption, read_meta, read_table, short
from output import plt
from scenario_figure import KIND_HATCH, QUEUE_COLOURS, title


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
    return [output.save(figure, out_base / f"preemption.{fmt}")]


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
    return [output.save(figure, out_base / f"matrix.{fmt}")]
