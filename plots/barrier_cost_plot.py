"""barrier-cost.FORMAT: what each barrier kind costs, as bars (p50 with its order-statistics
interval, p5-p95 of the frames), from the barrier-cost scenario or every dependency of the
scenarios run on their own."""
import math

import numpy as np

import output
from inputs import DEPENDENCY_COLUMNS, is_preemption, read_meta, read_records, read_table, short
from output import plt
from results_layout import top_level_scenarios
from scenario_figure import CLOCK_NAMES, answer_clock, title


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
    return [output.save(figure, out_base / f"barrier-cost.{fmt}", crowded=[axes])]
