"""The Windows build (scripts/build-windows.sh: mingw-w64) run under Wine (scripts/wine-run.sh):
what needs no GPU behaves as on Linux, byte for byte where the output is the same: the preset
list, validation and its explanation in D3D12 and Vulkan terms, refusals of bad input, and report and
compare on results the Linux build wrote; and the D3D12 device Wine offers, with what its
runtime lacks reported as such; and the D3D12 backend running the presets (vkd3d on
lavapipe), asserting the same invariants as on Vulkan; and --device all and --concurrent on the
one adapter Wine offers.

Needs GPUOVERLAP_BINARY (the Linux build, for the reference outputs and the results) and the
Windows build in build-windows/ (GPUOVERLAP_EXE overrides)."""
import json
import os
import pathlib
import subprocess

import pytest

from wine_exe import (KEEP_EVERY_POLL_FRAME, LINUX, ROOT, linux, lines, read_csv, windows,
                      windows_path, expect_dependents_after_producers)


def test_the_preset_list_is_the_linux_one():
    ours, theirs = windows('list'), linux('list')
    assert ours.returncode == 0, ours.stderr
    assert lines(ours.stdout) == lines(theirs.stdout)
    assert len(lines(ours.stdout)) > 20


def test_explain_gives_the_same_plan_and_vulkan_recording_as_linux():
    # The Windows build has the Vulkan backend too: the D3D12 plan and how Vulkan records each
    # barrier, line for line as on Linux.
    ours, theirs = windows('validate', 'default', 'cross-queue-fence', '--explain'), linux(
        'validate', 'default', 'cross-queue-fence', '--explain')
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    assert lines(ours.stdout) == lines(theirs.stdout)
    assert any('D3D12' in line for line in lines(ours.stdout))
    assert any('vkCmdPipelineBarrier2' in line for line in lines(ours.stdout))


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


# What runs on D3D12 under Wine (vkd3d on lavapipe: one Vulkan queue, so the two D3D12 queues
# never overlap; invariants only, no timings): MJP's presets, the legacy and split barrier
# labs, the cross-queue fences, and a short preemption preset.
D3D12_PRESETS = ['default', 'no-barriers', 'three-dispatches', 'high-priority-compute',
                 'default-legacy', 'default-split-event', 'default-split-collapsed',
                 'three-dispatches-legacy', 'three-dispatches-split-event',
                 'three-dispatches-split-collapsed', 'cross-queue-fence']
PREEMPTION_PRESET = 'preemption-many-draws-high'


@pytest.fixture(scope='module')
def d3d12_results(tmp_path_factory):
    out = tmp_path_factory.mktemp('d3d12') / 'out'
    made = windows('run', *D3D12_PRESETS, '--frames', '6', '--warmup', '1',
                   *KEEP_EVERY_POLL_FRAME, '--out', windows_path(out))
    assert made.returncode == 0, made.stdout + made.stderr
    return out


def test_the_presets_run_on_d3d12_and_meta_names_the_runtime(d3d12_results):
    run = json.loads((d3d12_results / 'run.json').read_text())
    assert [s['name'] for s in run['scenarios']] == D3D12_PRESETS
    assert {s['status'] for s in run['scenarios']} == {'ok'}
    for name in D3D12_PRESETS:
        meta = json.loads((d3d12_results / name / 'meta.json').read_text())
        assert meta['device']['api'] == 'D3D12'
        assert meta['device']['runtime'].startswith('Wine 8.')
        assert 'vkd3d' in meta['device']['runtime']
        assert meta['host']['kernel'].startswith('Wine ')
        assert meta['clocks']['poll'] == 'QueryPerformanceCounter'
        # No CPU time domain under Wine: the timestamps are not placed, and meta says why.
        timestamp = meta['clocks']['timestamp']
        assert timestamp['available'] is False and timestamp['calibrated'] is False
        assert timestamp['reason'].startswith('GetClockCalibration: returns 0/0, unsupported')
        assert meta['clocks']['shader_clock']['recorded'] is False
        stamps = meta['memory']['stamps']
        assert stamps['flags'] == 'CUSTOM heap, CPU_PAGE_PROPERTY_WRITE_COMBINE, MEMORY_POOL_L0'
        assert [q['family_flags'] for q in meta['queues']] == [
            q['type'].upper() for q in meta['queues']]
        assert all(q['shares_queue_of'] is None for q in meta['queues'])


def test_every_d3d12_row_has_both_poll_stamps_and_no_device_clock(d3d12_results):
    for name in D3D12_PRESETS:
        rows = read_csv(d3d12_results / name / 'records.csv.gz')
        meta = json.loads((d3d12_results / name / 'meta.json').read_text())
        assert len(rows) == 6 * len(meta['scenario']['workloads'])
        for row in rows:
            assert row['status'] == 'ok', (name, row)
            assert float(row['poll_start_us']) <= float(row['poll_end_us']), (name, row)
            assert row['ts_start_us'] == row['clk_start_us'] == '', (name, row)


def test_dependent_d3d12_work_never_overlaps_and_fences_order_queues(d3d12_results):
    crossing = expect_dependents_after_producers(d3d12_results, D3D12_PRESETS)
    assert crossing >= 2 * 6  # cross-queue-fence's two fenced dependencies, every frame


def test_d3d12_grants_high_priority_and_refuses_realtime_unless_fallback(d3d12_results, tmp_path):
    meta = json.loads((d3d12_results / 'high-priority-compute' / 'meta.json').read_text())
    compute = [q for q in meta['queues'] if q['type'] == 'compute'][0]
    assert compute['priority_requested'] == compute['priority_granted'] == 'high'
    strict = windows('run', 'preemption-slow-shader-realtime', '--duration-ms', '100',
                     '--target-ms', '5', '--out', windows_path(tmp_path / 'strict'))
    assert strict.returncode == 1
    assert ('the driver refused queue priority realtime (E_NOTIMPL; queue priority '
            'GLOBAL_REALTIME: unsupported by this runtime); pass --priority-fallback') in strict.stderr
    fallback = windows('run', 'preemption-slow-shader-realtime', '--duration-ms', '100',
                       '--target-ms', '5', '--priority-fallback', '--out',
                       windows_path(tmp_path / 'fallback'))
    assert fallback.returncode == 0, fallback.stdout + fallback.stderr
    meta = json.loads(
        (tmp_path / 'fallback' / 'preemption-slow-shader-realtime' / 'meta.json').read_text())
    urgent = [q for q in meta['queues'] if q['priority_requested'] == 'realtime'][0]
    assert urgent['priority_granted'] == 'high'
    assert any('E_NOTIMPL' in note for note in meta['priority_notes'])


@pytest.mark.parametrize('preset', ['three-dispatches-enhanced', 'mip-chain',
                                    'render-target-discard', 'texture-read-after-render',
                                    'aliasing-handover', 'texture-rewrite', 'depth-prepass'])
def test_enhanced_barriers_are_unsupported_and_the_suite_goes_on(tmp_path, preset):
    # Buffers and textures alike: an enhanced preset says why in one line, before any GPU
    # work; its legacy twin, next in the run, still runs. The status says not all ran.
    twin = preset.replace('-enhanced', '') + '-legacy'
    out = tmp_path / 'out'
    result = windows('run', preset, twin, '--frames', '2', '--out', windows_path(out))
    assert result.returncode == 1, result.stdout + result.stderr
    reason = ("asks for an enhanced barrier: enhanced barriers (D3D12_OPTIONS12): unsupported "
              "by this runtime (E_NOTIMPL)")
    assert preset + ': unsupported by this runtime, skipped: ' in result.stderr
    assert reason in result.stderr
    assert ('1 of 2 scenarios unsupported by this runtime, not run: ' + preset) in result.stderr
    run = json.loads((out / 'run.json').read_text())
    assert [s['status'] for s in run['scenarios']] == ['unsupported', 'ok']
    assert run['failure'] is None
    refused = run['scenarios'][0]['failure']
    assert reason in refused['message'] and refused['api_code_name'] == 'E_NOTIMPL'
    assert (out / twin / 'records.csv.gz').is_file()


@pytest.mark.parametrize('preset,copy,queue', [('upload-copy-legacy', 'Upload on direct', 'DIRECT'),
                                               ('upload-texture-legacy', 'Upload heightmap',
                                                'COMPUTE'),
                                               ('readback-legacy', 'Read back frame', 'DIRECT')])
def test_copies_need_write_buffer_immediate_and_the_suite_goes_on(tmp_path, preset, copy, queue):
    # A copy's stamps are WriteBufferImmediate writes, which Wine's vkd3d offers on no command
    # list type (D3D12_OPTIONS3): a legacy preset (so the refusal is the copy's, not the
    # runtime's enhanced barriers) is refused in one line, naming its first copy on a type the
    # runtime leaves out, and the next scenario runs.
    if preset == 'upload-texture-legacy':
        # Its first copy is on DIRECT; keep only the COMPUTE queue's pair to name that type.
        text = (ROOT / 'scenarios' / 'presets' / (preset + '.toml')).read_text()
        head = text[:text.index('[[workload]]')]
        tail = text[text.index('[[workload]]\nname = "Upload heightmap"'):]
        scenario = tmp_path / (preset + '.toml')
        scenario.write_text(head + tail)
        preset_arg = windows_path(scenario)
    else:
        preset_arg = preset
    out = tmp_path / 'out'
    result = windows('run', preset_arg, 'three-dispatches-legacy', '--frames', '2',
                     '--out', windows_path(out))
    assert result.returncode == 1, result.stdout + result.stderr
    reason = ("workload '" + copy + "' is a copy, stamped by WriteBufferImmediate on a " + queue +
              " command list: unsupported by this runtime (D3D12_OPTIONS3 "
              "WriteBufferImmediateSupportFlags leaves that type out)")
    assert preset + ': unsupported by this runtime, skipped: ' in result.stderr
    assert reason in result.stderr
    run = json.loads((out / 'run.json').read_text())
    assert [s['status'] for s in run['scenarios']] == ['unsupported', 'ok']
    assert reason in run['scenarios'][0]['failure']['message']
    assert (out / 'three-dispatches-legacy' / 'records.csv.gz').is_file()


def test_legacy_barriers_on_a_subresource_range_run_on_d3d12(tmp_path):
    # The legacy half of tests/data/subresource-ranges.toml (Wine has no enhanced barriers):
    # one TRANSITION of subresource 0, plain and split, each ordering its draw before its reader.
    text = (ROOT / 'tests' / 'data' / 'subresource-ranges.toml').read_text()
    scenario = tmp_path / 'ranges.toml'
    scenario.write_text(text[:text.index('[[workload]]\nname = "G3"')])
    explained = windows('validate', windows_path(scenario), '--explain')
    assert explained.returncode == 0, explained.stdout + explained.stderr
    assert ('TRANSITION(BEGIN_ONLY) render_target -> non_pixel_shader_resource subresource 0'
            in explained.stdout)
    out = tmp_path / 'out'
    result = windows('run', windows_path(scenario), '--out', windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    rows = read_csv(out / 'subresource-ranges' / 'records.csv.gz')
    by_key = {(r['frame'], r['workload']): r for r in rows}
    ordered = 0
    for r in rows:
        if r['workload'].startswith('C'):
            producer = by_key[(r['frame'], 'G' + r['workload'][1:])]
            assert float(producer['poll_end_us']) <= float(r['poll_start_us']), (producer, r)
            ordered += 1
    assert ordered == 2 * 2  # two frames, two readers


def each_after_its_producer(rows):
    """Asserts that every record with one producer (records.csv's depends_on) starts on the poll
    clock after that producer ended in the same frame; returns how many it checked."""
    by_key = {(r['frame'], r['workload']): r for r in rows}
    ordered = 0
    for r in rows:
        if r['depends_on']:
            producer = by_key[(r['frame'], r['depends_on'])]
            assert float(producer['poll_end_us']) <= float(r['poll_start_us']), (producer, r)
            ordered += 1
    return ordered


def test_a_mip_chain_into_a_declared_texture_runs_on_d3d12(tmp_path):
    # Legacy per-mip transitions (Wine has no enhanced barriers): each level's draw renders into
    # its mip of one texture and reads the mip before, after that mip's draw ended.
    scenario = ROOT / 'scenarios' / 'presets' / 'mip-chain-legacy.toml'
    out = tmp_path / 'out'
    result = windows('run', 'mip-chain-legacy', '--frames', '4', '--warmup', '1', '--out',
                     windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    meta = json.loads((out / 'mip-chain-legacy' / 'meta.json').read_text())
    assert [w.get('target', {}).get('mip') for w in meta['scenario']['workloads']] == [
        0, 1, 2, 3, None]
    rows = read_csv(out / 'mip-chain-legacy' / 'records.csv.gz')
    assert each_after_its_producer(rows) == 4 * 4  # four frames, four dependencies
    # Slice 1 of an array texture: drawn into, then read through a TEXTURE2DARRAY view of that
    # slice, in order.
    text = scenario.read_text().replace('mips = 4', 'mips = 4\nslices = 2').replace(
        'target = { texture = "chain", mip = 2 }', 'target = { texture = "chain", mip = 2, slice = 1 }')
    sliced = tmp_path / 'sliced.toml'
    sliced.write_text(text)
    run = windows('run', windows_path(sliced), '--frames', '4', '--warmup', '1', '--out',
                  windows_path(tmp_path / 'sliced-out'))
    assert run.returncode == 0, run.stdout + run.stderr
    rows = read_csv(tmp_path / 'sliced-out' / 'mip-chain-legacy' / 'records.csv.gz')
    assert each_after_its_producer(rows) == 4 * 4


def test_textures_that_share_a_heap_are_handed_over_on_d3d12(tmp_path):
    # Placed resources in one ID3D12Heap, handed over with a TRANSITION, an ALIASING barrier
    # and DiscardResource: the bloom target is drawn after every use of the shadow map.
    explained = windows('validate', 'aliasing-handover-legacy', '--explain')
    assert explained.returncode == 0, explained.stdout + explained.stderr
    assert "heap 'transient' from 'shadow' to 'bloom': ALIASING" in explained.stdout
    out = tmp_path / 'out'
    result = windows('run', 'aliasing-handover-legacy', '--frames', '4', '--warmup', '1',
                     '--out', windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    meta = json.loads((out / 'aliasing-handover-legacy' / 'meta.json').read_text())
    assert [t['heap'] for t in meta['scenario']['textures']] == ['transient', 'transient']
    rows = read_csv(out / 'aliasing-handover-legacy' / 'records.csv.gz')
    assert each_after_its_producer(rows) == 4 * 2
    by_key = {(r['frame'], r['workload']): r for r in rows}
    for frame in {r['frame'] for r in rows}:
        shadow_read = by_key[(frame, 'Read Shadow')]
        bloom = by_key[(frame, 'Draw Bloom')]
        assert float(shadow_read['poll_end_us']) <= float(bloom['poll_start_us']), (shadow_read,
                                                                                   bloom)


def test_a_dispatch_writes_a_declared_texture_on_d3d12(tmp_path):
    # texture-read-after-render-legacy (Wine has no enhanced barriers): a subresource drawn, read,
    # written by a dispatch through a UAV (after a TRANSITION into unordered_access), then read
    # by a draw; each workload starts after the one it depends on ends.
    out = tmp_path / 'out'
    name = 'texture-read-after-render-legacy'
    result = windows('run', name, '--frames', '4', '--warmup', '1', '--out', windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    rows = read_csv(out / name / 'records.csv.gz')
    assert each_after_its_producer(rows) == 4 * 3  # four frames, three dependencies
    # Slice 1 of an array texture, all three uses: drawn, read, written by the dispatch through
    # a TEXTURE2DARRAY view of that slice, read by the draw, in order.
    text = (ROOT / 'scenarios' / 'presets' / (name + '.toml')).read_text()
    text = text.replace('height = 256', 'height = 256\nslices = 2').replace(
        'target = { texture = "surface" }', 'target = { texture = "surface", slice = 1 }')
    sliced = tmp_path / 'sliced.toml'
    sliced.write_text(text)
    run = windows('run', windows_path(sliced), '--frames', '4', '--warmup', '1', '--out',
                  windows_path(tmp_path / 'sliced-out'))
    assert run.returncode == 0, run.stdout + run.stderr
    rows = read_csv(tmp_path / 'sliced-out' / name / 'records.csv.gz')
    assert each_after_its_producer(rows) == 4 * 3


def test_a_depth_prepass_is_drawn_into_a_d32_texture_and_read_on_d3d12(tmp_path):
    # depth-prepass-legacy (Wine has no enhanced barriers): a depth-only draw writes a d32
    # texture (R32_TYPELESS, through a DSV), one TRANSITION out of depth_write after it, then
    # SSAO on the compute queue and Lighting on the direct queue read it through R32_FLOAT SRVs.
    name = 'depth-prepass-legacy'
    explained = windows('validate', name, '--explain')
    assert explained.returncode == 0, explained.stdout + explained.stderr
    assert ('      D3D12 after producer: TRANSITION depth_write -> all_shader_resource '
            'subresource 0') in lines(explained.stdout)
    out = tmp_path / 'out'
    result = windows('run', name, '--frames', '4', '--warmup', '1', '--out', windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    meta = json.loads((out / name / 'meta.json').read_text())
    assert [t['format'] for t in meta['scenario']['textures']] == ['d32']
    rows = read_csv(out / name / 'records.csv.gz')
    assert len(rows) == 4 * 3 and {r['status'] for r in rows} == {'ok'}
    by_key = {(r['frame'], r['workload']): r for r in rows}
    frames = sorted({r['frame'] for r in rows})
    assert len(frames) == 4
    for frame in frames:
        prepass, ssao, lighting = (by_key[(frame, w)] for w in ('Depth pre-pass', 'SSAO',
                                                                 'Lighting'))
        assert prepass['queue'] != ssao['queue'] == 'compute'
        # Both readers of the depth buffer start after the pre-pass ended, and Lighting after
        # SSAO (whose output it reads too).
        assert float(prepass['poll_end_us']) <= float(ssao['poll_start_us']), (prepass, ssao)
        assert float(prepass['poll_end_us']) <= float(lighting['poll_start_us']), (prepass,
                                                                                   lighting)
        assert float(ssao['poll_end_us']) <= float(lighting['poll_start_us']), (ssao, lighting)


def test_background_work_is_refused_where_d3dcompile_cannot_compile_the_variants(tmp_path):
    # Wine's D3DCompile (vkd3d 1.6) cannot parse perlin.hlsl's RW buffers: the scenario is
    # refused before its first frame with the compiler's own message, as unsupported by this
    # runtime, never run with failing compiles; the next scenario of the suite runs.
    out = tmp_path / 'out'
    result = windows('run', 'bgp-benchmark-priming', 'three-dispatches-legacy', '--frames', '4',
                     '--out', windows_path(out))
    assert result.returncode == 1
    reason = ("background work needs its shader variants compiled on this runtime: D3DCompile "
              "failed (0x80004005): perlin.hlsl:")
    assert 'bgp-benchmark-priming: unsupported by this runtime, skipped: ' in result.stderr
    assert reason in result.stderr and 'E5000: syntax error' in result.stderr
    run = json.loads((out / 'run.json').read_text())
    assert [s['status'] for s in run['scenarios']] == ['unsupported', 'ok']
    assert reason in run['scenarios'][0]['failure']['message']
    assert (out / 'three-dispatches-legacy' / 'records.csv.gz').is_file()


def test_host_applies_each_windows_policy_or_records_the_refusal():
    # Each Windows policy is applied on a thread of its own and read back; where Wine refuses
    # one (THREAD_MODE_BACKGROUND_BEGIN, EcoQoS), the refusal is recorded with the call, never
    # passed off as applied. The policy study's Linux-only conditions are named as not run.
    result = windows('host', '--json')
    assert result.returncode == 0, result.stdout + result.stderr
    host = json.loads(result.stdout)
    policies = {p['policy']: p for p in host['policies']}
    assert list(policies) == ['idle', 'background', 'eco', 'normal']
    for name, p in policies.items():
        assert p['result'] in ('set', 'refused'), p
        assert p['read_back'].startswith('THREAD_PRIORITY_'), p
        if p['result'] == 'refused':
            assert p['refused'].startswith(('SetThreadPriority(', 'SetThreadInformation(')), p
        else:
            assert p['refused'] is None, p
    assert policies['idle']['result'] == 'set'
    assert policies['idle']['read_back'].startswith('THREAD_PRIORITY_IDLE'), policies['idle']
    assert policies['normal']['read_back'].startswith('THREAD_PRIORITY_NORMAL'), policies['normal']
    assert 'EcoQoS' in policies['eco']['read_back'], policies['eco']
    not_run = {n['condition']: n['why'] for n in host['study']['not_run']}
    for linux_only in ('batch-nice19', 'nice19'):
        assert 'is not a policy of this OS' in not_run[linux_only]
    assert 'idle-keep-memory' in not_run and 'cgroup-idle' in not_run
    assert {'idle', 'background', 'eco', 'normal'} <= set(host['study']['runs_here'])
    assert host['host']['smt']['cores'] is None


def test_validation_is_the_debug_layer_and_wine_has_none(tmp_path):
    layer = windows('run', 'default', '--validation', '--frames', '2', '--out',
                    windows_path(tmp_path / 'a'))
    assert layer.returncode == 3
    assert ('the D3D12 debug layer (--validation): D3D12GetDebugInterface failed: '
            'DXGI_ERROR_SDK_COMPONENT_MISSING') in layer.stderr
    sync = windows('run', 'default', '--sync-validation', '--frames', '2', '--out',
                   windows_path(tmp_path / 'b'))
    assert sync.returncode == 3
    assert "--sync-validation is Vulkan's synchronization validation" in sync.stderr


def test_a_preemption_preset_runs_on_d3d12(tmp_path):
    out = tmp_path / 'out'
    result = windows('run', PREEMPTION_PRESET, '--duration-ms', '200', '--target-ms', '10',
                     '--out', windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    rows = read_csv(out / PREEMPTION_PRESET / 'preemption.csv')
    assert len(rows) >= 5
    # A stamp the poller missed (Wine on a loaded 2-core machine does) leaves a row without
    # poll times; the run counts each in meta.json, so none goes unreported.
    missed = 0
    for row in rows:
        assert row['status'] == 'ok', row
        assert row['priority'] == row['priority_granted'] == 'high'
        if row['poll_start_us'] == '' or row['poll_end_us'] == '':
            missed += 1
            continue
        assert float(row['poll_start_us']) <= float(row['poll_end_us'])
        assert float(row['latency_us']) >= 0
    meta = json.loads((out / PREEMPTION_PRESET / 'meta.json').read_text())
    assert missed <= meta['preemption_missed_stamps'], (missed, meta['preemption_missed_stamps'])
    assert missed < len(rows)
    summary = read_csv(out / PREEMPTION_PRESET / 'summary.csv')
    urgent = [s for s in summary if s['workload'] == 'urgent'][0]
    assert urgent['preemption'] != ''


def test_the_load_runs_in_a_second_windows_process(tmp_path):
    out = tmp_path / 'out'
    result = windows('run', 'preemption-big-dispatch-normal', '--duration-ms', '200',
                     '--target-ms', '10', '--load-process', '--out', windows_path(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'load process: loading' in result.stderr
    scenario = out / 'preemption-big-dispatch-normal'
    rows = read_csv(scenario / 'preemption.csv')
    assert rows and {r['process'] for r in rows} == {'separate'}
    assert {r['status'] for r in rows} == {'ok'}
    assert any(r['latency_us'] for r in rows)
    meta = json.loads((scenario / 'meta.json').read_text())
    # The child opened its own D3D12 device and sent its meta back through the pipe.
    assert meta['load_process']['device']['api'] == 'D3D12'
    # The child's loads, on the parent's time origin. A load queued behind the one running can
    # miss a poll stamp when submissions are back to back (on Linux too), and how many do
    # depends on how busy the machine is: that some were seen, each ending after it started,
    # does not.
    loads = [r for r in read_csv(scenario / 'records.csv.gz') if r['workload'] == 'load']
    assert loads and {r['status'] for r in loads} == {'ok'}
    stamped = [r for r in loads if r['poll_start_us'] and r['poll_end_us']]
    assert stamped
    assert all(float(r['poll_start_us']) <= float(r['poll_end_us']) for r in stamped)


def test_the_linux_tools_read_d3d12_results(d3d12_results, tmp_path):
    report = linux('report', str(d3d12_results))
    assert report.returncode == 0, report.stderr
    text = (d3d12_results / 'report.md').read_text()
    assert 'D3D12' in text and 'cross-queue-fence' in text
    plot = subprocess.run(['/usr/bin/python3', str(ROOT / 'plots' / 'plot.py'), str(d3d12_results),
                           '--out', str(tmp_path / 'plots')], capture_output=True, text=True,
                          timeout=600)
    assert plot.returncode == 0, plot.stdout + plot.stderr
    assert (tmp_path / 'plots' / 'default' / 'timeline.png').stat().st_size > 0


def test_run_all_goes_through_the_suite_and_the_tools_read_it(tmp_path):
    # The preset suite under Wine: every scenario runs or is refused as unsupported by this
    # runtime (enhanced barriers, copies, background work), none fails and none stops the
    # suite; the report answers from what ran and says why the study has no verdict, and the
    # plots are drawn.
    out = tmp_path / 'all'
    result = windows('run', '--all', '--priority-fallback', '--frames', '2', '--out',
                     windows_path(out))
    assert result.returncode == 1, result.stdout + result.stderr
    run = json.loads((out / 'run.json').read_text())
    statuses = [s['status'] for s in run['scenarios']]
    assert set(statuses) == {'ok', 'unsupported'}, statuses
    assert run['failure'] is None
    unsupported = [s['name'] for s in run['scenarios'] if s['status'] == 'unsupported']
    assert (f'{len(unsupported)} of {len(statuses)} scenarios unsupported by this runtime, not '
            'run: ') in result.stderr
    names = {s['name']: s['status'] for s in run['scenarios']}
    for preset in ('default', 'cross-queue-fence', 'depth-prepass-legacy', 'three-dispatches'):
        assert names[preset] == 'ok', preset
    for preset in ('upload-copy-legacy', 'readback-legacy', 'bgp-benchmark-priming', 'mip-chain'):
        assert names[preset] == 'unsupported', preset
    report = linux('report', str(out))
    assert report.returncode == 0, report.stderr
    text = (out / 'report.md').read_text()
    assert '**1. Does DIRECT overlap COMPUTE?** **No**' in text
    assert ('`non-intrusiveness`: no verdict (not judged: of its ' in text
            and ' unsupported by this runtime)' in text), text[:3000]
    plot = subprocess.run(['/usr/bin/python3', str(ROOT / 'plots' / 'plot.py'), str(out),
                           '--out', str(tmp_path / 'plots')], capture_output=True, text=True,
                          timeout=600)
    assert plot.returncode == 0, plot.stdout + plot.stderr
    assert (tmp_path / 'plots' / 'default' / 'timeline.png').stat().st_size > 0


def test_compare_puts_a_vulkan_run_and_a_d3d12_run_side_by_side(d3d12_results, tmp_path):
    vulkan = tmp_path / 'vulkan'
    made = linux('run', 'default', '--frames', '6', '--warmup', '1', *KEEP_EVERY_POLL_FRAME,
                 '--out', str(vulkan))
    assert made.returncode == 0, made.stderr
    result = linux('compare', str(vulkan / 'default'), str(d3d12_results / 'default'),
                   '--threshold-pct', '1000', '--csv', str(tmp_path / 'compare.csv'))
    # Same scenario, same workloads: every metric is matched. Both are CPU devices under test
    # load, so no verdict is asserted: a dependency gap of 65 us on one side and 2962 us on the
    # other was seen, past any threshold. Exit 1 is a verdict (changes found), 2 an error.
    assert result.returncode in (0, 1), result.stdout + result.stderr
    if result.returncode == 1:
        assert result.stderr.strip() == 'gpuoverlap: changes beyond the threshold (see CHANGED above)'
    text = lines(result.stdout)
    assert text[0].startswith('baseline:  Vulkan 1.3') and ', host Linux ' in text[0]
    assert text[1].startswith('candidate: D3D12 feature level 11_0 on llvmpipe')
    assert ', runtime Wine 8.' in text[1] and 'vkd3d' in text[1]
    assert 'different APIs' in text[2]
    rows = read_csv(tmp_path / 'compare.csv')
    assert {r['workload'] for r in rows} == {
        'Compute A', 'Compute B', 'Compute C', 'Gfx A', 'Compute D', 'Compute Queue A',
        'Compute Queue B', 'Compute Queue C'}
    assert 'missing: ' not in result.stdout


@pytest.fixture(scope='module')
def linux_results(tmp_path_factory):
    """Two runs of one scenario by the Linux build (lavapipe), for report and compare."""
    base = tmp_path_factory.mktemp('linux-results')
    for name in ('a', 'b'):
        made = linux('run', 'three-dispatches', '--frames', '4', '--warmup', '1',
                     *KEEP_EVERY_POLL_FRAME, '--out', str(base / name))
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
    # Two lavapipe runs under test load may differ past any threshold, so compare's verdict
    # (exit 0, or 1 for changes found) is not asserted, only that both builds reach the same
    # one with the same words; 2 would be an error.
    assert ours.returncode == theirs.returncode, ours.stderr + theirs.stderr
    assert ours.returncode in (0, 1), ours.stderr + theirs.stderr
    assert lines(ours.stdout) == lines(theirs.stdout)


def test_a_script_edits_the_running_scenario_on_d3d12(tmp_path):
    """run --script needs no window: the Windows build edits a D3D12 run between frames, and
    the scenario it saves is one the Linux build validates."""
    script = tmp_path / 'session.txt'
    saved = tmp_path / 'saved.toml'
    out = tmp_path / 'out'
    script.write_text('wait 2\niterations "Compute B" 2\nundepend "Compute C" "Compute B"\n'
                      'wait 2\nsave ' + windows_path(saved) + '\nend\n')
    made = windows('run', 'default', '--frames', '200', '--warmup', '1', '--script',
                   windows_path(script), '--out', windows_path(out))
    assert made.returncode == 0, made.stdout + made.stderr
    session = read_csv(out / 'live-session.csv')
    assert [(r['scenario'], r['frames'], r['ended']) for r in session] == [
        ('default', '2', 'edit'), ('default-edit-1', '2', 'end')]
    meta = json.loads((out / 'default-edit-1' / 'meta.json').read_text())
    assert meta['device']['api'] == 'D3D12'
    workloads = {w['name']: w for w in meta['scenario']['workloads']}
    assert workloads['Compute B']['iterations'] == 2
    assert workloads['Compute C']['depends_on'] == []
    assert meta['scenario']['live']['changes'] == [
        'iterations "Compute B" 2', 'undepend "Compute C" "Compute B"']
    checked = linux('validate', str(saved))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_viewer_is_not_in_the_windows_build_and_says_so(linux_results):
    ours = windows('view', windows_path(linux_results / 'a'))
    assert ours.returncode == 3, ours.stderr
    assert 'this build has no viewer' in ours.stderr
    assert len(lines(ours.stderr.strip())) == 1, ours.stderr


# A run on several devices (docs/multi-gpu.md) on the Windows build. Wine 8's DXGI has one
# adapter whatever the Vulkan drivers under it: wined3d makes a single adapter, and on Xvfb
# (no XRandR providers) Wine's display driver reports a single GPU. So under Wine the Windows
# build sees the one-device forms: --device all on that adapter, a list naming a second refused.
LAVAPIPE_ICD = '/usr/share/vulkan/icd.d/lvp_icd.x86_64.json'


def test_dxgi_lists_one_adapter_where_vulkan_has_two(tmp_path):
    second = tmp_path / 'lvp2.json'
    second.write_text(pathlib.Path(LAVAPIPE_ICD).read_text())
    icds = LAVAPIPE_ICD + ':' + str(second)
    vulkan = subprocess.run([LINUX, 'devices', '--json'], capture_output=True, text=True,
                            timeout=600, env={**os.environ, 'VK_ICD_FILENAMES': icds})
    assert vulkan.returncode == 0, vulkan.stderr
    assert len(json.loads(vulkan.stdout)) == 2
    d3d12 = windows('devices', '--json', env={'WINE_RUN_VK_ICD_FILENAMES': icds})
    assert d3d12.returncode == 0, d3d12.stderr
    assert [d['api'] for d in json.loads(d3d12.stdout)] == ['D3D12']


def the_adapter():
    result = windows('devices', '--json')
    assert result.returncode == 0, result.stderr
    adapters = json.loads(result.stdout)
    assert len(adapters) == 1
    return adapters[0]


def assert_one_device_layout(out, adapter):
    """OUT/gpu0 and OUT/run.json, as on a host with one GPU: the run.json lists the device and
    its scenarios by folder, and every scenario's meta.json names the D3D12 adapter."""
    assert sorted(p.name for p in out.iterdir()) == ['gpu0', 'run.json']
    run = json.loads((out / 'run.json').read_text())
    assert [(d['index'], d['directory'], d['status']) for d in run['devices']] == [
        (0, 'gpu0', 'ok')]
    device = run['devices'][0]['device']
    assert device['api'] == 'D3D12' and device['luid'] == adapter['luid']
    assert device['name'] == adapter['name']
    assert [(s['directory'], s['status']) for s in run['scenarios']] == [('gpu0/default', 'ok')]
    own = json.loads((out / 'gpu0' / 'run.json').read_text())
    assert [(s['directory'], s['status']) for s in own['scenarios']] == [('default', 'ok')]
    meta = json.loads((out / 'gpu0' / 'default' / 'meta.json').read_text())
    assert meta['device']['api'] == 'D3D12'
    assert meta['device']['luid'] == adapter['luid'] and meta['device_index'] == 0
    assert len(read_csv(out / 'gpu0' / 'default' / 'records.csv.gz')) == 3 * len(
        meta['scenario']['workloads'])
    return run, meta


def test_device_all_runs_on_the_one_adapter_in_a_folder_of_its_own(tmp_path):
    adapter = the_adapter()
    out = tmp_path / 'all'
    made = windows('run', 'default', '--frames', '3', '--warmup', '0', '--device', 'all',
                   *KEEP_EVERY_POLL_FRAME, '--out', windows_path(out))
    assert made.returncode == 0, made.stdout + made.stderr
    run, _ = assert_one_device_layout(out, adapter)
    assert run['concurrent'] is None
    # The Linux tools read it as a run on several devices, of one.
    report = linux('report', str(out))
    assert report.returncode == 0, report.stderr
    text = (out / 'report.md').read_text()
    assert text.startswith('# gpuoverlap report: 1 device side by side')
    assert '| gpu0 | D3D12 | ' + adapter['name'] + ' | ' in text
    assert (out / 'gpu0' / 'report.md').is_file()


def test_concurrent_on_the_one_adapter_keeps_the_layout_and_says_where_it_stood(tmp_path):
    adapter = the_adapter()
    out = tmp_path / 'at-once'
    made = windows('run', 'default', '--frames', '3', '--warmup', '0', '--device', 'all',
                   '--concurrent', *KEEP_EVERY_POLL_FRAME, '--out', windows_path(out))
    assert made.returncode == 0, made.stdout + made.stderr
    assert '[gpu0] [1/1] default: ok' in made.stderr
    run, meta = assert_one_device_layout(out, adapter)
    assert run['concurrent'] == {'rounds': 0, 'cpus': 'shared', 'studied': [],
                                 'together_only': []}
    where = dict(meta['concurrent'])
    assert where.pop('waited_ms') >= 0
    assert where == {'alone': False, 'devices': 1, 'in_step': True, 'step': 1}
    assert meta['run_span_ns']['start'] <= meta['run_span_ns']['end']
    report = linux('report', str(out))
    assert report.returncode == 0, report.stderr
    assert (out / 'report.md').read_text().startswith('# gpuoverlap report: 1 device side by side')


@pytest.mark.parametrize('arguments, reason', [
    (['--device', '0,1'], '--device 1: no such device index (devices: 0: '),
    (['--device', '0,0'], '--device 0,0: device 0 is named twice (devices: 0: '),
    (['--concurrent'], '--concurrent runs several devices at once'),
    (['--device', '0', '--concurrent'], '--concurrent runs several devices at once'),
    (['--device', 'all', '--concurrent', '--concurrency-rounds', '3', '--frames', '6'],
     '--concurrency-rounds compares a device alone with the others busy: it needs two '
     'devices or more'),
])
def test_what_needs_a_second_adapter_is_refused_with_nothing_made(tmp_path, arguments, reason):
    out = tmp_path / 'never'
    result = windows('run', 'default', *arguments, '--out', windows_path(out))
    assert result.returncode == 2, result.stdout + result.stderr
    assert reason in result.stderr and result.stdout == ''
    assert len(lines(result.stderr.strip())) == 1, result.stderr
    assert not out.exists()
