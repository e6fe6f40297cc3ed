#!/bin/sh
# The busy-work calibration of each `run --all` under OUT (bench/repeat.sh's all-K folders)
# beside the study's baseline CPU phase and decisions: does a process that calibrated wrong
# give its game frame a different amount of work? Usage: calibration_table.sh OUT
echo "| run | iterations/us | best run (ms, CPU clock) | best run (ms, wall) | shared runs | spread % | baseline CPU phase p50 (us) | managed | unmanaged-1 |"
echo "|---|---|---|---|---|---|---|---|---|"
for d in "$1"/all-*/; do
  /usr/bin/python3 - "$d" <<'PY'
import csv, json, pathlib, sys
d = pathlib.Path(sys.argv[1])
c = json.load(open(d / "game-frame" / "meta.json"))["cpu"]["busy_work_calibration"]
rows = list(csv.DictReader(open(d / "non-intrusiveness" / "verdict.csv")))
phase = next((r["baseline_p50"] for r in rows if r["metric"] == "cpu_phase_us"), "?")
calls = {c["condition"]: c.get("verdict") for c in
         json.load(open(d / "non-intrusiveness" / "verdict.json"))["conditions"]}
print(f"| {d.name} | {c['iterations_per_us']} | {c.get('best_run_ms')} | "
      f"{c.get('wall_best_run_ms', '')} | {c.get('shared_runs', '')} | {c['spread_pct']} | "
      f"{phase} | {calls.get('managed')} | {calls.get('unmanaged-1')} |")
PY
done
