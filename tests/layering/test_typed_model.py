"""Derived results travel as typed values: outside the files' edges (the loaders that read a
results file's text once, and the enum tables that name values), no source compares a
decision, an outcome, a role, a class or a status by its text, nor decides what a scenario is
from meta.json's members, nor walks a scenario's meta.json: a reader that needs one gets an
enum from the loader, and meta.json's members as ScenarioMeta (analysis/scenario_meta.h)."""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Where a file's text becomes values (and values text): the only places allowed to compare it.
EDGES = {
    "analysis/results.cpp",      # records, summary, frames, background, meta.json's kind
    "analysis/study_files.cpp",  # verdict.csv and verdict.json
    "analysis/scenario_meta.cpp",  # meta.json's members
    "core/enum_names.h",         # the name tables themselves
}

WORDS = (r"non-intrusive|intrusive|inconclusive[^\"]*|diagnostic: \w+|ok|slower|faster|"
         r"primary|diagnostic|dearer|cheaper|same|undecided|preempts|coarse|blocked|unmeasured|"
         r"neighbours|background|separate|managed|unmanaged|pass|fail|limited|failed|unsupported")
FORBIDDEN = [
    (re.compile(r'(==|!=)\s*"(' + WORDS + r')"'), "compares a value's text"),
    (re.compile(r'"(' + WORDS + r')"\s*(==|!=)'), "compares a value's text"),
    (re.compile(r'starts_with\("(non-intrusive|intrusive|inconclusive)'), "reads a decision's text"),
    (re.compile(r'\.find\("(worse|within|unclear|inconclusive|intrusive|slower|faster)"\)'),
     "reads a decision's text"),
    (re.compile(r'meta(\.value\("scenario"[^)]*\))?\.contains\("(preemption|cpu|study)"\)'),
     "decides what a scenario is from meta.json (LoadedScenario::kind, game_frame, study)"),
]
# A scenario's meta.json as read is kept to be written through, and built by the live feed;
# everyone else reads LoadedScenario::meta.
META_JSON = re.compile(r'\bmeta_json\b')
META_JSON_WRITERS = {"analysis/results.h", "viewer/live_feed.cpp"}


def sources():
    listed = subprocess.run(["git", "ls-files", "*.cpp", "*.h"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.split()
    # Tests check the files' text on purpose; fuzz targets feed it.
    return [p for p in listed if not p.startswith("tests/") and p not in EDGES]


def violations(files, root=ROOT):
    found = []
    for relative in files:
        for number, line in enumerate((root / relative).read_text(errors="replace").splitlines(), 1):
            code = line.split("//", 1)[0]
            for pattern, why in FORBIDDEN:
                if pattern.search(code):
                    found.append(f"{relative}:{number}: {why}: {line.strip()}")
            if META_JSON.search(code) and relative not in META_JSON_WRITERS:
                found.append(f"{relative}:{number}: walks meta.json (read LoadedScenario::meta): "
                             f"{line.strip()}")
    return found


def test_no_source_outside_a_file_edge_compares_a_value_by_its_text():
    assert violations(sources()) == []


def test_the_check_finds_what_it_forbids(tmp_path):
    bad = tmp_path / "bad.cpp"
    bad.write_text('if (row.verdict == "slower") {}\n'
                   'if (text.starts_with("inconclusive")) {}\n'
                   'if (s.meta.contains("preemption")) {}\n'
                   'bool ok = "primary" != role;\n'
                   '// a comment may say row.verdict == "ok"\n'
                   'if (row.outcome == CompareOutcome::ok) {}\n'
                   'auto q = s.meta_json["queues"];\n'
                   'auto q = s.meta.queues;\n')
    found = violations(["bad.cpp"], tmp_path)
    assert [f.split(":")[1] for f in found] == ["1", "2", "3", "4", "7"], found
