"""The Windows build (scripts/build-windows.sh: mingw-w64) run under Wine (scripts/wine-run.sh):
what needs no GPU behaves as on Linux, byte for byte where the output is the same: the preset
list, validation and its explanation in D3D12 terms, refusals of bad input, and report and
compare on results the Linux build wrote; and the D3D12 device Wine offers, with what its
runtime lacks reported as such. Scenarios do not run on D3D12 yet (issue 18): a run stops
before any GPU work and says so in run.json.

Needs GPUOVERLAP_BINARY (the Linux build, for the reference outputs and the results) and the
Windows build in build-windows/ (GPUOVERLAP_EXE overrides)."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINUX = os.environ.get('GPUOVERLAP_BINARY', str(ROOT / 'build-test' / 'gpuoverlap'))
WINE_RUN = ROOT / 'scripts' / 'wine-run.sh'


def windows_path(path):
    """A Linux path as the .exe sees it under Wine (the Z: drive is the root)."""
    return 'Z:' + str(path).replace('/', '\\')


def linux(*args, cwd=None):
    return subprocess.run([LINUX, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def windows(*args, cwd=None):
    return subprocess.run([str(WINE_RUN), *args], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, cwd=cwd)


def lines(text):
    return [line.rstrip('\r') for line in text.splitlines()]


def test_the_preset_list_is_the_linux_one():
    ours, theirs = windows('list'), linux('list')
    assert ours.returncode == 0, ours.stderr
    assert lines(ours.stdout) == lines(theirs.stdout)
    assert len(lines(ours.stdout)) > 20


def test_explain_gives_the_same_d3d12_plan_without_the_vulkan_lines():
    ours, theirs = windows('validate', 'default', 'cross-queue-fence', '--explain'), linux(
        'validate', 'default', 'cross-queue-fence', '--explain')
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    windows_lines, linux_lines = lines(ours.stdout), lines(theirs.stdout)
    # Every line of the Windows build's explanation appears, in order, in the Linux one; what
    # only Linux prints is how Vulkan records each barrier.
    it = iter(linux_lines)
    assert all(line in it for line in windows_lines)
    assert any('D3D12' in line for line in windows_lines)
    extra = [line for line in linux_lines if line not in windows_lines]
    assert extra and all(line.startswith('      ') for line in extra)


def test_bad_input_is_refused_with_the_same_message(tmp_path):
    broken = tmp_path / 'broken.toml'
    broken.write_text('name = "x"\nframes = -3\n')
    ours = windows('validate', windows_path(broken))
    theirs = linux('validate', str(broken))
    assert ours.returncode == theirs.returncode != 0
    # The same reason after the file's name, which each platform spells its own way.
    reason = theirs.stderr.split('broken.toml', 1)[1]
    assert ours.stderr.split('broken.toml', 1)[1].replace('\r', '') == reason
    missing = windows('validate', windows_path(tmp_path / 'absent.toml'))
    assert missing.returncode != 0 and 'absent.toml' in missing.stderr


# What Wine 8's D3D12 (vkd3d 1.6 on lavapipe) lacks, each reported as such, never faked.
WINE_UNSUPPORTED = [
    'enhanced barriers (D3D12_OPTIONS12): unsupported by this runtime (E_NOTIMPL)',
    'SetBackgroundProcessingMode (no ID3D12Device6): unsupported by this runtime (E_NOINTERFACE)',
    'queue priority GLOBAL_REALTIME: unsupported by this runtime (E_NOTIMPL)',
    'GetClockCalibration: returns 0/0, unsupported by this runtime (no CPU time domain): '
    'timestamps cannot be placed on the CPU clock',
]


def test_devices_lists_the_d3d12_device_and_what_the_runtime_lacks():
    result = windows('devices', '--json')
    assert result.returncode == 0, result.stderr
    devices = json.loads(result.stdout)
    assert len(devices) == 1
    device = devices[0]
    assert device['api'] == 'D3D12' and device['default'] is True
    assert device['api_version'].startswith('feature level ')
    assert device['notes'] == WINE_UNSUPPORTED
    assert device['support']['high_priority'] == {'supported': True}
    assert device['support']['global_realtime']['supported'] is False
    assert device['calibrated_timestamps'] is False and device['global_priority'] is False
    assert [f['flags'] for f in device['queue_families']] == ['DIRECT', 'COMPUTE', 'COPY']
    text = windows('devices')
    assert text.returncode == 0, text.stderr
    assert 'D3D12 feature level' in text.stdout and 'QueryPerformanceCounter' in text.stdout
    for note in WINE_UNSUPPORTED:
        assert '     unsupported: ' + note in lines(text.stdout)


def test_a_scenario_stops_before_gpu_work_and_run_json_says_why(tmp_path):
    out = tmp_path / 'out'
    result = windows('run', 'default', '--frames', '2', '--out', windows_path(out))
    assert result.returncode != 0
    assert 'cannot run scenarios yet' in result.stderr
    run = json.loads((out / 'run.json').read_text())
    assert [s['status'] for s in run['scenarios']] == ['failed']
    assert 'the D3D12 backend cannot run scenarios yet' in run['failure']['message']


@pytest.fixture(scope='module')
def linux_results(tmp_path_factory):
    """Two runs of one scenario by the Linux build (lavapipe), for report and compare."""
    base = tmp_path_factory.mktemp('linux-results')
    for name in ('a', 'b'):
        made = linux('run', 'three-dispatches', '--frames', '4', '--warmup', '1', '--out',
                     str(base / name))
        assert made.returncode == 0, made.stderr
    return base


def test_report_reads_linux_results_as_linux_does(linux_results):
    ours = windows('report', windows_path(linux_results / 'a'))
    assert ours.returncode == 0, ours.stderr
    windows_report = (linux_results / 'a' / 'report.md').read_text()
    theirs = linux('report', str(linux_results / 'a'))
    assert theirs.returncode == 0, theirs.stderr
    assert (linux_results / 'a' / 'report.md').read_text() == windows_report


def test_compare_reads_linux_results_as_linux_does(linux_results):
    args = [str(linux_results / 'a'), str(linux_results / 'b'), '--threshold-pct', '1000']
    ours = windows('compare', *[windows_path(a) if a.startswith('/') else a for a in args])
    theirs = linux('compare', *args)
    assert ours.returncode == theirs.returncode == 0, ours.stderr + theirs.stderr
    assert lines(ours.stdout) == lines(theirs.stdout)
