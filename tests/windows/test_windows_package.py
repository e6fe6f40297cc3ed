"""The Windows release package (scripts/package-windows.sh): the zip holds what its README
says, and the .exe unpacked from it alone runs under Wine: --version, list, and a preset
through each API."""
import json
import subprocess
import zipfile

import pytest

from wine_exe import ROOT, lines, linux, windows, windows_path


@pytest.fixture(scope='module')
def unpacked(tmp_path_factory):
    where = tmp_path_factory.mktemp('package')
    made = subprocess.run([str(ROOT / 'scripts' / 'package-windows.sh'), str(where / 'p.zip')],
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert made.returncode == 0, made.stderr
    assert lines(made.stdout)[-1] == str(where / 'p.zip')
    with zipfile.ZipFile(where / 'p.zip') as package:
        assert package.testzip() is None
        package.extractall(where / 'unpacked')
    (top,) = (where / 'unpacked').iterdir()
    return top


def test_the_zip_holds_the_exe_presets_plots_docs_and_a_readme(unpacked):
    assert (unpacked / 'gpuoverlap.exe').stat().st_size > 1_000_000
    presets = sorted(p.name for p in (unpacked / 'presets').glob('*.toml'))
    assert presets == sorted(p.name for p in (ROOT / 'scenarios' / 'presets').glob('*.toml'))
    assert (unpacked / 'plots' / 'plot.py').is_file()
    assert {p.name for p in (unpacked / 'plots').glob('*.py')} == {
        p.name for p in (ROOT / 'plots').glob('*.py')}
    assert (unpacked / 'docs' / 'usage.md').is_file() and (unpacked / 'docs' / 'windows.md').is_file()
    readme = (unpacked / 'README.txt').read_text()
    assert 'gpuoverlap.exe run default --api vulkan' in readme and 'matplotlib' in readme
    assert (unpacked / 'VERSION.txt').read_text().startswith('gpuoverlap ')


def test_the_unpacked_exe_runs_alone(unpacked, tmp_path):
    exe = {'GPUOVERLAP_EXE': str(unpacked / 'gpuoverlap.exe')}
    version = windows('--version', env=exe)
    assert version.returncode == 0, version.stderr
    assert lines(version.stdout)[0] == (unpacked / 'VERSION.txt').read_text().strip()
    listed = windows('list', env=exe)
    assert listed.returncode == 0 and lines(listed.stdout) == lines(linux('list').stdout)
    for api in ('d3d12', 'vulkan'):
        out = tmp_path / api
        ran = windows('run', 'default', '--api', api, '--frames', '3', '--warmup', '1',
                      '--priority-fallback', '--out', windows_path(out), env=exe)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        meta = json.loads((out / 'default' / 'meta.json').read_text())
        assert meta['device']['api'] == {'d3d12': 'D3D12', 'vulkan': 'Vulkan'}[api]
