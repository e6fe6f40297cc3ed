"""Reading a results folder, which is untrusted input (folders are attached to bug reports).

Every file must be a regular file, a .gz file must inflate within bounds, every numeric cell
must be a finite number, meta.json's and verdict.json's fields must have the types gpuoverlap
writes, and a folder of a newer results format is refused. Damage is an InputError naming the
file (and the line and column), which plot.py prints as one line. Also the columns the plots
read, and `short`, which makes a name read from the folder safe to print."""
import gzip
import io
import json
import math
import os
import stat
import zlib

import numpy as np
import pandas as pd

EXIT_BAD_INPUT = 2
MAX_NAME_CHARS = 64  # names in titles and labels (the tool's own limit: scenarios/names.h)
RECORD_NUMERIC = ("frame", "poll_start_us", "poll_end_us", "ts_start_us", "ts_end_us",
                  "frame_t0_us", "clk_start_us", "clk_end_us")
FRAME_NUMERIC = ("frame", "cpu_start_us", "cpu_frame_us", "cpu_submit_us", "submit_to_start_us",
                 "poll_gap_max_us", "bg_managed", "bg_unmanaged", "frame_interval_us",
                 "gpu_span_us", "cpu_phase_us", "critical_path_us", "wake_max_us",
                 "worker_busy_min_us", "worker_busy_max_us")
RECORD_COLUMNS = [
    "scenario", "frame", "workload", "queue", "queue_type", "priority", "kind", "groups",
    "iterations", "depends_on", "barrier", "poll_start_us", "poll_end_us", "ts_start_us",
    "ts_end_us", "status",
]
DEPENDENCY_COLUMNS = ["producer", "consumer", "barrier", "clock", "gap_p5_us", "gap_p50_us",
                      "gap_p95_us"]


class InputError(Exception):
    """Bad input: reported as one line naming the file, exit status 2."""


def check_regular_file(path):
    """A FIFO would block the reader, a directory or device is a mistake."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from error
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: not a regular file")


# A .gz input may inflate at most this many times its size once past 1 MiB (the C++ readers'
# bound): gpuoverlap's CSVs compress 4- to 15-fold, a decompression bomb a thousandfold.
MAX_GZIP_RATIO = 200
MAX_TEXT_BYTES = 2 << 30


def read_text(path):
    """A file's text, inflated when its name ends in .gz. Damage (not gzip, truncated, a bad
    checksum, bytes after the data) and decompression bombs are an InputError naming the file."""
    check_regular_file(path)
    try:
        if path.suffix != ".gz":
            with open(path, "rb") as f:
                return f.read().decode("utf-8")
        limit = min(MAX_TEXT_BYTES, max(1 << 20, MAX_GZIP_RATIO * path.stat().st_size))
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                raise InputError(f"{path}: not a gzip file (its first bytes are not 1f 8b)")
        with gzip.open(path, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise InputError(f"{path}: inflates more than {MAX_GZIP_RATIO}-fold (a decompression "
                             "bomb, or not written by gpuoverlap)")
        return data.decode("utf-8")
    except EOFError as error:
        raise InputError(f"{path}: truncated (the gzip stream ends early)") from error
    except (OSError, zlib.error, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read: {error}") from error


def read_table(path, required, numeric=(), hint=""):
    """A CSV written by gpuoverlap, every cell as text. `numeric` columns that are present become
    numbers: an empty cell is NaN (no value), anything else must be a finite number. An
    unreadable file, a missing column of `required` or a bad number is an InputError naming
    the line and column."""
    text = read_text(path)
    try:
        table = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as error:
        raise InputError(f"{path}: cannot read: {error}") from error
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}{hint}")
    for column in numeric:
        if column not in table.columns:
            continue
        text = table[column].str.strip()
        values = pd.to_numeric(text.where(text != ""), errors="coerce")
        bad = (text != "") & ~np.isfinite(values.astype(float))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{path}: line {row + 2}, column {column}: "
                             f"{short(text.iloc[row])!r} is not a finite number")
        table[column] = values.astype(float)
    return table


def records_file(directory):
    """records.csv.gz, or records.csv in results from before it was compressed; None: neither."""
    for name in ("records.csv.gz", "records.csv"):
        if (directory / name).exists():
            return directory / name
    return None


def read_records(directory):
    path = records_file(directory) or directory / "records.csv.gz"
    return read_table(path, RECORD_COLUMNS, RECORD_NUMERIC,
                      " (not a gpuoverlap records table, or from an older version)")


def read_json(path):
    check_regular_file(path)
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InputError(f"{path}: cannot read: {error}") from error


# meta.json fields the plots use, with the types gpuoverlap writes (absent ones are fine).
META_FIELDS = [
    (("scenario",), dict), (("scenario", "name"), str), (("device",), dict),
    (("device", "name"), str), (("device", "driver_name"), str), (("device", "driver_info"), str),
    (("preemption",), dict), (("preemption", "spec"), dict),
    (("preemption", "spec", "period_ms"), (int, float)), (("preemption", "spec", "load"), str),
    (("preemption", "priority_granted"), str), (("preemption", "process"), str),
    (("scenario", "study"), dict),
]
VERDICT_FIELDS = [
    (("study",), str), (("baseline",), str), (("conditions",), list), (("gpu_clock",), str),
    (("control_doses",), list),
]


def check_fields(document, fields, path, required=()):
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a JSON object")
    for keys, kind in fields:
        value, present = document, True
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                present = False
                break
            value = value[key]
        name = ".".join(keys)
        if not present:
            if keys in required:
                raise InputError(f"{path}: '{name}' is missing")
            continue
        if not isinstance(value, kind) or isinstance(value, bool) and kind != bool or (
                isinstance(value, float) and not math.isfinite(value)):
            raise InputError(f"{path}: '{name}' has the wrong type ({type(value).__name__})")
    return document


# The newest results format this script reads: gpuoverlap's kResultsFormatVersion
# (timeline/results_format.h; docs/output-format.md, "Format version").
RESULTS_FORMAT_VERSION = 3


def check_format_version(document, path):
    """A run.json or meta.json of a newer results format than this script reads is refused in one
    line rather than misread; a file without `format_version` predates the number (version 0)."""
    version = document.get("format_version", 0) if isinstance(document, dict) else 0
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise InputError(f"{path}: 'format_version' must be a whole number")
    if version > RESULTS_FORMAT_VERSION:
        raise InputError(f"{path}: results format {version}, newer than this plot.py reads "
                         f"({RESULTS_FORMAT_VERSION}): use the plot.py of the gpuoverlap that "
                         "wrote it")
    return document


def read_meta(directory):
    path = directory / "meta.json"
    return check_format_version(check_fields(read_json(path), META_FIELDS, path), path)


def short(name):
    """A name for a title or label: one line, at most MAX_NAME_CHARS characters."""
    text = "".join(c if c.isprintable() else "?" for c in str(name))
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "…"


def is_preemption(meta):
    return "preemption" in meta
