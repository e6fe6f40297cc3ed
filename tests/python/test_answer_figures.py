"""The figures that show the report's answers: overlap.png, barrier-cost.png, dose-response.png.
Each is drawn for results that have its inputs, left out (never a failure) for results that lack
them, and keeps its tick labels apart at a hundred workloads, barrier kinds or doses."""
import json
import shutil

import pandas as pd
import pytest

from conftest import run_plot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_a_run_gets_its_overlap_maps_and_barrier_bars(results, tmp_path):
    done = run_plot(results, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    written = done.stdout.split()
    for scenario in ("default", "three-dispatches-split-event", "barrier-cost"):
        path = tmp_path / scenario / "overlap.png"
        assert str(path) in written
        assert path.read_bytes()[:8] == PNG_MAGIC
    bars = tmp_path / "barrier-cost.png"
    assert str(bars) in written and bars.read_bytes()[:8] == PNG_MAGIC


def test_overlap_title_counts_the_frames_the_pairs_overlapped(results, tmp_path):
    import plot
    records = plot.read_records(results / "default")
    clock = plot.answer_clock(records)
    assert clock == "ts"  # lavapipe's timestamps are calibrated: the report's clock
    answer = plot.overlap_answer(records, clock)
    frames = records[records.status == "ok"].frame.nunique()
    assert f" of {frames} frames" in answer and "DIRECT and COMPUTE overlap in" in answer
    assert "timestamp clock" in answer


def test_figures_without_their_inputs_are_left_out(results, tmp_path):
    # Results from before overlap.csv and dependencies.csv: drawn, without the new figures.
    older = tmp_path / "older"
    shutil.copytree(results / "default", older / "default")
    (older / "default" / "overlap.csv").unlink()
    (older / "default" / "dependencies.csv").unlink()
    done = run_plot(older, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "default" / "timeline.png").exists()
    assert not (tmp_path / "out" / "default" / "overlap.png").exists()
    assert not (tmp_path / "out" / "barrier-cost.png").exists()
    assert "Traceback" not in done.stderr


def test_without_barrier_cost_every_dependency_is_a_bar(results, tmp_path):
    import plot
    subset = tmp_path / "subset"
    shutil.copytree(results / "three-dispatches-split-event", subset / "three-dispatches-split-event")
    figures = capture_figures(lambda: plot.plot_barrier_costs(
        subset, plot.scenario_directories(subset), tmp_path, "png"))
    labels = [t.get_text() for t in figures[0].axes[0].get_yticklabels()]
    assert labels and all(label.startswith("three-dispatches-split-event: ") for label in labels)
    assert all("[split-event]" in label or "[" in label for label in labels)


def test_a_broken_overlap_csv_is_named_not_a_traceback(results, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(results / "default", broken / "default")
    path = broken / "default" / "overlap.csv"
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    fields = lines[1].split(",")
    fields[header.index("overlapped_frames")] = "nan"
    path.write_text("\n".join([lines[0], ",".join(fields)] + lines[2:]) + "\n")
    done = run_plot(broken, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "overlap.csv: line 2, column overlapped_frames" in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "out" / "default" / "timeline.png").exists()  # drawn before it


def test_median_interval_is_the_order_statistics_one():
    import plot
    assert plot.median_interval(range(100)) == (39.0, 60.0)  # ranks 40 and 61 of 100
    assert plot.median_interval(range(6)) == (0.0, 5.0)
    assert plot.median_interval(range(5)) is None  # no 95 % interval from 5 values
    low, high = plot.median_interval(range(5000))  # no overflow with many frames
    assert low < 2499.5 < high


# --- the positive control's dose-response -----------------------------------------------------

METRICS = [("cpu_phase_us", "median+tail"), ("frame_interval_us", "tail"),
           ("gpu_span_us", "median")]


def study(doses, detected_from=None):
    """A verdict.csv table and verdict.json summary of a study whose control has `doses`."""
    rows = []
    for index, threads in enumerate(doses):
        for metric, tests in METRICS:
            effect = 1.0 + 0.02 * index
            rows.append({"condition": f"unmanaged-{threads}", "metric": metric,
                         "verdict": "intrusive" if detected_from and threads >= detected_from
                         else "inconclusive", "ratio_p50": effect, "ci_low": effect - 0.03,
                         "ci_high": effect + 0.03, "tail_excess": 0.01 * index,
                         "tail_ci_low": 0.01 * index - 0.05, "tail_ci_high": 0.01 * index + 0.05,
                         "role": "primary", "tests": tests})
    summary = {"study": "dose-study", "baseline": "baseline",
               "conditions": [{"condition": r["condition"], "control": True} for r in rows[::3]],
               "control_doses": [{"condition": f"unmanaged-{t}", "threads": t,
                                  "verdict": "intrusive" if detected_from and t >= detected_from
                                  else "inconclusive"} for t in doses],
               "detected_from_threads": detected_from,
               "settings": {"p50_margin": 0.05, "tail_margin": 0.01}}
    return pd.DataFrame(rows), summary


def test_dose_response_is_drawn_with_its_answer(tmp_path):
    import plot
    verdict, summary = study([1, 2, 4, 16], detected_from=2)
    figures = capture_figures(lambda: [plot.plot_dose_response(
        verdict, summary, tmp_path, "png", tmp_path / "verdict.json")])
    assert (tmp_path / "dose-response.png").read_bytes()[:8] == PNG_MAGIC
    text = figures[0]._suptitle.get_text()
    assert "detected from 2 normal-priority threads" in text and "3 of 4 doses" in text
    ticks = [t.get_text() for t in figures[0].axes[0].get_xticklabels() if t.get_visible()]
    assert ticks == ["1\nunmanaged-1", "2\nunmanaged-2", "4\nunmanaged-4", "16\nunmanaged-16"]
    verdict, summary = study([1, 2, 4])
    figures = capture_figures(lambda: [plot.plot_dose_response(
        verdict, summary, tmp_path, "png", tmp_path / "verdict.json")])
    assert "NOT detected at any dose (1–4 threads)" in figures[0]._suptitle.get_text()


def test_a_study_without_doses_gets_no_dose_response(tmp_path):
    import plot
    verdict, summary = study([4], detected_from=4)  # one dose: no curve
    assert plot.plot_dose_response(verdict, summary, tmp_path, "png", tmp_path / "v.json") is None
    del summary["control_doses"]  # a verdict.json from before doses were listed
    assert plot.plot_dose_response(verdict, summary, tmp_path, "png", tmp_path / "v.json") is None
    assert not (tmp_path / "dose-response.png").exists()
    summary["control_doses"] = [{"condition": "x", "threads": "many"}, {"condition": "y"}]
    with pytest.raises(plot.InputError, match="control_doses"):
        plot.plot_dose_response(verdict, summary, tmp_path, "png", tmp_path / "v.json")


# --- a hundred of everything: labels never overlap --------------------------------------------

def capture_figures(draw):
    """Runs `draw`, returning the figures it saved (laid out and drawn as written). Every
    drawing module saves through output.save (plots/output.py), so that is the one wrapped."""
    import output
    figures, save = [], output.save

    def keep(figure, path, **options):
        figures.append(figure)
        return save(figure, path, **options)

    output.save = keep
    try:
        assert draw()
    finally:
        output.save = save
    return figures


def visible_tick_labels(figure):
    renderer = figure.canvas.get_renderer()
    for axes in figure.axes:
        for labels in (axes.get_xticklabels(), axes.get_yticklabels()):
            yield [label.get_window_extent(renderer) for label in labels
                   if label.get_visible() and label.get_text()]


def assert_labels_apart(figure):
    for boxes in visible_tick_labels(figure):
        for i, box in enumerate(boxes):
            for other in boxes[i + 1:]:
                assert not box.overlaps(other), (box, other)


def write_scenario(directory, name, workloads, frames, dependencies=()):
    """A frame scenario's records.csv and meta.json: `workloads` (name, queue) one after another
    on the poll clock, each 10 µs long, 2 µs apart; `dependencies`: (producer, consumer, barrier)."""
    directory.mkdir(parents=True)
    depends = {consumer: (producer, barrier) for producer, consumer, barrier in dependencies}
    lines = ["scenario,frame,workload,queue,queue_type,priority,kind,groups,iterations,depends_on,"
             "barrier,poll_start_us,poll_end_us,ts_start_us,ts_end_us,status,frame_t0_us"]
    for frame in range(frames):
        for index, (workload, queue) in enumerate(workloads):
            producer, barrier = depends.get(workload, ("", "none"))
            start = 12.0 * index + 0.1 * frame
            lines.append(f"{name},{frame},{workload},{queue},{queue},normal,compute,8,64,{producer},"
                         f"{barrier},{start:.3f},{start + 10:.3f},,,ok,{1000.0 * frame:.3f}")
    (directory / "records.csv").write_text("\n".join(lines) + "\n")
    (directory / "meta.json").write_text(json.dumps({"scenario": {"name": name}, "device": {
        "name": "synthetic", "driver_name": "none", "driver_info": "0"}}))


def test_overlap_map_labels_stay_apart_at_a_hundred_workloads(tmp_path):
    import plot
    workloads = [(f"workload number {i}", "direct" if i < 50 else "compute") for i in range(100)]
    directory = tmp_path / "hundred"
    write_scenario(directory, "hundred", workloads, frames=3)
    pairs = ["scenario,workload_a,workload_b,same_queue,relation,clock,frames,overlapped_frames,"
             "overlap_p50,overlap_max"]
    for i, (a, qa) in enumerate(workloads):
        for b, qb in workloads[i + 1:]:
            pairs.append(f"hundred,{a},{b},{str(qa == qb).lower()},independent,poll,3,"
                         f"{(i % 4)},0.5,0.9")
    (directory / "overlap.csv").write_text("\n".join(pairs) + "\n")
    records, meta = plot.read_records(directory), plot.read_meta(directory)
    figures = capture_figures(lambda: plot.plot_overlap(directory, records, meta, tmp_path, "png"))
    assert (tmp_path / "overlap.png").read_bytes()[:8] == PNG_MAGIC
    assert_labels_apart(figures[0])
    shown = [len(boxes) for boxes in visible_tick_labels(figures[0])]
    assert shown[:2] == [100, 100]  # sized to show every workload


def test_barrier_bar_labels_stay_apart_at_a_hundred_kinds(tmp_path):
    import plot
    kinds = [f"kind-{i}" for i in range(100)]
    workloads = [(f"{side} {kind}", "direct") for kind in kinds for side in ("P", "C")]
    directory = tmp_path / "run" / "barrier-cost"
    write_scenario(directory, "barrier-cost", workloads, frames=8,
                   dependencies=[(f"P {k}", f"C {k}", k) for k in kinds])
    rows = ["scenario,producer,consumer,barrier,cross_queue,d3d12,clock,frames,gap_p5_us,"
            "gap_p50_us,gap_p95_us,gap_min_us,gap_max_us,early_frames"]
    rows += [f"barrier-cost,P {k},C {k},{k},false,,poll,8,1.5,2.0,2.5,1.5,2.5,0" for k in kinds]
    (directory / "dependencies.csv").write_text("\n".join(rows) + "\n")
    figures = capture_figures(lambda: plot.plot_barrier_costs(
        tmp_path / "run", [directory], tmp_path, "png"))
    assert (tmp_path / "barrier-cost.png").read_bytes()[:8] == PNG_MAGIC
    assert_labels_apart(figures[0])
    assert max(len(boxes) for boxes in visible_tick_labels(figures[0])) == 100


def test_dose_labels_stay_apart_at_a_hundred_doses(tmp_path):
    import plot
    verdict, summary = study(list(range(1, 101)), detected_from=3)
    figures = capture_figures(lambda: [plot.plot_dose_response(
        verdict, summary, tmp_path, "png", tmp_path / "verdict.json")])
    assert_labels_apart(figures[0])
    shown = [len(boxes) for boxes in visible_tick_labels(figures[0])]
    assert 3 <= shown[0] < 100  # crowded doses lose their labels, not their points
