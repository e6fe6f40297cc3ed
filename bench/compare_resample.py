#!/usr/bin/python3
"""Judge `gpuoverlap compare` on stored runs, without the GPU: draw random, disjoint sets of
runs of one configuration (A) and compare them (A/A: any CHANGED is a false alarm), and sets of
A against runs of another (B: CHANGED is a catch). For each, which section's rows changed
(`workloads`, `frames`, `frame_share`: compare's CSV). With --disjoint, also trials that share
no run: the B runs split into sets of --runs, each against A runs not used before, and A/A
pairs of sets until the A runs are used up. The runs are those bench/compare_noise.sh and
bench/compare_frames.sh keep; the draws are seeded, so the counts repeat.

  bench/compare_resample.py --gpuoverlap build-release/gpuoverlap \\
      --a 'DIR/a-*' --b 'DIR/b-*' --runs 5 --draws 200 [--disjoint]
"""
import argparse
import collections
import csv
import glob
import io
import random
import re
import subprocess
import sys


def compare(binary, baseline, candidate, extra):
    """(changed, table, sections): sections counts the CHANGED rows per section."""
    result = subprocess.run([binary, "compare", "--baseline", *baseline, "--candidate",
                             *candidate, *extra, "--csv", "-"], capture_output=True, text=True)
    if result.returncode not in (0, 1):
        sys.exit(f"compare failed ({result.returncode}): {result.stderr.strip()}")
    text = result.stdout
    header = text.find("scenario,workload,metric,")
    table, sections = text[:header], collections.Counter()
    if header >= 0:
        for row in csv.DictReader(io.StringIO(text[header:])):
            if row["verdict"] != "ok":
                sections[row.get("section") or "workloads"] += 1
    if "CHANGED" in table and "study decisions that differ" in table:
        sections["decisions"] += 1
    return result.returncode == 1, table, sections


class Tally:
    def __init__(self):
        self.trials = self.changed = 0
        self.by_section = collections.Counter()  # trials in which a section had a CHANGED row
        self.own = 0

    def add(self, changed, table, sections, own):
        self.trials += 1
        self.changed += changed
        for section in sections:
            self.by_section[section] += 1
        if own and any(own.search(line) and "CHANGED" in line for line in table.splitlines()):
            self.own += 1

    def line(self, what):
        sections = ", ".join(f"{name} {count}" for name, count in sorted(self.by_section.items()))
        return (f"{what}: {self.changed} of {self.trials}"
                + (f" (trials with a CHANGED row, by section: {sections})" if sections else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpuoverlap", required=True, help="the binary")
    parser.add_argument("--a", required=True, help="glob of the A runs' results directories")
    parser.add_argument("--b", help="glob of the B runs' results directories")
    parser.add_argument("--runs", type=int, default=5, help="runs per side (default 5)")
    parser.add_argument("--draws", type=int, default=200, help="draws per test (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--disjoint", action="store_true",
                        help="also trials that share no run (see above)")
    parser.add_argument("--own", default="",
                        help="a regular expression: the rows that must be CHANGED in A/B")
    parser.add_argument("extra", nargs="*", help="more compare options, after --")
    args = parser.parse_args()
    a_runs = sorted(d for d in glob.glob(args.a) if not d.endswith(".log"))
    b_runs = sorted(d for d in glob.glob(args.b) if not d.endswith(".log")) if args.b else []
    if len(a_runs) < 2 * args.runs:
        sys.exit(f"{len(a_runs)} A runs: at least {2 * args.runs} are needed")
    if b_runs and len(b_runs) < args.runs:
        sys.exit(f"{len(b_runs)} B runs: at least {args.runs} are needed")
    rng = random.Random(args.seed)
    own = re.compile(args.own) if args.own else None
    aa, ab = Tally(), Tally()
    for _ in range(args.draws):
        drawn = rng.sample(a_runs, 2 * args.runs)
        baseline, other = drawn[:args.runs], drawn[args.runs:]
        aa.add(*compare(args.gpuoverlap, baseline, other, args.extra), None)
        if b_runs:
            ab.add(*compare(args.gpuoverlap, baseline, rng.sample(b_runs, args.runs),
                            args.extra), own)
    print(f"{len(a_runs)} A runs, {len(b_runs)} B runs; {args.runs} runs per side, "
          f"{args.draws} draws (seed {args.seed})")
    print(aa.line("A/A false alarms"))
    if b_runs:
        print(ab.line("A/B catches     "))
    if own:
        print(f"A/B with a row matching '{args.own}' CHANGED: {ab.own} of {args.draws}")
    if args.disjoint:
        shuffled_a, shuffled_b = rng.sample(a_runs, len(a_runs)), rng.sample(b_runs, len(b_runs))
        disjoint_ab, disjoint_aa = Tally(), Tally()
        n = args.runs
        for t in range(len(shuffled_b) // n):
            baseline = shuffled_a[(t * n) % len(shuffled_a):][:n]
            if len(baseline) < n:
                break
            disjoint_ab.add(*compare(args.gpuoverlap, baseline, shuffled_b[t * n:(t + 1) * n],
                                     args.extra), own)
        for t in range(len(shuffled_a) // (2 * n)):
            sets = shuffled_a[2 * t * n:2 * (t + 1) * n]
            disjoint_aa.add(*compare(args.gpuoverlap, sets[:n], sets[n:], args.extra), None)
        print("disjoint trials (no run shared within a trial; B trials may reuse A sets):")
        print(disjoint_aa.line("  A/A false alarms"))
        if b_runs:
            print(disjoint_ab.line("  A/B catches     "))


if __name__ == "__main__":
    main()
