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
import concurrent.futures
import multiprocessing
import os
import pathlib
import sys

# The modules beside this file, one concept each (README.md). Python puts a script's folder
# first on sys.path, but not under -P or -I, nor when this file is loaded by its path.
if str(pathlib.Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

# What plot.py draws with, and (the rest) every name it defined before it was split, so that
# `import plot` and `plot.NAME` (tests/python) keep working.
from background_plot import BACKGROUND_COLOURS, plot_background  # noqa: E402
from barrier_cost_plot import frame_gaps, median_interval, plot_barrier_costs  # noqa: E402
from clocks_plot import plot_clock_agreement  # noqa: E402
from dose_response_plot import control_doses, plot_dose_response  # noqa: E402
from forest_plot import VERDICT_COLOURS, forest_figure, plot_forest, study_answer  # noqa: E402
from gaps_plot import CLOCK_COLOURS, plot_gaps  # noqa: E402
from history_plot import HISTORY_COLUMNS, history_main, plot_history  # noqa: E402
from inputs import (DEPENDENCY_COLUMNS, EXIT_BAD_INPUT, FRAME_NUMERIC,  # noqa: E402
                    MAX_GZIP_RATIO, MAX_NAME_CHARS, MAX_TEXT_BYTES, META_FIELDS, RECORD_COLUMNS,
                    RECORD_NUMERIC, RESULTS_FORMAT_VERSION, VERDICT_FIELDS, InputError,
                    check_fields, check_format_version, check_regular_file, is_preemption,
                    read_json, read_meta, read_records, read_table, read_text, records_file,
                    short)
from output import drop_crowded_labels, output_directory, plt, save  # noqa: E402
from overlap_plot import (OVERLAP_COLUMNS, direct_and_compute, frames_overlapped,  # noqa: E402
                          one_queue, overlap_answer, plot_overlap)
from phases_plot import PHASE_COLOURS, plot_phases, time_account_phases  # noqa: E402
from policies_plot import pareto_front, plot_policies  # noqa: E402
from preemption_plots import plot_preemption, plot_preemption_matrix  # noqa: E402
from results_layout import (preemption_groups, scenario_directories,  # noqa: E402
                            study_directories, top_level_scenarios)
from scenario_figure import (CLOCK_NAMES, KIND_HATCH, QUEUE_COLOURS, answer_clock,  # noqa: E402
                             percentiles, title, workload_order)
from study_plots import (FRAME_ENDPOINTS, FRAME_METRICS, VERDICT_NUMERIC,  # noqa: E402
                         plot_study, study_samples)
from timeline_plot import plot_timeline  # noqa: E402

__all__ = [
    "BACKGROUND_COLOURS", "CLOCK_COLOURS", "CLOCK_NAMES", "DEPENDENCY_COLUMNS", "EXIT_BAD_INPUT",
    "FRAME_ENDPOINTS", "FRAME_METRICS", "FRAME_NUMERIC", "HISTORY_COLUMNS", "KIND_HATCH",
    "MAX_GZIP_RATIO", "MAX_NAME_CHARS", "MAX_TEXT_BYTES", "META_FIELDS", "OVERLAP_COLUMNS",
    "PHASE_COLOURS", "PLOTS", "QUEUE_COLOURS", "RECORD_COLUMNS", "RECORD_NUMERIC",
    "RESULTS_FORMAT_VERSION", "VERDICT_COLOURS", "VERDICT_FIELDS", "VERDICT_NUMERIC",
    "InputError", "answer_clock", "check_fields", "check_format_version", "check_regular_file",
    "control_doses", "direct_and_compute", "draw_each", "draw_scenario", "drop_crowded_labels",
    "forest_figure", "frame_gaps", "frames_overlapped", "history_main", "is_preemption", "main",
    "median_interval", "one_queue", "output_directory", "overlap_answer", "pareto_front",
    "percentiles", "plot_background", "plot_barrier_costs", "plot_clock_agreement",
    "plot_dose_response", "plot_forest", "plot_gaps", "plot_history", "plot_overlap",
    "plot_phases", "plot_policies", "plot_preemption", "plot_preemption_matrix", "plot_study",
    "plot_timeline", "preemption_groups", "read_json", "read_meta", "read_records", "read_table",
    "read_text", "records_file", "save", "scenario_directories", "short", "study_answer",
    "study_directories", "study_samples", "time_account_phases", "title", "top_level_scenarios",
    "workload_order",
]

# Each entry: (name, function(directory, records, meta, out_base, fmt) -> written paths).
PLOTS = [
    ("timeline", plot_timeline),
    ("preemption", plot_preemption),
    ("clocks", plot_clock_agreement),
    ("gaps", plot_gaps),
    ("background", plot_background),
    ("overlap", plot_overlap),
]


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


def draw_scenario_each(directory, out, relative, fmt):
    """draw_each of one scenario into OUT/relative: (paths written, failures). A function of
    this module, not a lambda, so that a worker process can be handed it."""
    written = []
    failures = draw_each(directory, lambda: draw_scenario(
        directory, output_directory(out, relative), fmt), written)
    return written, failures


def draw_scenarios(jobs, start_method=None):
    """draw_scenario_each over (directory, out, relative, fmt) jobs, in a process per CPU: each
    scenario's figures are its own files, and drawing them one after another took most of the
    main job's last minute on a 2-core machine (70 scenarios, 66 s). Results come back in the
    jobs' order, so what is printed does not depend on which finished first. start_method:
    fork where the OS has it (the workers start with the modules already imported: matplotlib
    takes a second), else spawn (Windows)."""
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        return [draw_scenario_each(*job) for job in jobs]
    if start_method is None:
        start_method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context(start_method)) as pool:
        return list(pool.map(draw_scenario_each, *zip(*jobs), chunksize=1))


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
        jobs = []
        for directory in scenarios:
            # A lone scenario directory is drawn under its own (directory) name.
            relative = directory.relative_to(args.results)
            if relative == pathlib.Path("."):
                relative = pathlib.Path(directory.resolve().name)
            jobs.append((directory, out, relative, args.format))
        for paths, failed in draw_scenarios(jobs):
            written += paths
            failures += failed
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
