"""The repository as a reader meets it: every relative Markdown link resolves, every packed
measurement opens, scripts/pack_results.py packs, keeps and rewrites as it says, and the
tracked files stay within the size limit docs/results/README.md states."""
import os
import re
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)#\s]+)")


def tracked(root: Path):
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                         capture_output=True).stdout.decode()
    return [p for p in out.split("\0") if p]


def broken_links(root: Path):
    files = tracked(root)
    present = set(files)
    folders = {str(Path(f).parent) for f in files}
    broken = []
    for md in files:
        if not md.endswith(".md"):
            continue
        for target in LINK.findall((root / md).read_text(errors="replace")):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(md), target))
            if resolved not in present and resolved not in folders and not any(
                    f.startswith(resolved + "/") for f in folders):
                broken.append(f"{md} -> {target}")
    return broken


def test_every_relative_markdown_link_resolves():
    assert broken_links(ROOT) == []


def test_every_packed_measurement_opens_and_holds_files():
    archives = [p for p in tracked(ROOT) if p.startswith("docs/results/") and
                p.endswith("raw.tar.xz")]
    assert archives, "docs/results keeps raw data packed"
    for archive in archives:
        with tarfile.open(ROOT / archive, "r:xz") as tar:
            names = [m.name for m in tar.getmembers() if m.isfile()]
        assert names, archive
        # Paths inside stay inside the folder they are unpacked in.
        assert all(not n.startswith("/") and ".." not in Path(n).parts for n in names), archive


# The tracked files' total, in bytes: 15 MB in decimal units (15 * 1000 * 1000), not MiB.
TRACKED_LIMIT_BYTES = 15 * 1000 * 1000


def tracked_sizes(root: Path):
    """(size, path) of every tracked regular file, as os.stat gives it (a link is not followed
    and a tracked path missing from the work tree counts nothing)."""
    sizes = []
    for path in tracked(root):
        try:
            st = os.stat(root / path, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode):
            sizes.append((st.st_size, path))
    return sizes


def size_limit_failure(sizes, limit=TRACKED_LIMIT_BYTES):
    """None when the files' sizes total at most limit bytes; else a message with the total and
    the ten largest files."""
    total = sum(size for size, _ in sizes)
    if total <= limit:
        return None
    largest = sorted(sizes, key=lambda s: (-s[0], s[1]))[:10]
    lines = [f"tracked files total {total:,} bytes, over the limit of {limit:,} "
             "(docs/results/README.md, \"How raw data is kept\"); the ten largest:"]
    lines += [f"  {size:>12,}  {path}" for size, path in largest]
    return "\n".join(lines)


def test_tracked_files_stay_within_the_size_limit():
    sizes = tracked_sizes(ROOT)
    assert sizes, "git ls-files lists the repository's files"
    failure = size_limit_failure(sizes)
    assert failure is None, failure


def test_size_limit_check_fails_above_the_limit_and_names_the_largest_files():
    at_limit = [(TRACKED_LIMIT_BYTES - 1, "a.bin"), (1, "b.txt")]
    assert size_limit_failure(at_limit) is None
    over = [(1_000_000 + i, f"docs/results/m/raw-{i}.tar.gz") for i in range(16)] + \
        [(5, "README.md")]
    failure = size_limit_failure(over)
    assert failure is not None
    total = sum(size for size, _ in over)
    assert f"total {total:,} bytes" in failure and f"limit of {TRACKED_LIMIT_BYTES:,}" in failure
    listed = [line.split()[-1] for line in failure.splitlines()[1:]]
    assert listed == [f"docs/results/m/raw-{i}.tar.gz" for i in range(15, 5, -1)]


def test_tracked_sizes_count_regular_files_only(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "data.bin").write_bytes(b"x" * 1234)
    (repo / "link").symlink_to("data.bin")
    (repo / "gone.txt").write_text("soon removed\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    (repo / "gone.txt").unlink()
    assert tracked_sizes(repo) == [(1234, "data.bin")]


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_pack_results_packs_raw_files_keeps_linked_ones_and_rewrites_links(tmp_path):
    repo = tmp_path / "repo"
    folder = repo / "docs" / "results" / "m"
    (folder / "run" / "default").mkdir(parents=True)
    (folder / "README.md").write_text(
        "Data: [records](run/default/records.csv), [summary](run/default/summary.csv).\n")
    (folder / "run" / "default" / "records.csv").write_text("frame,poll_start_us\n0,1.5\n" * 50)
    (folder / "run" / "default" / "meta.json").write_text('{"device": {}}\n')
    (folder / "run" / "default" / "summary.csv").write_text("workload,frames\nA,1\n")
    (folder / "run.log").write_text("log line\n" * 100)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    script = ROOT / "scripts" / "pack_results.py"

    def pack(*args):
        return subprocess.run([sys.executable, str(script), *args, "docs/results/m"], cwd=repo,
                              capture_output=True, text=True)

    first = pack()
    assert first.returncode == 0, first.stderr
    names = set(tarfile.open(folder / "raw.tar.xz", "r:xz").getnames())
    # meta.json and the log are raw and unlinked; records.csv is linked, summary.csv a summary.
    assert names == {"run/default/meta.json", "run.log"}
    assert (folder / "run" / "default" / "records.csv").exists()
    assert not (folder / "run" / "default" / "meta.json").exists()
    assert (folder / "run" / "default" / "summary.csv").exists()

    second = pack("--with-linked")
    assert second.returncode == 0, second.stderr
    with tarfile.open(folder / "raw.tar.xz", "r:xz") as tar:
        names = set(tar.getnames())
        records = tar.extractfile("run/default/records.csv").read().decode()
    assert names == {"run/default/meta.json", "run.log", "run/default/records.csv"}, \
        "an earlier pack's files stay"
    assert records.startswith("frame,poll_start_us\n0,1.5\n")
    readme = (folder / "README.md").read_text()
    assert "`run/default/records.csv` (in [raw.tar.xz](raw.tar.xz))" in readme
    assert "[summary](run/default/summary.csv)" in readme
    assert broken_links(repo) == []

    refused = subprocess.run([sys.executable, str(script), "docs"], cwd=repo,
                             capture_output=True, text=True)
    assert refused.returncode == 1 and "not a measurement folder" in refused.stderr
