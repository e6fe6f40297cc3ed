"""gaps.FORMAT: the barrier lab, per scenario with dependencies: each dependency's gap from the
producer's end to the consumer's start on each clock, labelled with its barrier kind
(dependencies.csv)."""
import output
from inputs import DEPENDENCY_COLUMNS, read_table, short
from output import plt
from scenario_figure import title

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
    return [output.save(figure, out_base / f"gaps.{fmt}")]
