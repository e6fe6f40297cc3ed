#!/usr/bin/env bash
# Builds the Windows release package: a zip with gpuoverlap.exe (D3D12 and Vulkan), the preset
# files, plots/ (plot.py and its modules), the docs and a README for Windows users. Builds the
# .exe first (scripts/build-windows.sh: idempotent, quick when it is built).
# Usage: scripts/package-windows.sh [ZIP]
#   ZIP: where to write it (default build-windows/gpuoverlap-windows-<revision>.zip); the
#   path is printed last. An existing file there is replaced only once the new one is written.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build-windows"
"$root/scripts/build-windows.sh" "$build_dir" >&2

revision=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
zip_path=$(realpath -m "${1:-"$build_dir/gpuoverlap-windows-$revision.zip"}")
[ -f "$build_dir/gpuoverlap.exe" ] || { echo "package-windows: no $build_dir/gpuoverlap.exe" >&2; exit 2; }

# The package's tree in a fresh folder, zipped with Python's zipfile (no zip package needed),
# written beside the target under another name and renamed into place.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top="$stage/gpuoverlap-windows-$revision"
mkdir -p "$top/presets" "$top/plots" "$top/docs/images"
cp "$build_dir/gpuoverlap.exe" "$top/"
cp "$root"/scenarios/presets/*.toml "$top/presets/"
cp "$root"/plots/*.py "$root/plots/README.md" "$top/plots/"
cp "$root/README.md" "$top/README-project.md"
cp "$root"/docs/*.md "$top/docs/"
cp -r "$root"/docs/images/. "$top/docs/images/"
cp "$root/scripts/windows-package/README.txt" "$top/README.txt"
printf 'gpuoverlap %s\n' "$revision" > "$top/VERSION.txt"

partial="$zip_path.partial"
rm -f "$partial"
(cd "$stage" && /usr/bin/python3 -m zipfile -c "$partial" "$(basename "$top")")
mv -f "$partial" "$zip_path"
echo "$zip_path"
