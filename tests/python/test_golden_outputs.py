"""Byte-identical outputs: what the readers make of one fixed results folder, against the
outputs committed beside it. The folder (tests/data/golden/run.tar.xz) was written by
gpuoverlap on lavapipe:

    gpuoverlap run default barrier-cost game-frame preemption-big-dispatch-high \\
        tests/data/golden/study.toml --frames 12 --priority-fallback --out OUT

(its trace.json.gz files left out: no reader below needs them; the folder records where it was
written, /tmp, and the revision that wrote it). It holds every kind of scenario
the report answers on: queues that may overlap, the barrier lab, a game frame, a preemption
scenario and a study with a verdict. A change to what `report`, `compare` or the history
make of it shows here as a diff. When the change is meant, write the expected files anew with
GPUOVERLAP_UPDATE_GOLDEN=1 and commit them with it; when it is not, the diff is the bug."""
import os
import pathlib
import subprocess
import tarfile

import pytest

from conftest import gpuoverlap_binary

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden"
UPDATE = os.environ.get("GPUOVERLAP_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """The folder unpacked as `run` in a scratch directory: every command below is given the
    relative path, so what it prints does not depend on where the test runs."""
    scratch = tmp_path_factory.mktemp("golden")
    with tarfile.open(GOLDEN / "run.tar.xz") as packed:
        packed.extractall(scratch / "run")  # the project's own archive
    return scratch


def gpuoverlap(scratch, *args):
    done = subprocess.run([gpuoverlap_binary(), *args], cwd=scratch, capture_output=True,
                          text=True, encoding="utf-8", timeout=600)
    return f"exit status {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"


def expect_golden(name, output):
    expected = GOLDEN / f"{name}.expected"
    if UPDATE:
        expected.write_text(output, encoding="utf-8")
    assert expected.exists(), f"{expected} is missing: run with GPUOVERLAP_UPDATE_GOLDEN=1"
    want = expected.read_text(encoding="utf-8")
    if output != want:
        # The first line that differs, with its neighbours: a whole report is too long to read.
        got_lines, want_lines = output.splitlines(), want.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(got_lines, want_lines)) if a != b),
                     min(len(got_lines), len(want_lines)))
        pytest.fail(f"{name}: differs from {expected.name} at line {first + 1}:\n"
                    f"expected: {want_lines[first] if first < len(want_lines) else '(end)'}\n"
                    f"got:      {got_lines[first] if first < len(got_lines) else '(end)'}")


def test_the_report_is_as_committed(run_folder):
    expect_golden("report", gpuoverlap(run_folder, "report", "run", "--out", "-"))


def test_compare_of_the_run_against_itself_is_as_committed(run_folder):
    expect_golden("compare", gpuoverlap(run_folder, "compare", "run", "run", "--csv", "-"))


def test_the_history_rows_are_as_committed(run_folder, tmp_path):
    db = tmp_path / "history.db"
    ingest = gpuoverlap(run_folder, "history", "ingest", "--db", str(db), "run")
    assert ingest.startswith("exit status 0\n"), ingest
    # Every series of every scenario: the rows the history keeps, as trend reads them back.
    expect_golden("history-trend", gpuoverlap(run_folder, "history", "trend", "--db", str(db),
                                              "--csv", "-"))
