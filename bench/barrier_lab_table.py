#!/usr/bin/python3
"""Markdown tables of a barrier-lab run (bench/barrier_lab.sh), for docs/results/.

Usage: bench/barrier_lab_table.py BARRIER_LAB_DIR
  BARRIER_LAB_DIR holds with-timestamps/ and poll-only/, each a `gpuoverlap run --out`.
Prints: the barrier-cost gap per barrier kind (p5/p50/p95 per clock), for each
three-dispatches variant the A->C gap, whether A overlapped B and B overlapped C, and the
frame's p50 span (poll clock), and each scenario against its legacy twin on the frame-level
endpoint and on every clock, as `gpuoverlap report` wrote them into the mode's report.md
(section "Barrier twins").
"""
import csv
import pathlib
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def barrier_cost(run):
    deps = rows(run / "barrier-cost" / "dependencies.csv")
    # The measured pairs are "P <kind>" -> "C <kind>"; the links between pairs are legacy.
    pairs = [d for d in deps if d["producer"].startswith("P ")]
    print("| pair (barrier) | D3D12 | clock | gap p5 | p50 | p95 (µs) |")
    print("|---|---|---|---|---|---|")
    for d in pairs:
        print(f"| {d['producer'][2:]} ({d['barrier']}) | {d['d3d12']} | {d['clock']} | "
              f"{float(d['gap_p5_us']):.2f} | {float(d['gap_p50_us']):.2f} | "
              f"{float(d['gap_p95_us']):.2f} |")


def three_dispatches(run):
    print("| preset | A→C gap p50 (µs) | A∥B frames | B∥C frames | A | B | C (p50 start–end, µs) |")
    print("|---|---|---|---|---|---|---|")
    for variant in ["", "-legacy", "-split-event", "-split-collapsed", "-enhanced",
                    "-enhanced-sync-all"]:
        name = "three-dispatches" + variant
        gap = next(float(d["gap_p50_us"]) for d in rows(run / name / "dependencies.csv")
                   if d["clock"] == "poll")
        overlap = {(o["workload_a"], o["workload_b"]): o for o in rows(run / name / "overlap.csv")
                   if o["clock"] == "poll"}
        ab, bc = overlap[("Compute A", "Compute B")], overlap[("Compute B", "Compute C")]
        span = {s["workload"]: s for s in rows(run / name / "summary.csv") if s["clock"] == "poll"}
        cells = " | ".join(f"{float(span[w]['start_p50_us']):.1f}–{float(span[w]['end_p50_us']):.1f}"
                           for w in ("Compute A", "Compute B", "Compute C"))
        print(f"| {name} | {gap:.1f} | {ab['overlapped_frames']}/{ab['frames']} | "
              f"{bc['overlapped_frames']}/{bc['frames']} | {cells} |")


def twins(run):
    """The "Barrier twins" table of the mode's report.md; False where the report has none."""
    report = run / "report.md"
    if not report.is_file():
        return False
    lines = report.read_text(encoding="utf-8").splitlines()
    try:
        first = lines.index("## Barrier twins")
    except ValueError:
        return False
    for line in lines[first + 1:]:
        if line.startswith("## "):
            break
        print(line)
    return True


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lab = pathlib.Path(sys.argv[1])
    for mode in ("poll-only", "with-timestamps"):
        run = lab / mode
        if not (run / "barrier-cost").is_dir():
            print(f"{run}: no barrier-cost results", file=sys.stderr)
            return 1
        print(f"\n### {mode}: barrier-cost\n")
        barrier_cost(run)
        if (run / "three-dispatches").is_dir():  # absent when PRESETS ran barrier-cost only
            print(f"\n### {mode}: three-dispatches variants\n")
            three_dispatches(run)
        print(f"\n### {mode}: barrier twins")
        if not twins(run):
            print(f"\n{run}/report.md: no barrier twins (run `gpuoverlap report {run}`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
