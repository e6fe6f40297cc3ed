"""What the tests of the Windows build share: running the .exe under Wine
(scripts/wine-run.sh) and the Linux build beside it, reading what they wrote, and the
invariants every backend's results keep."""
import csv
import gzip
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINUX = os.environ.get('GPUOVERLAP_BINARY', str(ROOT / 'build-test' / 'gpuoverlap'))
WINE_RUN = ROOT / 'scripts' / 'wine-run.sh'

# The runs these tests read keep every frame on the poll clock: a CPU device's poller loses its
# CPU often, a frame whose stamps were disturbed is left out of the poll clock's figures, and a
# workload with none left is named "missing" with its folder's path, which the two builds spell
# differently. These tests are about reading and naming, not disturbance.
KEEP_EVERY_POLL_FRAME = ('--poll-window-tolerance-us', '1000000000')


def windows_path(path):
    """A Linux path as the .exe sees it under Wine (the Z: drive is the root)."""
    return 'Z:' + str(path).replace('/', '\\')


def linux(*args, cwd=None):
    return subprocess.run([LINUX, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def windows(*args, cwd=None, env=None):
    return subprocess.run([str(WINE_RUN), *args], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, cwd=cwd,
                          env=None if env is None else {**os.environ, **env})


def lines(text):
    return [line.rstrip('\r') for line in text.splitlines()]


def read_csv(path):
    """A CSV the exe wrote; inflated when its name ends in .gz (records.csv.gz)."""
    opener = gzip.open if str(path).endswith('.gz') else open
    with opener(path, 'rt', newline='') as f:
        return list(csv.DictReader(f))


def expect_dependents_after_producers(out, presets):
    """In every frame of every preset, a workload behind a barrier starts after each of its
    producers ended (across queues too: the fence), and dependencies.csv counts no early
    frame. Returns how many dependencies crossed queues."""
    crossing = 0
    for name in presets:
        for d in read_csv(out / name / 'dependencies.csv'):
            if d['barrier'] != 'none':
                assert d['early_frames'] == '0', (name, d)
        rows = read_csv(out / name / 'records.csv.gz')
        by_key = {(r['frame'], r['workload']): r for r in rows}
        for r in rows:
            if r['barrier'] == 'none' or not r['depends_on']:
                continue
            for producer in r['depends_on'].split(';'):
                p = by_key[(r['frame'], producer)]
                assert float(p['poll_end_us']) <= float(r['poll_start_us']), (name, p, r)
                crossing += p['queue'] != r['queue']
    return crossing
