"""plot.py on damaged or hostile results folders. Each case must end in one line per
problem on stderr, exit status 2, no traceback, the other scenarios still drawn, and nothing
written outside --out."""
import gzip
import json
import os
import shutil

from conftest import read_records_text, run_plot, write_records_text
from inputs import RESULTS_FORMAT_VERSION

SCENARIOS = ("default", "three-dispatches-split-event", "barrier-cost")


def damaged_copy(results, tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("plots"))
    return copy


def set_cell(directory, column, value, row=1):
    """One cell of a scenario's records table."""
    lines = read_records_text(directory).splitlines()
    header = lines[0].split(",")
    fields = lines[row].split(",")  # the damaged rows have no quoted commas
    fields[header.index(column)] = value
    lines[row] = ",".join(fields)
    write_records_text(directory, "\n".join(lines) + "\n")


def expect_one_bad_scenario(done, out, bad, reason):
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert reason in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for scenario in SCENARIOS:
        if scenario != bad:  # the others are still drawn
            assert (out / scenario / "timeline.png").exists(), (scenario, done.stderr)


def test_non_finite_and_text_numbers_are_named_with_line_and_column(results, tmp_path):
    for value in ("nan", "inf", "-inf", "1e999", "12abc", "text"):
        copy = damaged_copy(results, tmp_path / value)
        set_cell(copy / "default", "poll_start_us", value)
        out = tmp_path / value / "plots"
        done = run_plot(copy, "--out", out)
        expect_one_bad_scenario(done, out, "default", "line 2, column poll_start_us")


def test_damaged_compressed_records_are_named_in_one_line(results, tmp_path):
    packed = (results / "default" / "records.csv.gz").read_bytes()
    flipped = bytearray(packed)
    flipped[-6] ^= 0x55  # the CRC-32 in the trailer
    cases = {
        "truncated": (packed[: len(packed) // 2], "truncated"),
        "magic": (read_records_text(results / "default").encode(), "not a gzip file"),
        "crc": (bytes(flipped), "cannot read"),
        "trailing": (packed + b"trailing", "cannot read"),
        # 8 MiB of one byte: a thousandfold, past the 200-fold bound.
        "bomb": (gzip.compress(b"x" * (8 << 20)), "decompression bomb"),
    }
    for name, (content, reason) in cases.items():
        copy = damaged_copy(results, tmp_path / name)
        (copy / "default" / "records.csv.gz").write_bytes(content)
        out = tmp_path / name / "plots"
        done = run_plot(copy, "--out", out)
        expect_one_bad_scenario(done, out, "default", reason)
        assert "records.csv.gz" in done.stderr, done.stderr
        assert not (out / "default" / "timeline.png").exists(), name


def test_wrong_typed_meta_json_is_named_not_a_traceback(results, tmp_path):
    for index, (field, value) in enumerate([("scenario", "default"), ("device", ["H100"]),
                                            ("preemption", 3), ("scenario", {"name": 7})]):
        copy = damaged_copy(results, tmp_path / str(index))
        meta_path = copy / "default" / "meta.json"
        meta = json.loads(meta_path.read_text())
        meta[field] = value
        meta_path.write_text(json.dumps(meta))
        out = tmp_path / str(index) / "plots"
        done = run_plot(copy, "--out", out)
        expect_one_bad_scenario(done, out, "default", "meta.json")
    copy = damaged_copy(results, tmp_path / "list")
    (copy / "default" / "meta.json").write_text("[1, 2]")
    done = run_plot(copy, "--out", tmp_path / "list" / "plots")
    expect_one_bad_scenario(done, tmp_path / "list" / "plots", "default", "not a JSON object")


def test_a_newer_results_format_is_refused_in_one_line(results, tmp_path):
    # A scenario's meta.json of a newer format: that scenario is refused, the others drawn.
    copy = damaged_copy(results, tmp_path / "meta")
    meta_path = copy / "default" / "meta.json"
    meta = json.loads(meta_path.read_text())
    assert meta["format_version"] == RESULTS_FORMAT_VERSION, "gpuoverlap writes its format"
    meta["format_version"] = RESULTS_FORMAT_VERSION + 1
    meta_path.write_text(json.dumps(meta))
    out = tmp_path / "meta" / "plots"
    done = run_plot(copy, "--out", out)
    expect_one_bad_scenario(done, out, "default",
                            f"results format {RESULTS_FORMAT_VERSION + 1}, newer than this plot.py")
    # run.json of a newer format: the whole folder, in one line, nothing drawn.
    copy = damaged_copy(results, tmp_path / "run")
    run_path = copy / "run.json"
    run = json.loads(run_path.read_text())
    assert run["format_version"] == RESULTS_FORMAT_VERSION
    run["format_version"] = RESULTS_FORMAT_VERSION + 1
    run_path.write_text(json.dumps(run))
    done = run_plot(copy, "--out", tmp_path / "run" / "plots")
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"run.json: results format {RESULTS_FORMAT_VERSION + 1}" in done.stderr, done.stderr
    assert not (tmp_path / "run" / "plots").exists()


def test_a_scenario_without_an_ok_frame_does_not_stop_the_others(results, tmp_path):
    copy = damaged_copy(results, tmp_path)
    text = read_records_text(copy / "default")
    write_records_text(copy / "default", text.replace(",ok,", ",timeout,"))
    out = tmp_path / "plots"
    done = run_plot(copy, "--out", out)
    expect_one_bad_scenario(done, out, "default", "no frame with status ok")


def test_a_fifo_in_the_results_does_not_hang(results, tmp_path):
    copy = damaged_copy(results, tmp_path)
    (copy / "default" / "meta.json").unlink()
    os.mkfifo(copy / "default" / "meta.json")
    out = tmp_path / "plots"
    done = run_plot(copy, "--out", out)  # run_plot has a timeout: a hang fails the test
    expect_one_bad_scenario(done, out, "default", "not a regular file")


def test_plots_are_never_written_through_a_planted_link(results, tmp_path):
    copy = damaged_copy(results, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    # A link where a plot goes: replaced by the plot, the file it pointed to untouched.
    (copy / "plots" / "default").mkdir(parents=True)
    os.symlink(victim, copy / "plots" / "default" / "timeline.png")
    done = run_plot(copy)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious"
    assert not (copy / "plots" / "default" / "timeline.png").is_symlink()
    # A link where a plot folder goes: refused, nothing written where it points.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(copy / "plots")
    (copy / "plots").mkdir()
    os.symlink(elsewhere, copy / "plots" / "barrier-cost")
    done = run_plot(copy)
    expect_one_bad_scenario(done, copy / "plots", "barrier-cost", "symbolic link")
    assert list(elsewhere.iterdir()) == []


def test_long_and_strange_names_are_drawn(results, tmp_path):
    copy = damaged_copy(results, tmp_path)
    long_name = "W" * 300
    text = read_records_text(copy / "default")
    write_records_text(copy / "default",
                       text.replace("Compute A", long_name).replace("Gfx A", "tab\there"))
    meta_path = copy / "default" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["scenario"]["name"] = "N" * 5000
    meta_path.write_text(json.dumps(meta))
    out = tmp_path / "plots"
    done = run_plot(copy, "--out", out)
    assert done.returncode == 0, done.stderr
    assert (out / "default" / "timeline.png").stat().st_size > 0


def test_a_name_in_meta_json_never_chooses_where_plots_go(results, tmp_path):
    copy = damaged_copy(results, tmp_path / "work")
    escape = tmp_path / "escaped"
    meta_path = copy / "default" / "meta.json"
    meta = json.loads(meta_path.read_text())
    for name in ("../../../escaped", str(escape)):
        meta["scenario"]["name"] = name
        meta_path.write_text(json.dumps(meta))
        out = tmp_path / "work" / "plots"
        done = run_plot(copy, "--out", out)
        assert done.returncode == 0, done.stderr
        assert (out / "default" / "timeline.png").exists()  # the folder's own name
        assert not escape.exists()
        assert all(str(out) in line for line in done.stdout.splitlines()), done.stdout
