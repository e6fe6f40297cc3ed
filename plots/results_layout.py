"""Where a results folder keeps what plot.py draws: its scenario directories (a lone scenario
directory too), those run on their own, its studies and its preemption matrices."""
import pathlib

from inputs import InputError, check_format_version, read_json, records_file


def top_level_scenarios(results, scenarios):
    """(name, directory) of the scenarios run on their own: not a study's round or a matrix's
    cell. A lone scenario directory is named as it is drawn (its folder's name)."""
    found = []
    for directory in scenarios:
        relative = directory.relative_to(results)
        if relative == pathlib.Path("."):
            found.append((directory.resolve().name, directory))
        elif len(relative.parts) == 1:
            found.append((relative.parts[0], directory))
    return found


def preemption_groups(results, scenarios):
    """Scenario directories one level below a common folder (a matrix's cells), by folder."""
    groups = {}
    for directory in scenarios:
        relative = directory.relative_to(results)
        if len(relative.parts) == 2 and (directory / "preemption.csv").exists():
            groups.setdefault(relative.parent, []).append(directory)
    return groups


def study_directories(results):
    return sorted(p.parent for p in results.rglob("verdict.csv") if "plots" not in p.parts)


def scenario_directories(results):
    if not results.is_dir():
        raise InputError(f"{results}: not a directory")
    if (results / "run.json").is_file():
        check_format_version(read_json(results / "run.json"), results / "run.json")
    # A study's conditions (and rounds) are nested: <study>/<condition>[/round-<r>].
    found = sorted({p.parent for pattern in ("records.csv.gz", "records.csv")
                    for p in results.rglob(pattern)
                    if p.parent != results and "plots" not in p.relative_to(results).parts})
    if records_file(results):
        found.insert(0, results)  # a single scenario directory works too
    if not found and not study_directories(results):
        raise InputError(f"{results}: no scenario results (no */records.csv.gz); "
                         "pass the directory `gpuoverlap run --out` wrote")
    return found
