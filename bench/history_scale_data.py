#!/usr/bin/python3
"""A synthetic results history, written straight into the tables (not through `history
ingest`, which would take hours for 10,000 runs), and the judge of what `history regressions`
found in it.

  history_scale_data.py sqlite DB         fill a SQLite history that `gpuoverlap` has made
  history_scale_data.py csv DIR COLUMNS   machines.csv, runs.csv, metrics.csv for PostgreSQL's COPY,
                                          metrics.csv with COLUMNS (its table's, comma-separated)
  history_scale_data.py judge REGRESSIONS_TXT
                                          planted steps found at their run, false change points

The history: MACHINES machines, RUNS runs taken in turn on each (2,000 per machine), and per run
of a machine its 100 series: 5 scenarios x 5 workloads x {duration_p50_us, duration_p99_us} x
{poll, ts} (500 series in all, 250 of them medians). Each value is its series' level with
NOISE relative Gaussian noise; the medians and p99s of scenarios s0 and s1 (100 median series)
step up by STEP in their machine's newest STEP_RUNS runs, the others never move. Everything
comes from a fixed seed: the same history every time.
"""
import csv
import datetime
import random
import re
import sqlite3
import sys

MACHINES = 5
RUNS = 10_000
SCENARIOS = [f"s{i}" for i in range(5)]
WORKLOADS = [f"Compute {c}" for c in "ABCDE"]
METRICS = ["duration_p50_us", "duration_p99_us"]
CLOCKS = ["poll", "ts"]
STEPPED_SCENARIOS = {"s0", "s1"}
NOISE = 0.01  # relative standard deviation of a value: the A/A runs' noise of a p50
STEP = 0.05
STEP_RUNS = 20  # the step begins this many runs before its machine's newest
START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def machine_rows():
    for m in range(1, MACHINES + 1):
        gpu, driver = f"Synthetic GPU {m}", "Synthetic 1.0"
        key = f"{gpu}|4318|{m}|{driver}|Vulkan|Linux|Synthetic CPU"
        yield (m, key, gpu, 4318, m, driver, "Vulkan", "Linux", "Synthetic CPU", 16)


def machine_of(run_id):
    return (run_id - 1) % MACHINES + 1


def runs_of_machine():
    return RUNS // MACHINES


def step_from(run_index_in_machine):
    return run_index_in_machine >= runs_of_machine() - STEP_RUNS


def run_rows():
    for r in range(1, RUNS + 1):
        started = started_at(r)
        yield (r, f"synthetic-{r:05d}", machine_of(r), started, "synthetic",
               "gpuoverlap run --all", f"/synthetic/run-{r:05d}", len(SCENARIOS), started)


def series_keys():
    for s in SCENARIOS:
        for w in WORKLOADS:
            for metric in METRICS:
                for clock in CLOCKS:
                    yield s, w, metric, clock


def started_at(run_id):
    return (START + datetime.timedelta(minutes=10 * run_id)).strftime("%Y-%m-%dT%H:%M:%SZ")


def metric_rows(columns):
    """Rows of the metrics table with these columns: schema v1's, or v2's with each run's
    machine and start beside its values."""
    random_ = random.Random(20261126)
    keys = list(series_keys())
    # Each series' level: 20 to 500 us, p99 above its p50.
    level = {}
    for m in range(1, MACHINES + 1):
        for k in keys:
            base = random_.uniform(20, 500)
            level[(m, *k)] = base * (1.3 if k[2].endswith("p99_us") else 1.0)
    for r in range(1, RUNS + 1):
        m = machine_of(r)
        stepped = step_from((r - 1) // MACHINES)
        for k in keys:
            value = level[(m, *k)] * (1 + random_.gauss(0, NOISE))
            if stepped and k[0] in STEPPED_SCENARIOS:
                value *= 1 + STEP
            row = dict(run_id=r, scenario=k[0], series=k[1], metric=k[2], clock=k[3],
                       value=round(value, 4), low=round(value * 0.98, 4),
                       high=round(value * 1.02, 4), frames=200, machine_id=m,
                       started_at=started_at(r))
            yield tuple(row[c] for c in columns)


MACHINE_COLUMNS = "id, fingerprint, gpu, vendor_id, device_id, driver, api, os, cpu, cpu_cores"
RUN_COLUMNS = ("id, content_key, machine_id, started_at, tool_revision, command_line, directory, "
               "scenarios, ingested_at")


def fill_sqlite(path):
    db = sqlite3.connect(path)
    metric_columns = [row[1] for row in db.execute("PRAGMA table_info(metrics)")]
    with db:
        for table, columns, rows in (("machines", MACHINE_COLUMNS, machine_rows()),
                                     ("runs", RUN_COLUMNS, run_rows()),
                                     ("metrics", ", ".join(metric_columns),
                                      metric_rows(metric_columns))):
            marks = ", ".join("?" * len(columns.split(",")))
            db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
    db.close()


def write_csv(directory, metric_columns):
    for name, rows in (("machines", machine_rows()), ("runs", run_rows()),
                       ("metrics", metric_rows(metric_columns.split(",")))):
        with open(f"{directory}/{name}.csv", "w", newline="") as f:
            csv.writer(f).writerows(rows)


def judge(path):
    """`history regressions`' lines against the planted steps: a stepped series counts as found
    when a change point begins at the run where its step began; every other change point, in a
    series without a step or at another run of a stepped one, is false."""
    first_stepped = {}  # machine -> the run id where its step begins
    for r in range(1, RUNS + 1):
        m = machine_of(r)
        if step_from((r - 1) // MACHINES) and m not in first_stepped:
            first_stepped[m] = r
    line_re = re.compile(r"^(?:WORSE|moved)\s+run\s+(\d+) \(.*?\)  (.*?) · (.*?) · (.*?) · (.*?) · "
                         r"machine (\d+)  ")
    found, false_in_stepped, false_in_flat, judged = set(), 0, 0, 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            hit = line_re.match(line)
            if not hit:
                continue
            run, scenario, workload, metric, clock, machine = hit.groups()
            key = (int(machine), scenario, workload, metric, clock)
            if scenario in STEPPED_SCENARIOS:
                if int(run) == first_stepped[int(machine)]:
                    found.add(key)
                else:
                    false_in_stepped += 1
            else:
                false_in_flat += 1
    medians = [k for k in series_keys() if k[2].endswith("_p50_us")]
    stepped = sum(1 for k in medians if k[0] in STEPPED_SCENARIOS) * MACHINES
    flat = len(medians) * MACHINES - stepped
    print(f"planted 5 % steps found at their run: {len(found)} of {stepped} series")
    print(f"false change points: {false_in_flat} in {flat} series without a step, "
          f"{false_in_stepped} elsewhere in the {stepped} with one")


if __name__ == "__main__":
    commands = {"sqlite": (fill_sqlite, 1), "csv": (write_csv, 2), "judge": (judge, 1)}
    if len(sys.argv) < 2 or sys.argv[1] not in commands or \
            len(sys.argv) != 2 + commands[sys.argv[1]][1]:
        sys.exit(__doc__)
    commands[sys.argv[1]][0](*sys.argv[2:])
