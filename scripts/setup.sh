#!/usr/bin/env bash
# Installs the Debian 12 packages gpuoverlap needs (idempotent; uses sudo when not root) and
# builds it. Usage: scripts/setup.sh [BUILD_DIR] [extra cmake arguments...]
# EXTRA_PACKAGES adds Debian packages (scripts/fuzz.sh: clang); TARGETS builds only those.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build"}
shift || true

packages=(
  build-essential cmake ninja-build pkg-config git xz-utils
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslang-tools spirv-tools
  libshaderc-dev glslang-dev
  directx-headers-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libgtest-dev libgmock-dev libfccp-dev zlib1g-dev libsoci-dev libsqlite3-dev libpq-dev
  libimgui-dev libglfw3-dev libgl-dev libpng-dev xvfb xauth libgl1-mesa-dri libglx-mesa0
  python3 python3-matplotlib python3-pandas python3-pytest
  ${EXTRA_PACKAGES:-}
)
# shellcheck source=scripts/ensure-packages.sh
. "$root/scripts/ensure-packages.sh"
ensure_packages setup "${packages[@]}"

cmake_generator "$build_dir"
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "$@" >/dev/null
if [ -n "${TARGETS:-}" ]; then
  # shellcheck disable=SC2086 # a list of target names
  cmake --build "$build_dir" -j"$(nproc)" --target ${TARGETS}
else
  cmake --build "$build_dir" -j"$(nproc)"
fi
