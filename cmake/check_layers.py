#!/usr/bin/python3
"""Enforces the folder layering that CMakeLists.txt declares (gpuoverlap_folder(...)).

Usage: check_layers.py SOURCE_ROOT LAYERS_FILE

LAYERS_FILE has one line per folder library: `folder: dep dep ...` (folders relative to the
source root, e.g. `backends/vulkan: core engine ...`). The build runs this before compiling
anything, so each of these fails the build, with the file and line that broke the rule:

- a source file includes `"X/..."` from a folder X its own folder does not declare;
- the declared dependencies form a cycle;
- a folder's README.md does not list exactly its declared dependencies on its
  `May depend on:` line (each as `folder/` in backticks), so the READMEs stay true;
- a Vulkan header is included outside `backends/`;
- a C++ file lives in no declared folder (it would escape every rule).

Standard library only (Debian's /usr/bin/python3 at build time). Exit 0 clean, 1 violations,
2 bad arguments.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
# DirectX-Headers' d3d12.h is the scenario vocabulary (types and constants) and may appear
# anywhere; Vulkan's headers declare the API itself.
API_INCLUDE = re.compile(r'^\s*#\s*include\s*<(vulkan/[^>]+)>')
# The rule's paragraph: from "May depend on:" to the next blank line.
README_RULE = re.compile(r'May depend on:(.*?)(?:\n\s*\n|\Z)', re.S)
README_FOLDER = re.compile(r'`([a-z0-9_]+(?:/[a-z0-9_]+)*)/`')
# Folders that hold no library code: they are checked by their own tools or not compiled in.
UNCHECKED = {'tests', 'docs', 'bench', 'plots', 'scripts', 'cmake', '.git', '.github', '.ci'}
CXX = ('.h', '.hpp', '.cpp', '.cc')


def read_layers(path):
    layers = {}
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            folder, sep, deps = line.partition(':')
            if not sep:
                raise ValueError(f'{path}:{number}: expected "folder: deps"')
            layers[folder.strip()] = set(deps.split())
    return layers


def owner(relative_path, folders):
    """The longest declared folder that contains the file, or None."""
    best = None
    for folder in folders:
        if relative_path.startswith(folder + '/') and (best is None or len(folder) > len(best)):
            best = folder
    return best


def included_folder(include, folders):
    """The declared folder an include names, or None (a generated header, a sibling)."""
    return owner(include, folders)


def find_cycle(layers):
    state = {}

    def visit(node, path):
        state[node] = 'open'
        for dep in sorted(layers.get(node, ())):
            if state.get(dep) == 'open':
                return path + [node, dep]
            if dep not in state:
                found = visit(dep, path + [node])
                if found:
                    return found
        state[node] = 'done'
        return None

    for node in sorted(layers):
        if node not in state:
            found = visit(node, [])
            if found:
                start = found.index(found[-1])
                return found[start:]
    return None


def check(root, layers):
    problems = []
    folders = set(layers)
    for folder, deps in sorted(layers.items()):
        for dep in sorted(deps - folders):
            problems.append(f'CMakeLists.txt: {folder} depends on {dep}, which is no folder library')
        if folder in deps:
            problems.append(f'CMakeLists.txt: {folder} depends on itself')
    cycle = find_cycle(layers)
    if cycle:
        problems.append('CMakeLists.txt: dependency cycle: ' + ' -> '.join(cycle))

    for folder, deps in sorted(layers.items()):
        readme = os.path.join(root, folder, 'README.md')
        if not os.path.isfile(readme):
            problems.append(f'{folder}/README.md: missing (it states what the folder may depend on)')
            continue
        with open(readme, encoding='utf-8') as f:
            text = f.read()
        rules = README_RULE.findall(text)
        if len(rules) != 1:
            problems.append(f'{folder}/README.md: needs exactly one "May depend on:" line, has {len(rules)}')
            continue
        stated = set(README_FOLDER.findall(rules[0]))
        if stated != deps:
            missing = ', '.join(sorted(deps - stated)) or '-'
            extra = ', '.join(sorted(stated - deps)) or '-'
            problems.append(f'{folder}/README.md: "May depend on:" differs from CMakeLists.txt '
                            f'(not stated: {missing}; not declared: {extra})')

    for directory, subdirectories, files in os.walk(root):
        relative_dir = os.path.relpath(directory, root)
        top = relative_dir.split(os.sep)[0]
        if relative_dir == '.':
            subdirectories[:] = [d for d in subdirectories
                                 if d not in UNCHECKED and not d.startswith(('build', '.'))]
            continue
        for name in sorted(files):
            if not name.endswith(CXX):
                continue
            relative = os.path.join(relative_dir, name).replace(os.sep, '/')
            folder = owner(relative, folders)
            if folder is None:
                problems.append(f'{relative}: in no folder library of CMakeLists.txt ({top}/)')
                continue
            allowed = layers[folder] | {folder}
            with open(os.path.join(directory, name), encoding='utf-8', errors='replace') as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if match:
                        target = included_folder(match.group(1), folders)
                        if target is not None and target not in allowed:
                            problems.append(f'{relative}:{number}: includes "{match.group(1)}", but '
                                            f'{folder}/ may not depend on {target}/')
                    match = API_INCLUDE.match(line)
                    if match and not relative.startswith('backends/'):
                        problems.append(f'{relative}:{number}: includes <{match.group(1)}>: only '
                                        f'backends/ may use a GPU API')
    return problems


def main(argv):
    if len(argv) != 3:
        print('usage: check_layers.py SOURCE_ROOT LAYERS_FILE', file=sys.stderr)
        return 2
    try:
        layers = read_layers(argv[2])
    except (OSError, ValueError) as error:
        print(f'check_layers: {error}', file=sys.stderr)
        return 2
    problems = check(argv[1], layers)
    for problem in problems:
        print(f'layering: {problem}', file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
