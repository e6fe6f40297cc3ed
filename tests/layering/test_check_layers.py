"""cmake/check_layers.py on small made-up trees: each rule it enforces fails a tree that
breaks it, with the place named, and passes the same tree once it is fixed. The real tree is
checked by the build itself (and once more here, with the build's own layers.txt)."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECKER = ROOT / 'cmake' / 'check_layers.py'


def make_tree(tmp_path, layers, files):
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    layers_file = tmp_path / 'layers.txt'
    layers_file.write_text(''.join(f'{folder}: {" ".join(deps)}\n' for folder, deps in layers.items()))
    return layers_file


def check(tmp_path, layers_file):
    return subprocess.run([sys.executable, str(CHECKER), str(tmp_path), str(layers_file)],
                          capture_output=True, text=True, timeout=60)


LAYERS = {'core': [], 'model': ['core'], 'backends/gpu': ['core', 'model']}
CLEAN = {
    'core/README.md': 'Core.\n\nMay depend on: nothing.\n',
    'core/clock.h': '#pragma once\n',
    'model/README.md': 'Model.\n\nMay depend on: `core/`.\n',
    'model/thing.h': '#include "core/clock.h"\n#include "generated_header.h"\n',
    'backends/gpu/README.md': 'May depend on: `core/` and\n`model/`.\n\nElsewhere: `app/`.\n',
    'backends/gpu/device.cpp': '#include <vulkan/vulkan.h>\n#include "model/thing.h"\n',
    'tests/anything.cpp': '#include "backends/gpu/device.h"\n#include <vulkan/vulkan.h>\n',
}


def test_a_tree_that_keeps_the_rules_passes(tmp_path):
    result = check(tmp_path, make_tree(tmp_path, LAYERS, CLEAN))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ''


def test_an_include_from_an_undeclared_folder_fails_with_its_place(tmp_path):
    files = dict(CLEAN)
    files['model/upward.cpp'] = '// why\n#include "backends/gpu/device.h"\n'
    result = check(tmp_path, make_tree(tmp_path, LAYERS, files))
    assert result.returncode == 1
    assert 'model/upward.cpp:2: includes "backends/gpu/device.h", but model/ may not depend on backends/gpu/' \
        in result.stderr


def test_a_declared_cycle_fails(tmp_path):
    layers = dict(LAYERS, core=['model'])
    files = dict(CLEAN)
    files['core/README.md'] = 'May depend on: `model/`.\n'
    result = check(tmp_path, make_tree(tmp_path, layers, files))
    assert result.returncode == 1
    assert 'dependency cycle: core -> model -> core' in result.stderr


def test_a_readme_that_differs_from_the_build_fails(tmp_path):
    files = dict(CLEAN)
    files['model/README.md'] = 'May depend on: `core/` and `backends/gpu/`.\n'
    result = check(tmp_path, make_tree(tmp_path, LAYERS, files))
    assert result.returncode == 1
    assert 'model/README.md: "May depend on:" differs from CMakeLists.txt (not stated: -; not declared: backends/gpu)' \
        in result.stderr


def test_a_readme_without_its_rule_fails(tmp_path):
    files = dict(CLEAN)
    files['model/README.md'] = 'Model, depends on core.\n'
    result = check(tmp_path, make_tree(tmp_path, LAYERS, files))
    assert result.returncode == 1
    assert 'model/README.md: needs exactly one "May depend on:" line, has 0' in result.stderr


def test_a_vulkan_header_outside_backends_fails(tmp_path):
    files = dict(CLEAN)
    files['model/leak.h'] = '#include <vulkan/vulkan_core.h>\n'
    result = check(tmp_path, make_tree(tmp_path, LAYERS, files))
    assert result.returncode == 1
    assert 'model/leak.h:1: includes <vulkan/vulkan_core.h>: only backends/ may use a GPU API' in result.stderr


def test_a_source_in_no_declared_folder_fails(tmp_path):
    files = dict(CLEAN)
    files['stray/code.cpp'] = 'int x;\n'
    result = check(tmp_path, make_tree(tmp_path, LAYERS, files))
    assert result.returncode == 1
    assert 'stray/code.cpp: in no folder library of CMakeLists.txt' in result.stderr


def test_a_dependency_on_an_unknown_folder_fails(tmp_path):
    layers = dict(LAYERS, model=['core', 'nowhere'])
    files = dict(CLEAN)
    files['model/README.md'] = 'May depend on: `core/`, `nowhere/`.\n'
    result = check(tmp_path, make_tree(tmp_path, layers, files))
    assert result.returncode == 1
    assert 'model depends on nowhere, which is no folder library' in result.stderr


def test_the_real_tree_keeps_its_declared_layers():
    layers_file = os.environ.get('GPUOVERLAP_LAYERS_FILE')
    if not layers_file:
        pytest.fail('GPUOVERLAP_LAYERS_FILE is not set (ctest sets it to the build\'s layers.txt)')
    result = subprocess.run([sys.executable, str(CHECKER), str(ROOT), layers_file],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # Not vacuous: the build declares every concept folder.
    declared = {line.split(':')[0] for line in pathlib.Path(layers_file).read_text().splitlines()}
    assert {'core', 'scenarios', 'timeline', 'engine', 'backends/vulkan', 'app'} <= declared
