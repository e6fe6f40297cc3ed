#!/usr/bin/python3
"""Pack a measurement folder's raw per-scenario files into one `raw.tar.xz` beside its README,
so that docs/results/ keeps every summary, figure and command readable in the repository while
the bulk (records.csv[.gz], frames.csv, background.csv, preemption.csv, overlap.csv,
dependencies.csv, trace.json, meta.json, logs) is compressed, about ten times smaller.

Keep the archive in the tree only where a reader or a test needs the raw data
(docs/results/README.md, "How raw data is kept"); otherwise, or once superseded, it leaves
the tree (`git rm`) and the folder's README gains a "Raw data" section saying how to get it
back from history. The tracked files stay within 15 MB (tests/docs/test_docs.py).

A file linked from any Markdown file of the repository stays unpacked, so no link breaks;
with --with-linked it is packed too and each link to it becomes its name "in raw.tar.xz" (a
link to the archive). Reports of more than 100 kB (`report.md` and the like, the full dumps
of a run) count as raw. An existing raw.tar.xz is extended, never replaced. `tar xJf raw.tar.xz` in the folder restores
the files where they were, and every gpuoverlap tool reads them again.

Usage: scripts/pack_results.py docs/results/DATE-DEVICE-TOPIC [...]   (from the repository root)
       scripts/pack_results.py --dry-run ...   (list what would be packed)
       scripts/pack_results.py --with-linked ...   (pack linked files too, rewriting links)
"""
import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

RAW_NAMES = {"records.csv", "records.csv.gz", "frames.csv", "background.csv", "preemption.csv", "overlap.csv",
             "dependencies.csv", "trace.json", "trace.json.gz", "meta.json", "gpu-clocks.csv", "stdout"}
RAW_SUFFIXES = {".log"}
LINK = re.compile(r"\]\(([^)#\s]+)")


def tracked(path: Path) -> list:
    out = subprocess.run(["git", "ls-files", "-z", "--", str(path)], check=True,
                         capture_output=True).stdout
    return [Path(p) for p in out.decode().split("\0") if p]


def linked_files(root: Path) -> set:
    """Every repository file a Markdown link points at (relative links only)."""
    linked = set()
    for md in tracked(root):
        if md.suffix != ".md":
            continue
        for target in LINK.findall(md.read_text(errors="replace")):
            if "://" in target or target.startswith("mailto:"):
                continue
            linked.add(Path(os.path.normpath(md.parent / target)))
    return linked


BIG_REPORT_BYTES = 100_000


def is_raw(path: Path) -> bool:
    if path.suffix == ".md":
        return path.name != "README.md" and path.stat().st_size > BIG_REPORT_BYTES
    return path.name in RAW_NAMES or path.suffix in RAW_SUFFIXES


def rewrite_links(packed: set, folder: Path) -> None:
    """Every Markdown link to a packed file becomes its name in the folder's archive."""
    archive = folder / "raw.tar.xz"
    for md in tracked(Path(".")):
        if md.suffix != ".md" or md in packed:
            continue
        text = md.read_text(errors="replace")

        def replace(match):
            target = match.group(2)
            if "://" in target:
                return match.group(0)
            resolved = Path(os.path.normpath(md.parent / target))
            if resolved not in packed:
                return match.group(0)
            inner = resolved.relative_to(folder)
            to_archive = os.path.relpath(archive, md.parent)
            return f"`{inner}` (in [raw.tar.xz]({to_archive}))"

        new = re.sub(r"(?<!!)\[([^\]]*)\]\(([^)#\s]+)\)", replace, text)
        if new != text:
            md.write_text(new)
            subprocess.run(["git", "add", "--", str(md)], check=True)


def pack(folder: Path, linked: set, dry_run: bool, with_linked: bool) -> int:
    files = [p for p in tracked(folder) if is_raw(p) and (with_linked or p not in linked)]
    if not files:
        print(f"{folder}: nothing to pack")
        return 0
    size = sum(p.stat().st_size for p in files)
    archive = folder / "raw.tar.xz"
    if dry_run:
        print(f"{folder}: {len(files)} files, {size / 1e6:.1f} MB")
        return 0
    members = {}
    if archive.exists():  # extend: what an earlier pack kept stays
        with tarfile.open(archive, "r:xz") as old:
            for m in old.getmembers():
                if m.isfile():
                    members[m.name] = old.extractfile(m).read()
    for p in sorted(files):
        members[str(p.relative_to(folder))] = p.read_bytes()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(members[name]))
    tmp = archive.with_suffix(".xz.tmp")
    tmp.write_bytes(buffer.getvalue())
    # Check the archive before anything is removed: every file in it, byte for byte.
    with tarfile.open(tmp, "r:xz") as check:
        for p in files:
            if check.extractfile(str(p.relative_to(folder))).read() != p.read_bytes():
                tmp.unlink()
                raise SystemExit(f"{archive}: {p} did not round-trip; nothing removed")
    tmp.replace(archive)
    subprocess.run(["git", "rm", "-q", "-f", "--"] + [str(p) for p in files], check=True)
    subprocess.run(["git", "add", "--", str(archive)], check=True)
    if with_linked:
        rewrite_links(set(files), folder)
    print(f"{folder}: {len(files)} files, {size / 1e6:.1f} MB -> {archive} "
          f"{archive.stat().st_size / 1e6:.1f} MB")
    return 0


def main() -> int:
    args = sys.argv[1:]
    dry_run = "--dry-run" in args
    with_linked = "--with-linked" in args
    folders = [Path(a) for a in args if a not in ("--dry-run", "--with-linked")]
    if not folders:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for f in folders:
        if not (f / "README.md").is_file():
            print(f"{f}: not a measurement folder (no README.md)", file=sys.stderr)
            return 1
    linked = linked_files(Path("."))
    for f in folders:
        pack(f, linked, dry_run, with_linked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
