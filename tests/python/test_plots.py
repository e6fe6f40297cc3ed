import csv
import json
import shutil
import subprocess

from conftest import gpuoverlap_binary, read_records_text, run_plot, write_records_text

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_every_scenario_gets_its_plots(results, tmp_path):
    done = run_plot(results, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    for scenario in ("default", "three-dispatches-split-event", "barrier-cost"):
        # lavapipe has calibrated timestamps: two clocks; every scenario has dependencies
        for kind in ("timeline", "clocks", "gaps"):
            path = tmp_path / scenario / f"{kind}.png"
            assert path.exists(), done.stdout
            assert path.read_bytes()[:8] == PNG_MAGIC
            assert path.stat().st_size > 5000
    # it lists what it wrote: 3 plots and overlap.png per scenario, and barrier-cost.png
    assert len(done.stdout.split()) == 13


def test_gaps_plot_labels_every_dependency_with_its_barrier(results, tmp_path):
    import plot
    import pandas as pd
    gaps = pd.read_csv(results / "barrier-cost" / "dependencies.csv")
    # One row per dependency and clock; every barrier kind of the preset is there.
    assert {"none", "legacy", "uav", "split-event", "split-collapsed", "enhanced"} <= set(
        gaps.barrier)
    written = plot.plot_gaps(results / "barrier-cost", None,
                             {"scenario": {"name": "barrier-cost"}}, tmp_path, "svg")
    text = written[0].read_text()
    for label in ("P split-event → C split-event  [split-event]", "P uav → C uav  [uav]"):
        assert label in text


def test_no_dependencies_means_no_gaps_plot(results, tmp_path):
    import plot
    copy = tmp_path / "nodeps"
    shutil.copytree(results / "default", copy)
    header = (copy / "dependencies.csv").read_text().splitlines()[0]
    (copy / "dependencies.csv").write_text(header + "\n")
    assert plot.plot_gaps(copy, None, {}, tmp_path, "png") == []


def test_default_output_is_inside_the_results(results):
    done = run_plot(results)
    assert done.returncode == 0, done.stderr
    assert (results / "plots" / "default" / "timeline.png").stat().st_size > 0


def test_svg_and_pdf(results, tmp_path):
    for fmt, magic in (("svg", b"<?xml"), ("pdf", b"%PDF")):
        done = run_plot(results, "--out", tmp_path / fmt, "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / fmt / "default" / f"timeline.{fmt}").read_bytes()[:len(magic)] == magic


def test_any_subset_of_scenarios(results, tmp_path):
    subset = tmp_path / "subset"
    shutil.copytree(results / "three-dispatches-split-event", subset / "three-dispatches-split-event")
    done = run_plot(subset)
    assert done.returncode == 0, done.stderr
    assert (subset / "plots" / "three-dispatches-split-event" / "timeline.png").exists()
    assert not (subset / "plots" / "default").exists()
    # A single scenario directory works too.
    done = run_plot(subset / "three-dispatches-split-event", "--out", tmp_path / "single")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "single" / "three-dispatches-split-event" / "timeline.png").exists()


def test_poll_only_results_skip_the_clock_plot(results, tmp_path):
    copy = tmp_path / "poll-only" / "default"
    shutil.copytree(results / "default", copy)
    lines = read_records_text(copy).splitlines()
    header = lines[0].split(",")
    ts_columns = [header.index("ts_start_us"), header.index("ts_end_us")]
    blanked = [lines[0]]
    for line in lines[1:]:
        fields = line.split(",")  # preset names contain no quoted commas
        for c in ts_columns:
            fields[c] = ""
        blanked.append(",".join(fields))
    write_records_text(copy, "\n".join(blanked) + "\n")
    done = run_plot(copy.parent, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "default" / "timeline.png").exists()
    assert not (tmp_path / "out" / "default" / "clocks.png").exists()


def test_missing_column_is_named(results, tmp_path):
    broken = tmp_path / "broken" / "default"
    shutil.copytree(results / "default", broken)
    lines = read_records_text(broken).splitlines()
    index = lines[0].split(",").index("barrier")
    write_records_text(broken, "\n".join(
        ",".join(f for i, f in enumerate(line.split(",")) if i != index) for line in lines))
    done = run_plot(broken.parent)
    assert done.returncode == 2
    assert "missing column(s) barrier" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_directories_fail_with_a_message(tmp_path):
    done = run_plot(tmp_path / "does-not-exist")
    assert done.returncode == 2 and "not a directory" in done.stderr
    done = run_plot(tmp_path)
    assert done.returncode == 2 and "no scenario results" in done.stderr
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "records.csv").write_text("")
    done = run_plot(tmp_path)
    assert done.returncode == 2 and "cannot read" in done.stderr
    assert "Traceback" not in done.stderr


def test_study_gets_a_verdict_plot_and_background_timelines(tmp_path):
    results = tmp_path / "study"
    done = subprocess.run([gpuoverlap_binary(), "run", "non-intrusiveness", "bgp-benchmark-priming",
                           "--frames", "12", "--warmup", "0", "--out", str(results)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "plots"
    result = run_plot(results, "--out", out)
    assert result.returncode == 0, result.stderr
    assert (out / "non-intrusiveness" / "verdict.png").stat().st_size > 0
    assert (out / "non-intrusiveness" / "forest.png").stat().st_size > 0
    # The diagnostics in a figure of their own, drawn only when one of them moved.
    with open(results / "non-intrusiveness" / "verdict.csv", newline="") as verdict:
        moved = any(row["role"] == "diagnostic" and row["verdict"] != "diagnostic: within"
                    for row in csv.DictReader(verdict))
    assert (out / "non-intrusiveness" / "forest-diagnostics.png").exists() == moved
    # The control's 1, 2, 4 and one-per-core threads: a dose-response curve.
    assert (out / "non-intrusiveness" / "dose-response.png").stat().st_size > 0
    # The paced frame's phases per condition beside the baseline's.
    assert (out / "non-intrusiveness" / "phases.png").stat().st_size > 0
    verdict_path = results / "non-intrusiveness" / "verdict.json"
    written = json.loads(verdict_path.read_text())
    # Files from before the time account: no phases figure, every other one still drawn.
    for condition in written["conditions"]:
        condition["time_account"] = None
    verdict_path.write_text(json.dumps(written))
    older = run_plot(results, "--out", tmp_path / "older")
    assert older.returncode == 0, older.stderr
    assert (tmp_path / "older" / "non-intrusiveness" / "forest.png").exists()
    assert not (tmp_path / "older" / "non-intrusiveness" / "phases.png").exists()
    # A malformed account is named, not a traceback.
    written["conditions"][0]["time_account"] = {"phases": [{"phase": "jobs"}]}
    verdict_path.write_text(json.dumps(written))
    broken = run_plot(results, "--out", tmp_path / "broken")
    assert broken.returncode == 2
    assert "time_account phases need a phase name and finite means" in broken.stderr
    assert "Traceback" not in broken.stderr
    # Every round of every condition with background work has its compile timeline.
    for condition in ("managed", "commit-high-priority", "unmanaged"):
        rounds = sorted(p.name for p in (results / "non-intrusiveness" / condition).glob("round-*"))
        assert len(rounds) >= 3, rounds  # the preset's planned rounds
        for round_ in rounds:
            assert (out / "non-intrusiveness" / condition / round_ / "background.png").exists()
    assert not (out / "non-intrusiveness" / "baseline" / "round-1" / "background.png").exists()
    assert (out / "bgp-benchmark-priming" / "background.png").exists()


def test_preemption_gets_its_plot_instead_of_a_frame_timeline(tmp_path):
    results = tmp_path / "preemption"
    done = subprocess.run([gpuoverlap_binary(), "run", "preemption-graphics-and-compute-normal",
                           "--duration-ms", "100", "--target-ms", "10", "--out", str(results)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "plots"
    result = run_plot(results, "--out", out)
    assert result.returncode == 0, result.stderr
    scenario = out / "preemption-graphics-and-compute-normal"
    assert (scenario / "preemption.png").stat().st_size > 0
    assert not (scenario / "timeline.png").exists()  # submissions, not frames
    assert not (scenario / "gaps.png").exists()
    # A preemption.csv without its columns is named, not a traceback.
    csv = results / "preemption-graphics-and-compute-normal" / "preemption.csv"
    csv.write_text("scenario,submission\nx,0\n")
    result = run_plot(results, "--out", out)
    assert result.returncode == 2 and "missing column" in result.stderr
    assert "Traceback" not in result.stderr


HISTORY_HEADER = ("machine,scenario,series,metric,clock,run,started_at,value,low,high,"
                  "change_step,change_low,change_high\n")


def test_history_draws_a_panel_per_series_and_marks_change_points(tmp_path):
    # As `gpuoverlap history trend --csv` writes it: two machines, one step on machine 1.
    rows = [HISTORY_HEADER]
    for run in range(1, 13):
        step = run >= 7
        rows.append(f"1,default,Compute A,duration_p50_us,ts,{run},2026-11-{run:02d}T00:00:00Z,"
                    f"{105.0 if step else 100.0},99,{107 if step else 101},"
                    f"{'0.05,0.03,0.07' if run == 7 else ',,'}\n")
        rows.append(f"2,default,Compute A,duration_p50_us,ts,{100 + run},"
                    f"2026-11-{run:02d}T01:00:00Z,80,,,,,\n")
    rows.append("1,default,frame,frame_interval_p50_us,cpu,1,2026-11-01T00:00:00Z,8000,,,,,\n")
    csv = tmp_path / "trend.csv"
    csv.write_text("".join(rows))
    result = run_plot("history", csv)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "trend.png").stat().st_size > 0
    assert result.stdout.strip() == str(tmp_path / "trend.png")
    svg = run_plot("history", csv, "--out", tmp_path / "trend.svg")
    assert svg.returncode == 0, svg.stderr
    assert "Compute A" in (tmp_path / "trend.svg").read_text()


def test_history_input_that_is_not_a_trend_is_named(tmp_path):
    csv = tmp_path / "other.csv"
    csv.write_text("machine,scenario\n1,x\n")
    result = run_plot("history", csv)
    assert result.returncode == 2
    assert "missing column(s)" in result.stderr and "history trend --csv" in result.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text(HISTORY_HEADER)
    assert run_plot("history", empty).returncode == 2
    bad = tmp_path / "bad.csv"
    bad.write_text(HISTORY_HEADER + "1,s,w,m,ts,1,t,nan,,,,,\n")
    result = run_plot("history", bad)
    assert result.returncode == 2 and "not a finite number" in result.stderr
    assert run_plot("history", csv, "--out", tmp_path / "x.gif").returncode == 2


def test_spawned_workers_draw_what_forked_ones_do(results, tmp_path):
    # Windows has no fork: plot.py's workers are spawned there, each importing the modules
    # anew. The same scenarios drawn both ways give the same files, in the same order.
    import plot
    drawn = {}
    for method in ("fork", "spawn"):
        out = tmp_path / method
        jobs = [(results / name, out, name, "png")
                for name in ("default", "three-dispatches-split-event")]
        outcome = plot.draw_scenarios(jobs, start_method=method)
        assert [failures for _, failures in outcome] == [0, 0]
        drawn[method] = [path.relative_to(out) for paths, _ in outcome for path in paths]
        assert len(drawn[method]) >= 6
    assert drawn["fork"] == drawn["spawn"]
    for relative in drawn["fork"]:
        assert (tmp_path / "fork" / relative).read_bytes() == \
            (tmp_path / "spawn" / relative).read_bytes(), relative
