"""Fixtures: real results made by the gpuoverlap binary (lavapipe on CI) in this test run."""
import gzip
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plots"))


def gpuoverlap_binary():
    binary = os.environ.get("GPUOVERLAP_BINARY")
    if not binary or not pathlib.Path(binary).exists():
        pytest.fail("set GPUOVERLAP_BINARY to the built gpuoverlap (ctest does)")
    return binary


@pytest.fixture(scope="session")
def results(tmp_path_factory):
    """Three presets, both clocks: every kind of plot and trace event occurs."""
    out = tmp_path_factory.mktemp("results")
    command = [gpuoverlap_binary(), "run", "default", "three-dispatches-split-event", "barrier-cost",
               "--frames", "4",
               "--warmup", "1", "--priority-fallback", "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def run_plot(*args):
    return subprocess.run([sys.executable, str(ROOT / "plots" / "plot.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def records_path(directory):
    """A scenario's records table: records.csv.gz as gpuoverlap writes it."""
    return directory / "records.csv.gz"


def read_records_text(directory):
    return gzip.decompress(records_path(directory).read_bytes()).decode()


def write_records_text(directory, text):
    records_path(directory).write_bytes(gzip.compress(text.encode()))
