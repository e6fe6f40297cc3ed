#!/usr/bin/env python3
"""The table of bench/sched_trace_cost.sh: per run its exit, wall time and size (runs.txt), the
traced runs' mean against the plain runs', and per traced run and study condition the frame
loop's runnable time in the kernel's record against its schedstat run delay over the same
frames (verdict.json's conditions[].sched and baseline_sched), with the condition's verdict;
and per traced run where the record's own time after the frames went (meta.json's
sched_trace.cost_ms, summed over its scenarios), and per run the phases of its frames against the
time between its scenarios (meta.json phases_ms, run_span_ns).

Usage: sched_trace_table.py OUT_DIR  (the standard library only)"""
import json
import statistics
import sys
from pathlib import Path

STUDY = "non-intrusiveness"


def main():
    out = Path(sys.argv[1])
    runs = []
    for line in (out / "runs.txt").read_text().splitlines():
        name, _, status, _, wall, _, size = line.split()
        runs.append((name, int(status), float(wall), int(size)))
    # A run's scenarios (its meta.json files): a study stops when it is decided or its budget is
    # spent, so two runs of the same job may run different numbers of rounds, and their wall
    # times then differ by those rounds, not by the record.
    scenarios = {name: sum(1 for _ in (out / name).rglob("meta.json")) for name, *_ in runs}
    print("| run | exit | wall (s) | output (MB) | scenarios |")
    print("|---|---|---|---|---|")
    for name, status, wall, size in runs:
        print(f"| {name} | {status} | {wall:.1f} | {size / 1e6:.1f} | {scenarios[name]} |")
    by_kind = {}
    for name, status, wall, size in runs:
        if status == 0:
            by_kind.setdefault(name.split("-")[0], []).append((wall, size))
    per_scenario = {}
    for name, status, wall, _ in runs:
        if status == 0 and scenarios[name]:
            per_scenario.setdefault(name.split("-")[0], []).append(wall / scenarios[name])
    if "traced" in by_kind and "plain" in by_kind:
        tw = statistics.mean(w for w, _ in by_kind["traced"])
        pw = statistics.mean(w for w, _ in by_kind["plain"])
        ts = statistics.mean(s for _, s in by_kind["traced"])
        ps = statistics.mean(s for _, s in by_kind["plain"])
        print(f"\nMean wall: traced {tw:.1f} s, plain {pw:.1f} s ({100 * (tw - pw) / pw:+.1f} %); "
              f"mean size: traced {ts / 1e6:.1f} MB, plain {ps / 1e6:.1f} MB")
        tp = statistics.mean(per_scenario.get("traced", [0]))
        pp = statistics.mean(per_scenario.get("plain", [0]))
        if tp and pp:
            print(f"Per scenario: traced {1000 * tp:.0f} ms, plain {1000 * pp:.0f} ms "
                  f"({100 * (tp - pp) / pp:+.1f} %)")
    # Where the record's own time went after the frames (meta.json sched_trace.cost_ms, summed
    # over the run's scenarios): stopping and reading it, parsing, attributing, rendering its
    # text, compressing (older runs have no start or render step: 0); and how many scenarios
    # had to clear their kept instance (sched_trace.instance "kept, cleared").
    steps = ("start", "read", "parse", "attribute", "render", "compress")
    print("\n| run | scenarios recorded | instances cleared | pages (MB) | text (MB) | " +
          " | ".join(f"{k} (s)" for k in steps) + " | in all (s) |")
    print("|---|---|---|---|---|" + "---|" * len(steps) + "---|")
    for name, status, _, _ in runs:
        if not name.startswith("traced"):
            continue
        totals = dict.fromkeys(steps, 0.0)
        recorded, cleared, raw_mb, text_mb = 0, 0, 0.0, 0.0
        for meta in sorted((out / name).rglob("meta.json")):
            sched = json.loads(meta.read_text()).get("sched_trace") or {}
            if not sched.get("cost_ms"):
                continue
            recorded += 1
            cleared += sched.get("instance") == "kept, cleared"
            raw_mb += sched.get("raw_mb", 0)
            text_mb += sched.get("text_mb", 0)
            for k in steps:
                totals[k] += sched["cost_ms"].get(k, 0) / 1000
        print(f"| {name} | {recorded} | {cleared} | {raw_mb:.1f} | {text_mb:.1f} | " +
              " | ".join(f"{totals[k]:.2f}" for k in steps) + f" | {sum(totals.values()):.2f} |")
    # Where each run's time went, summed over its scenarios (meta.json phases_ms and run_span_ns):
    # the phases of the frames, the executor's span less them (the record's own steps are in it),
    # and the time between one scenario's span and the next (writing its files, judging), so a
    # traced run's extra time shows in the phase that holds it.
    phases = ("open_device", "before_measured", "measured", "after_frames", "close_device")
    print("\n| run | " + " | ".join(f"{k} (s)" for k in phases) +
          " | rest of the spans (s) | between spans (s) | before the first, after the last (s) |")
    print("|---|" + "---|" * len(phases) + "---|---|---|")
    for name, status, wall, _ in runs:
        totals = dict.fromkeys(phases, 0.0)
        spans = []
        for meta in (out / name).rglob("meta.json"):
            m = json.loads(meta.read_text())
            span = m.get("run_span_ns") or {}
            if "start" not in span or "end" not in span:
                continue
            spans.append((span["start"], span["end"]))
            for k in phases:
                totals[k] += (m.get("phases_ms") or {}).get(k, 0) / 1000
        if not spans:
            continue
        spans.sort()
        in_spans = sum(e - s for s, e in spans) / 1e9
        between = sum(max(0, spans[i + 1][0] - spans[i][1]) for i in range(len(spans) - 1)) / 1e9
        outside = wall - (spans[-1][1] - spans[0][0]) / 1e9
        print(f"| {name} | " + " | ".join(f"{totals[k]:.2f}" for k in phases) +
              f" | {in_spans - sum(totals.values()):.2f} | {between:.2f} | {outside:.2f} |")
    print("\n| run | condition | verdict | frames | runnable in the record (ms) | schedstat run "
          "delay (ms) | record / run delay | behind background threads (ms) | mostly |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, status, _, _ in runs:
        verdict = out / name / STUDY / "verdict.json"
        if not name.startswith("traced") or not verdict.exists():
            continue
        v = json.loads(verdict.read_text())
        rows = [("baseline", "", v.get("baseline_sched"))]
        rows += [(c["condition"], c["verdict"], c.get("sched")) for c in v["conditions"]]
        for condition, decision, s in rows:
            if not s:
                print(f"| {name} | {condition} | {decision} | | no record | | | | |")
                continue
            delay = s.get("run_delay_ms")
            share = f"{100 * s['runnable_ms'] / delay:.1f} %" if delay else ""
            delay_text = f"{delay:.2f}" if delay is not None else ""
            print(f"| {name} | {condition} | {decision} | {s['frames']} | {s['runnable_ms']:.2f} | "
                  f"{delay_text} | {share} | {s['to_background_ms']:.2f} | {s['most_way']} |")


if __name__ == "__main__":
    main()
