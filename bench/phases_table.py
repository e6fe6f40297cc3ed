#!/usr/bin/python3
"""Where a run's time went, from its own files: per family of scenarios (a study, the
preemption matrix, the other presets) the scenarios' seconds (run.json) split into the phases
meta.json records (`phases_ms`: opening the device, the frames before the measured ones, the
measured ones, stopping the background work and workers, closing the device; a preemption
run's loop) and writing the results (run.json `write_seconds`).

Usage: bench/phases_table.py RESULTS_DIR [RESULTS_DIR...]   (a `gpuoverlap run --all` folder)
"""
import json
import sys
from collections import OrderedDict
from pathlib import Path

PHASES = ["open_device", "before_measured", "measured", "after_frames", "loop", "close_device"]


def family(directory: str) -> str:
    parts = directory.split("/")
    return parts[0] if len(parts) > 1 else "other presets"


def table(root: Path) -> str:
    run = json.loads((root / "run.json").read_text())
    sums = OrderedDict()
    for entry in run["scenarios"]:
        if not entry.get("directory"):
            continue
        row = sums.setdefault(family(entry["directory"]), OrderedDict(
            [("scenarios", 0), ("seconds", 0.0)] + [(p, 0.0) for p in PHASES] + [("write", 0.0)]))
        row["scenarios"] += 1
        row["seconds"] += entry.get("seconds", 0.0)
        row["write"] += entry.get("write_seconds", 0.0)
        meta = json.loads((root / entry["directory"] / "meta.json").read_text())
        for phase, ms in meta.get("phases_ms", {}).items():
            if phase in row:
                row[phase] += ms / 1000.0
    lines = [f"## {root}", "",
             "| family | scenarios | seconds | " + " | ".join(PHASES) + " | rest | write |",
             "|---|" + "---|" * (len(PHASES) + 4)]
    for name, row in sums.items():
        rest = row["seconds"] - sum(row[p] for p in PHASES)
        lines.append(f"| {name} | {row['scenarios']} | {row['seconds']:.1f} | " +
                     " | ".join(f"{row[p]:.2f}" for p in PHASES) +
                     f" | {rest:.2f} | {row['write']:.2f} |")
    parts = OrderedDict()  # the opening's parts over every scenario that opened a device
    opened = 0
    for entry in run["scenarios"]:
        if not entry.get("directory"):
            continue
        meta = json.loads((root / entry["directory"] / "meta.json").read_text())
        split = (meta.get("device_opening") or {}).get("parts_ms")
        if not split:
            continue
        opened += 1
        for part, ms in split.items():
            parts[part] = parts.get(part, 0.0) + ms / 1000.0
    if parts:
        lines += ["", f"Opening a device, by part, over the {opened} scenarios that opened one:", "",
                  "| " + " | ".join(parts) + " |", "|" + "---|" * len(parts),
                  "| " + " | ".join(f"{s:.2f}" for s in parts.values()) + " |"]
    lines.append("")
    lines.append("Seconds in s; `rest`: the scenario's seconds outside the recorded phases "
                 "(validation, sizes, the executor's own work); `write`: writing its files, "
                 "after its seconds.")
    return "\n".join(lines) + "\n"


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for arg in sys.argv[1:]:
        root = Path(arg)
        if not (root / "run.json").is_file():
            print(f"{root}: no run.json (not a `gpuoverlap run` folder)", file=sys.stderr)
            return 1
        print(table(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
