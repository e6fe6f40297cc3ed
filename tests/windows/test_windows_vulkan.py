"""The Windows build's Vulkan backend (`--api vulkan`) under Wine: Wine's Vulkan (winevulkan)
over lavapipe, the same device the Linux build runs on. MJP's presets and the barrier lab run
with the invariants the Linux build's results keep; what the build lacks (shaderc, for the
background variants) is refused in one line and the suite goes on; the load process opens the
API its parent runs; the .exe starts without Vulkan and says why in one line. Lavapipe has one
queue: invariants only, no timings.

Needs GPUOVERLAP_BINARY (the Linux build) and the Windows build in build-windows/."""
import json
import subprocess

import pytest

from wine_exe import (KEEP_EVERY_POLL_FRAME, ROOT, expect_dependents_after_producers, linux,
                      lines, read_csv, windows, windows_path)

MJP_PRESETS = ['default', 'no-barriers', 'three-dispatches', 'high-priority-compute']
BARRIER_LAB = ['barrier-cost', 'cross-queue-fence'] + [
    f'{base}-{kind}' for base in ('three-dispatches', 'default')
    for kind in ('legacy', 'split-event', 'split-collapsed', 'enhanced', 'enhanced-sync-all')]
FRAMES = 4


@pytest.fixture(scope='module')
def vulkan_results(tmp_path_factory):
    out = tmp_path_factory.mktemp('vulkan') / 'out'
    # One queue on lavapipe: the COMPUTE queue's HIGH priority falls back, as on Linux.
    made = windows('run', *MJP_PRESETS, *BARRIER_LAB, '--api', 'vulkan', '--priority-fallback',
                   '--frames', str(FRAMES),
                   '--warmup', '1', *KEEP_EVERY_POLL_FRAME, '--out', windows_path(out))
    assert made.returncode == 0, made.stdout + made.stderr
    return out


def test_the_presets_and_the_barrier_lab_run_on_vulkan_under_wine(vulkan_results):
    run = json.loads((vulkan_results / 'run.json').read_text())
    assert [s['name'] for s in run['scenarios']] == MJP_PRESETS + BARRIER_LAB
    # Unlike Wine's D3D12 (vkd3d 1.6), Vulkan has enhanced barriers' translation (they become
    # synchronization2 barriers, as on Linux): every scenario runs.
    assert {s['status'] for s in run['scenarios']} == {'ok'}
    for name in MJP_PRESETS + BARRIER_LAB:
        meta = json.loads((vulkan_results / name / 'meta.json').read_text())
        assert meta['device']['api'] == 'Vulkan'
        assert meta['device']['driver_name'] == 'llvmpipe'
        assert meta['host']['kernel'].startswith('Wine ')
        assert meta['clocks']['poll'] == 'QueryPerformanceCounter'
        # Timestamps are placed on QueryPerformanceCounter; Wine 8 offers lavapipe's device
        # domain only, and meta says so rather than placing them on another clock.
        timestamp = meta['clocks']['timestamp']
        assert timestamp['calibrated'] is False
        assert 'QueryPerformanceCounter' in timestamp['reason']
        rows = read_csv(vulkan_results / name / 'records.csv.gz')
        assert len(rows) == FRAMES * len(meta['scenario']['workloads'])
        for row in rows:
            assert row['status'] == 'ok', (name, row)
            assert float(row['poll_start_us']) <= float(row['poll_end_us']), (name, row)


def test_dependent_vulkan_work_never_overlaps_and_fences_order_queues(vulkan_results):
    crossing = expect_dependents_after_producers(vulkan_results, MJP_PRESETS + BARRIER_LAB)
    assert crossing >= 2 * FRAMES  # cross-queue-fence's two fenced dependencies, every frame


def test_the_linux_tools_read_the_windows_builds_vulkan_results(vulkan_results):
    report = linux('report', str(vulkan_results))
    assert report.returncode == 0, report.stderr
    text = (vulkan_results / 'report.md').read_text()
    assert 'Vulkan' in text and 'barrier-cost' in text
    compared = linux('compare', str(vulkan_results), str(vulkan_results))
    assert compared.returncode == 0, compared.stdout + compared.stderr


def test_devices_lists_lavapipe_through_wines_vulkan():
    result = windows('devices', '--api', 'vulkan', '--json')
    assert result.returncode == 0, result.stderr
    devices = json.loads(result.stdout)
    assert len(devices) == 1
    assert devices[0]['api'] == 'Vulkan' and devices[0]['driver_name'] == 'llvmpipe'
    # The default API of the Windows build stays D3D12.
    default = json.loads(windows('devices', '--json').stdout)
    assert [d['api'] for d in default] == ['D3D12']


def test_background_work_is_unsupported_by_this_build_and_the_suite_goes_on(tmp_path):
    out = tmp_path / 'out'
    result = windows('run', 'bgp-single-frame-analysis', 'three-dispatches', '--api', 'vulkan',
                     '--frames', '3', '--out', windows_path(out))
    assert result.returncode == 1, result.stdout + result.stderr
    reason = 'background work: unsupported by this build'
    refusals = [line for line in lines(result.stderr) if reason in line]
    assert len(refusals) == 1 and 'shaderc' in refusals[0], result.stderr
    run = json.loads((out / 'run.json').read_text())
    assert [s['status'] for s in run['scenarios']] == ['unsupported', 'ok']
    assert (out / 'three-dispatches' / 'records.csv.gz').is_file()


def test_the_load_process_opens_the_api_of_its_parent(tmp_path):
    out = tmp_path / 'out'
    result = windows('run', 'preemption-big-dispatch-normal', '--api', 'vulkan', '--duration-ms',
                     '200', '--target-ms', '10', '--load-process', '--out', windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    meta = json.loads((out / 'preemption-big-dispatch-normal' / 'meta.json').read_text())
    assert meta['device']['api'] == 'Vulkan'
    assert meta['load_process']['device']['api'] == 'Vulkan'


def test_without_vulkan_the_exe_starts_and_says_why_in_one_line(tmp_path):
    # Wine without its vulkan-1.dll: a Windows machine whose driver installed no Vulkan loader.
    no_loader = {'WINEDLLOVERRIDES': 'vulkan-1=d'}
    version = windows('--version', env=no_loader)
    assert version.returncode == 0 and version.stdout.startswith('gpuoverlap '), version.stderr
    out = tmp_path / 'out'
    result = windows('run', 'default', '--api', 'vulkan', '--out', windows_path(out),
                     env=no_loader)
    assert result.returncode == 3, result.stdout + result.stderr
    said = [line for line in lines(result.stderr) if line]
    assert len(said) == 1 and 'vulkan-1.dll' in said[0] and '--api d3d12' in said[0], said
    assert not out.exists()


def test_an_api_the_linux_build_lacks_is_refused_in_one_line():
    result = linux('devices', '--api', 'd3d12')
    assert result.returncode == 2
    assert lines(result.stderr) == [
        'gpuoverlap: --api d3d12: this build has no D3D12 (the Windows build has it); it has '
        'vulkan']
    unknown = linux('run', 'default', '--api', 'metal')
    assert unknown.returncode == 2
    assert lines(unknown.stderr) == [
        "gpuoverlap: --api metal: 'metal' is not an API (vulkan, d3d12, both, or a list such as "
        "d3d12,vulkan)"]
    listed = linux('devices', '--api', 'metal')
    assert listed.returncode == 2 and 'metal not in {vulkan,d3d12}' in listed.stderr


# MJP's presets and the legacy and split barrier labs: what Wine's D3D12 runs too (it lacks
# enhanced barriers).
BOTH_APIS_PRESETS = MJP_PRESETS + ['cross-queue-fence'] + [
    f'{base}-{kind}' for base in ('three-dispatches', 'default')
    for kind in ('legacy', 'split-event', 'split-collapsed')]


@pytest.fixture(scope='module')
def both_apis(tmp_path_factory):
    out = tmp_path_factory.mktemp('both') / 'out'
    made = windows('run', *BOTH_APIS_PRESETS, '--api', 'both', '--priority-fallback', '--frames',
                   str(FRAMES), '--warmup', '1', *KEEP_EVERY_POLL_FRAME, '--out',
                   windows_path(out))
    assert made.returncode == 0, made.stdout + made.stderr
    assert lines(made.stdout)[-1] == (f'results: {windows_path(out)} (2 APIs on one device, each '
                                      'in its folder: d3d12/, vulkan/)')
    return out


def test_both_apis_run_every_scenario_on_the_same_device_a_folder_each(both_apis):
    run = json.loads((both_apis / 'run.json').read_text())
    assert [d['directory'] for d in run['devices']] == ['d3d12', 'vulkan']
    assert [d['device']['api'] for d in run['devices']] == ['D3D12', 'Vulkan']
    assert {d['status'] for d in run['devices']} == {'ok'}
    # The one lavapipe device, found again through Vulkan (no LUID under Wine's Vulkan).
    d3d12, vulkan = (d['device'] for d in run['devices'])
    assert d3d12['name'] == vulkan['name'] and d3d12['vendor_id'] == vulkan['vendor_id']
    assert run['devices'][1]['matched_by'] == 'vendor, device id and name'
    assert [s['directory'] for s in run['scenarios']] == [
        f'{api}/{name}' for api in ('d3d12', 'vulkan') for name in BOTH_APIS_PRESETS]
    assert {s['status'] for s in run['scenarios']} == {'ok'}
    for api, name in (('d3d12', 'D3D12'), ('vulkan', 'Vulkan')):
        for preset in BOTH_APIS_PRESETS:
            meta = json.loads((both_apis / api / preset / 'meta.json').read_text())
            assert meta['device']['api'] == name
            # One device, one set of sizes: Wine's D3D12 calls lavapipe a GPU, its Vulkan the
            # CPU, and both ran the CPU device's.
            assert meta['sizes'] == json.loads(
                (both_apis / 'vulkan' / preset / 'meta.json').read_text())['sizes']
        crossing = expect_dependents_after_producers(both_apis / api, BOTH_APIS_PRESETS)
        assert crossing >= 2 * FRAMES, api


def test_the_report_puts_the_apis_side_by_side(both_apis):
    report = linux('report', str(both_apis))
    assert report.returncode == 0, report.stderr
    page = (both_apis / 'report.md').read_text()
    assert page.startswith('# gpuoverlap report: 2 APIs on one device side by side')
    assert '| d3d12 | D3D12 | llvmpipe' in page and '| vulkan | Vulkan | llvmpipe' in page
    assert '| scenario | d3d12 | vulkan | apart |' in page
    for api in ('d3d12', 'vulkan'):
        assert (both_apis / api / 'report.md').is_file()
    compared = linux('compare', str(both_apis / 'd3d12'), str(both_apis / 'vulkan'))
    assert compared.returncode in (0, 1), compared.stdout + compared.stderr
    assert 'D3D12' in compared.stdout and 'Vulkan' in compared.stdout


def test_the_plots_and_the_history_read_a_run_of_both_apis(both_apis, tmp_path):
    plotted = subprocess.run(['/usr/bin/python3', str(ROOT / 'plots' / 'plot.py'), str(both_apis),
                              '--out', str(tmp_path / 'plots')], capture_output=True, text=True,
                             timeout=600)
    assert plotted.returncode == 0, plotted.stderr
    for api in ('d3d12', 'vulkan'):
        assert (tmp_path / 'plots' / api / 'default' / 'timeline.png').stat().st_size > 0
    db = tmp_path / 'history.sqlite'
    kept = linux('history', 'ingest', str(both_apis), '--db', str(db))
    assert kept.returncode == 0, kept.stderr
    listed = linux('history', 'list', '--db', str(db))
    assert '(D3D12)' in listed.stdout and '(Vulkan)' in listed.stdout


def test_several_apis_are_refused_where_they_cannot_run(tmp_path):
    linux_both = linux('run', 'default', '--api', 'both', '--out', str(tmp_path / 'a'))
    assert linux_both.returncode == 2
    assert lines(linux_both.stderr) == [
        'gpuoverlap: --api both: this build has one GPU API (vulkan); the Windows build has '
        'D3D12 and Vulkan']
    twice = windows('run', 'default', '--api', 'vulkan,vulkan', '--out', windows_path(tmp_path / 'b'))
    assert twice.returncode == 2 and 'vulkan is named twice' in twice.stderr
    concurrent = windows('run', 'default', '--api', 'both', '--device', 'all', '--out',
                         windows_path(tmp_path / 'c'))
    assert concurrent.returncode == 2 and 'give --device one device' in concurrent.stderr
    assert not any((tmp_path / name).exists() for name in 'abc')


def test_a_scenario_one_api_refuses_leaves_the_other_apis_run_whole(tmp_path):
    # Wine's D3D12 has no enhanced barriers; its Vulkan translates them. The run says so by its
    # exit status and the scenario's status; neither API's run is a failed one.
    out = tmp_path / 'out'
    made = windows('run', 'three-dispatches-enhanced', 'default', '--api', 'both',
                   '--priority-fallback', '--frames', '3', '--warmup', '1', '--out',
                   windows_path(out))
    assert made.returncode == 1, made.stdout + made.stderr
    run = json.loads((out / 'run.json').read_text())
    assert [d['status'] for d in run['devices']] == ['ok', 'ok']
    # A refused scenario wrote no folder (its directory is empty, as in any run.json): each
    # API's own run.json says whose it was.
    assert [(s['name'], s['status']) for s in run['scenarios']] == [
        ('three-dispatches-enhanced', 'unsupported'), ('default', 'ok'),
        ('three-dispatches-enhanced', 'ok'), ('default', 'ok')]
    d3d12 = json.loads((out / 'd3d12' / 'run.json').read_text())
    assert [s['status'] for s in d3d12['scenarios']] == ['unsupported', 'ok']
    assert (out / 'vulkan' / 'three-dispatches-enhanced' / 'records.csv.gz').is_file()
