"""clocks.FORMAT: clock agreement, where more than one clock was recorded: per workload, the
timestamp clock minus the poll clock at start and end (p50, p5-p95)."""
import output
from inputs import short
from output import plt
from scenario_figure import percentiles, title, workload_order


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
    return [output.save(figure, out_base / f"clocks.{fmt}")]
