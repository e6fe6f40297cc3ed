#!/usr/bin/python3
"""The table of bench/poll_windows.sh: per self-test run its poll_detection rows (undisturbed
p50/p99, disturbed share, p99 of every stamp, steal), round trip and overhead verdicts; per
scenario of the main job its stamps' windows and disturbed stamps (meta.json poll_window).

Usage: poll_windows_table.py WORK_DIR   (the folder holding selftest-*/, all/ and all-unpinned/)
"""
import csv
import json
import sys
from pathlib import Path


def selftest_rows(folder: Path):
    rows = {}
    with open(folder / "selftest.csv", newline="") as f:
        for row in csv.DictReader(f):
            rows[(row["check"], row["metric"], row["config"])] = row
    return rows


def cell(rows, check, metric, config):
    row = rows.get((check, metric, config))
    if not row:
        return "–"
    value = row["value"] or "n/a"
    return f"{value} {row['verdict']}" if row["verdict"] in ("pass", "fail") else value


def main(work: Path):
    print("| self-test | poller CPU | memory | p50 undisturbed µs | p99 undisturbed µs | "
          "disturbed % | p99 all stamps µs | steal % | poller CPU interrupts /s | "
          "flag round trip p50 µs | "
          "semaphore round trip p50 / p99 µs | overhead | passed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for folder in sorted(p for p in work.glob("selftest-*") if p.is_dir()):
        if not (folder / "selftest.csv").exists():
            print(f"| {folder.name} | – | no selftest.csv |||||||")
            continue
        rows = selftest_rows(folder)
        summary = json.loads((folder / "selftest.json").read_text())
        passed = summary.get("passed")
        poller = summary.get("poller", {}).get("cpu")
        semaphore = (f"{cell(rows, 'round_trip', 'p50', 'semaphore')} / "
                     f"{cell(rows, 'round_trip', 'p99', 'semaphore')}")
        for config in ("uncached", "cached"):
            rt = rows.get(("round_trip", "p50", config)) or rows.get(
                ("round_trip", "rounds answered", config), {})
            print(f"| {folder.name} | {'unpinned' if poller is None else poller} | {config} | "
                  f"{cell(rows, 'poll_detection', 'p50 undisturbed', config)} | "
                  f"{cell(rows, 'poll_detection', 'p99 undisturbed', config)} | "
                  f"{cell(rows, 'poll_detection', 'disturbed share', config)} | "
                  f"{cell(rows, 'poll_detection', 'p99 all stamps', config)} | "
                  f"{cell(rows, 'poll_detection', 'cpu steal', config)} | "
                  f"{cell(rows, 'poll_detection', 'poller cpu interrupts', config)} | "
                  f"{(rt.get('value') or 'n/a')} {rt.get('verdict', '')} | {semaphore} | "
                  f"{cell(rows, 'overhead', 'duration ratio stamped/unstamped p50', '1ms')} | {passed} |")
    for name in ("all", "all-unpinned"):
        run = work / name
        if not (run / "run.json").exists():
            continue
        print(f"\n{name}:\n")
        print("| scenario | stamps | window p50 µs | window p99 µs | tolerance µs | disturbed | "
              "steal % |")
        print("|---|---|---|---|---|---|---|")
        index = json.loads((run / "run.json").read_text())
        for entry in index["scenarios"]:
            meta = json.loads((run / entry["directory"] / "meta.json").read_text())
            w = meta.get("poll_window", {})
            steal = w.get("cpu_steal")
            print(f"| {entry['name']} | {w.get('stamps', '–')} | {w.get('window_p50_us', '–')} | "
                  f"{w.get('window_p99_us', '–')} | {w.get('tolerance_us', '–')} | "
                  f"{w.get('disturbed_stamps', '–')} | "
                  f"{'–' if steal is None else round(100 * steal, 2)} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
