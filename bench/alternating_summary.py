#!/usr/bin/python3
"""The summary bench/alternating.sh prints for a non-intrusiveness-alternating study folder.

- every condition's verdict rows for the CPU metrics (verdict.csv);
- per alternating condition: the share of held frames no compile overlapped (the frames its
  verdict uses as the baseline) and the median compile's duration (background.csv);
- an A/A check: the baseline condition's runs cut into the same on/off/off/on blocks and
  judged as an alternating condition is (per pair of blocks, the log ratio of the medians),
  where nothing differs between the blocks. Its mean should be 0 and its interval hold 1.

Standard library only (the GPU machine's Python). Usage: alternating_summary.py STUDY_DIR
"""
import csv
import math
import statistics
import sys
from pathlib import Path


def held_in_block(block_frames, frame):
    block = frame // block_frames
    return ((block ^ (block >> 1)) & 1) == 1


def rows(path):
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def interval(values):
    """Mean and a two-sided 95 % interval (normal approximation: enough units for a check)."""
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else float('nan')
    return mean, mean - 1.96 * se, mean + 1.96 * se


def main(study):
    study = Path(study)
    print('verdict rows (CPU metrics):')
    for row in rows(study / 'verdict.csv'):
        if row['metric'].startswith('gpu_duration_us:'):
            continue
        print(f"  {row['condition']:22} {row['metric']:19} {row['ratio_p50'] or '-':>7} "
              f"[{row['ci_low'] or '-'}, {row['ci_high'] or '-'}] tail {row['tail_excess'] or '-'} "
              f"units {row['units']:>3} {row['pairing']:16} -> {row['verdict']}")
    for condition in sorted(p for p in study.iterdir() if p.is_dir()):
        runs = sorted(condition.rglob('frames.csv'))
        metas = sorted(condition.rglob('meta.json'))
        if not runs:
            continue
        import json
        block = (json.loads(metas[0].read_text()).get('background') or {}).get('alternate_frames', 0)
        if not block:
            continue
        held = quiet = 0
        for path in runs:
            for f in rows(path):
                if f['bg_held'] == '1':
                    held += 1
                    quiet += f['bg_managed'] == '0' and f['bg_unmanaged'] == '0'
        durations = [float(t['finish_us']) - float(t['start_us'])
                     for path in sorted(condition.rglob('background.csv')) for t in rows(path)
                     if t['start_us'] and t['finish_us'] and t['ran'] == '1']
        print(f"{condition.name}: blocks of {block}; {quiet} of {held} held frames quiet "
              f"({100.0 * quiet / max(held, 1):.0f} %); median compile "
              f"{statistics.median(durations) / 1000 if durations else float('nan'):.1f} ms "
              f"({len(durations)} compiles)")
    baseline = study / 'baseline'
    for block in (50, 100):
        for metric in ('cpu_submit_us', 'cpu_frame_us'):
            logs = []
            for path in sorted(baseline.rglob('frames.csv')):
                frames = [f for f in rows(path) if f['status'] == 'ok']
                count = max(int(f['frame']) for f in frames) + 1 if frames else 0
                for first in range(0, count, 2 * block):
                    pair = [f for f in frames if first <= int(f['frame']) < first + 2 * block]
                    on = [float(f[metric]) for f in pair if not held_in_block(block, int(f['frame']))]
                    off = [float(f[metric]) for f in pair if held_in_block(block, int(f['frame']))]
                    if len(on) >= 5 and len(off) >= 5:
                        logs.append(math.log(statistics.median(on) / statistics.median(off)))
            if len(logs) > 1:
                mean, low, high = interval(logs)
                print(f"A/A baseline, blocks of {block}, {metric}: ratio {math.exp(mean):.4f} "
                      f"[{math.exp(low):.4f}, {math.exp(high):.4f}] over {len(logs)} pairs")


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
