"""Structural validation of trace.json (Chrome trace-event format) as gpuoverlap writes it."""
import csv
import gzip
import io
import json
from collections import defaultdict

from conftest import read_records_text

REQUIRED = {
    "X": {"name", "ph", "ts", "dur", "pid", "tid"},
    "M": {"name", "ph", "pid", "args"},
    "s": {"name", "ph", "ts", "pid", "tid", "id", "cat"},
    "f": {"name", "ph", "ts", "pid", "tid", "id", "cat", "bp"},
}


def load(results, scenario):
    # Written gzip-compressed (what the Perfetto UI opens as it is); older results: plain.
    packed = results / scenario / "trace.json.gz"
    if packed.exists():
        return json.loads(gzip.decompress(packed.read_bytes()).decode())
    return json.loads((results / scenario / "trace.json").read_text())


def test_every_event_has_the_fields_of_its_phase(results):
    for scenario in ("default", "three-dispatches-split-event"):
        trace = load(results, scenario)
        assert isinstance(trace["traceEvents"], list) and trace["traceEvents"]
        assert trace["otherData"]["device"]["name"]
        for event in trace["traceEvents"]:
            assert event["ph"] in REQUIRED, event
            missing = REQUIRED[event["ph"]] - event.keys()
            assert not missing, (event, missing)
            if event["ph"] == "X":
                assert event["dur"] >= 0
                assert event["ts"] >= 0


def test_a_process_per_queue_and_a_named_track_per_workload(results):
    trace = load(results, "default")
    processes = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(processes.values()) == ["compute queue (compute, normal)",
                                          "direct queue (direct, normal)"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
    assert len(threads) == 8
    for event in trace["traceEvents"]:
        if event["ph"] == "X":
            assert threads[(event["pid"], event["tid"])] == event["name"]


def test_one_slice_per_ok_record(results):
    for scenario in ("default", "three-dispatches-split-event"):
        rows = csv.DictReader(io.StringIO(read_records_text(results / scenario)))
        ok = sum(1 for row in rows if row["status"] == "ok")
        slices = [e for e in load(results, scenario)["traceEvents"] if e["ph"] == "X"]
        assert len(slices) == ok


def slices_by_track(trace):
    tracks = defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    return tracks


def test_slices_are_well_nested_per_track(results):
    for scenario in ("default", "three-dispatches-split-event"):
        for track, slices in slices_by_track(load(results, scenario)).items():
            slices.sort()
            stack = []
            for start, end in slices:
                while stack and stack[-1] <= start:
                    stack.pop()
                assert not stack or end <= stack[-1], (scenario, track, start, end, stack)
                stack.append(end)


def test_flows_connect_existing_slices(results):
    for scenario in ("default", "three-dispatches-split-event"):
        trace = load(results, scenario)
        tracks = slices_by_track(trace)
        starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
        finishes = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
        assert starts and starts.keys() == finishes.keys()
        for flow_id, s in starts.items():
            f = finishes[flow_id]
            assert any(a <= s["ts"] <= b for a, b in tracks[(s["pid"], s["tid"])]), s
            assert any(a <= f["ts"] <= b for a, b in tracks[(f["pid"], f["tid"])]), f
            assert f["ts"] >= s["ts"], (s, f)  # a consumer starts after its producer's end
            assert f["bp"] == "e"
