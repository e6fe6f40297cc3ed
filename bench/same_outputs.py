#!/usr/bin/python3
"""Checks that two results folders have the same shape: the same files in every scenario
folder, the same CSV header lines, the same meta.json key paths (values may differ) and the
same number of rows in records.csv, frames.csv and summary.csv of a frame scenario (a
preemption scenario's rows follow how many urgent jobs fit in its duration, which is timing). Used to prove that a refactoring changed
nothing a user sees (bench/before_after.sh). Prints each difference; exit 1 when any.

Usage: same_outputs.py BEFORE_DIR AFTER_DIR"""
import gzip
import json
import os
import sys


def key_paths(value, prefix=''):
    if isinstance(value, dict):
        paths = set()
        for key, inner in value.items():
            paths |= key_paths(inner, f'{prefix}.{key}' if prefix else key)
        return paths or {prefix}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        paths = set()
        for inner in value:
            paths |= key_paths(inner, prefix + '[]')
        return paths
    return {prefix}


def is_preemption(scenario_dir):
    try:
        with open(os.path.join(scenario_dir, 'meta.json')) as f:
            return 'preemption' in json.load(f)
    except (OSError, ValueError):
        return False


def files_under(root):
    found = set()
    for directory, _, files in os.walk(root):
        for name in files:
            found.add(os.path.relpath(os.path.join(directory, name), root))
    return found


def main(before, after):
    problems = []
    before_files, after_files = files_under(before), files_under(after)
    # Plots and logs are made later; they are not the run's own output.
    ignore = ('.png', '.log', '.txt')
    for path in sorted((before_files ^ after_files)):
        if not path.endswith(ignore):
            problems.append(f'{path}: only in {"before" if path in before_files else "after"}')
    for path in sorted(before_files & after_files):
        a, b = os.path.join(before, path), os.path.join(after, path)
        if path.endswith(('.csv', '.csv.gz')):
            opener = gzip.open if path.endswith('.gz') else open
            with opener(a, 'rt') as fa, opener(b, 'rt') as fb:
                header_a, header_b = fa.readline(), fb.readline()
                rows_a, rows_b = sum(1 for _ in fa), sum(1 for _ in fb)
            if header_a != header_b:
                problems.append(f'{path}: header differs:\n  {header_a.strip()}\n  {header_b.strip()}')
            if (os.path.basename(path) in ('records.csv', 'records.csv.gz', 'frames.csv', 'summary.csv')
                    and not is_preemption(os.path.dirname(a)) and rows_a != rows_b):
                problems.append(f'{path}: {rows_a} rows before, {rows_b} after')
        elif path.endswith('.json'):
            with open(a) as fa, open(b) as fb:
                keys_a, keys_b = key_paths(json.load(fa)), key_paths(json.load(fb))
            for key in sorted(keys_a ^ keys_b):
                problems.append(f'{path}: key {key} only {"before" if key in keys_a else "after"}')
    for problem in problems:
        print(problem)
    print(f'{len(before_files & after_files)} files in both; {len(problems)} differences')
    return 1 if problems else 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
