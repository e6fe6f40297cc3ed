#!/usr/bin/python3
"""Judge `gpuoverlap compare` on stored runs, without the GPU: draw random, disjoint sets of
runs of one configuration (A) and compare them (A/A: any CHANGED is a false alarm), and sets of
A against runs of another (B: CHANGED is a catch). The runs are those bench/compare_noise.sh
keeps in its tarballs; the draws are seeded, so the counts repeat.

  bench/compare_resample.py --gpuoverlap build-release/gpuoverlap \\
      --a 'DIR/a-*' --b 'DIR/b-*' --runs 5 --draws 200
"""
import argparse
import glob
import random
import subprocess
import sys


def compare(binary, baseline, candidate, extra):
    result = subprocess.run([binary, "compare", "--baseline", *baseline, "--candidate",
                             *candidate, *extra], capture_output=True, text=True)
    if result.returncode not in (0, 1):
        sys.exit(f"compare failed ({result.returncode}): {result.stderr.strip()}")
    return result.returncode == 1, result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpuoverlap", required=True, help="the binary")
    parser.add_argument("--a", required=True, help="glob of the A runs' results directories")
    parser.add_argument("--b", help="glob of the B runs' results directories")
    parser.add_argument("--runs", type=int, default=5, help="runs per side (default 5)")
    parser.add_argument("--draws", type=int, default=200, help="draws per test (default 200)")
    parser.add_argument("--seed", type=int, default=1)
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
    false_alarms = catches = own_catches = 0
    own = __import__("re").compile(args.own) if args.own else None
    for _ in range(args.draws):
        drawn = rng.sample(a_runs, 2 * args.runs)
        baseline, other = drawn[:args.runs], drawn[args.runs:]
        false_alarms += compare(args.gpuoverlap, baseline, other, args.extra)[0]
        if b_runs:
            changed, table = compare(args.gpuoverlap, baseline, rng.sample(b_runs, args.runs),
                                     args.extra)
            catches += changed
            if own and any(own.search(line) and "CHANGED" in line
                           for line in table.splitlines()):
                own_catches += 1
    print(f"{len(a_runs)} A runs, {len(b_runs)} B runs; {args.runs} runs per side, "
          f"{args.draws} draws (seed {args.seed})")
    print(f"A/A false alarms: {false_alarms} of {args.draws}")
    if b_runs:
        print(f"A/B catches:      {catches} of {args.draws}")
    if own:
        print(f"A/B with a row matching '{args.own}' CHANGED: {own_catches} of {args.draws}")


if __name__ == "__main__":
    main()
