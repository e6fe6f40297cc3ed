"""scripts/setup.sh's package list is complete: every header under /usr a build of the tool
and its tests compiled (the compiler's own dependency lists, indirect includes too) belongs to a
Debian package the list installs, directly or as a dependency. A header that came from a
package the machine happened to have fails here, not on a newcomer's fresh system (the SQLite
headers SOCI's sqlite3 backend includes were such a one).

Needs GPUOVERLAP_BUILD_DIR: a build folder that has been built (ctest sets it)."""
import os
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What any C++ compile has without asking: the C library, the compiler's own headers, the
# kernel's (build-essential brings them).
TOOLCHAIN = re.compile(r'^(libc6-dev|libstdc\+\+-\d+-dev|libgcc-\d+-dev|linux-libc-dev)$')


def build_dir():
    where = os.environ.get('GPUOVERLAP_BUILD_DIR')
    assert where and pathlib.Path(where).is_dir(), 'set GPUOVERLAP_BUILD_DIR (ctest does)'
    return pathlib.Path(where)


def compiled_headers(build):
    """Every file under /usr the compiles read, from Ninja's log of dependencies or, in a Make
    build folder, the compiler's .d files."""
    if (build / '.ninja_deps').is_file():
        text = subprocess.run(['ninja', '-C', str(build), '-t', 'deps'], capture_output=True,
                              text=True, check=True).stdout
    else:
        text = '\n'.join(p.read_text() for p in build.rglob('*.o.d'))
    headers = {word.rstrip('\\') for word in text.split() if word.startswith('/usr/')}
    assert len(headers) > 100, 'the build folder has not been built'
    return sorted(headers)


def owners(paths):
    """{path: its packages} for the paths dpkg knows (`dpkg -S`)."""
    done = subprocess.run(['dpkg', '-S', *paths], capture_output=True, text=True)
    owned = {}
    for line in done.stdout.splitlines():
        packages, _, path = line.partition(': ')
        owned[path] = {p.strip().split(':')[0] for p in packages.split(',')}
    return owned


def installed_dependencies():
    """{package: the packages it depends on}, alternatives and what provides a virtual one
    included, over the installed packages (dpkg's status: no apt lists needed)."""
    text = subprocess.run(['dpkg-query', '-W', '-f', '${Package}\t${Depends}, ${Pre-Depends}\t'
                           '${Provides}\n'], capture_output=True, text=True, check=True).stdout
    depends, providers = {}, {}
    for line in text.splitlines():
        name, needs, provides = (line.split('\t') + ['', ''])[:3]
        depends[name] = {re.split(r'[ :(]', alt.strip())[0] for group in needs.split(',')
                         for alt in group.split('|') if alt.strip()}
        for virtual in provides.split(','):
            if virtual.strip():
                providers.setdefault(re.split(r'[ :(]', virtual.strip())[0], set()).add(name)
    return depends, providers


def setup_packages():
    text = (ROOT / 'scripts' / 'setup.sh').read_text()
    listed = re.search(r'^packages=\((.*?)^\)', text, re.M | re.S).group(1)
    return {word for word in listed.split() if re.fullmatch(r'[a-z0-9][a-z0-9.+-]+', word)}


def closure(packages, depends, providers):
    seen, todo = set(), list(packages)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += depends.get(name, set()) | providers.get(name, set())
    return seen


def test_every_header_the_build_compiled_comes_from_a_package_setup_installs():
    headers = compiled_headers(build_dir())
    owned = owners(headers)
    depends, providers = installed_dependencies()
    listed = setup_packages()
    assert {'libsoci-dev', 'libvulkan-dev', 'libgtest-dev'} <= listed
    reachable = closure(listed, depends, providers)
    missing = {}
    for path, packages in owned.items():
        if any(TOOLCHAIN.match(p) for p in packages) or packages & reachable:
            continue
        for package in packages:
            missing.setdefault(package, []).append(path)
    assert not missing, 'headers from packages scripts/setup.sh does not install: ' + '; '.join(
        f'{package} ({paths[0]}, {len(paths)} in all)' for package, paths in sorted(missing.items()))


def test_the_check_finds_a_package_left_out():
    # The check itself: with libsqlite3-dev taken out of the list, SOCI's sqlite3 header's
    # include of sqlite3.h is found wanting.
    depends, providers = installed_dependencies()
    listed = setup_packages() - {'libsqlite3-dev'}
    owned = owners([h for h in compiled_headers(build_dir()) if h.endswith('/sqlite3.h')])
    assert owned, 'no sqlite3.h among the compiled headers'
    assert not any(packages & closure(listed, depends, providers) for packages in owned.values())
