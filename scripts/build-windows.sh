#!/usr/bin/env bash
# Cross-builds build-windows/gpuoverlap.exe (64-bit Windows) from the same CMakeLists with
# Debian's mingw-w64, installing what it needs (idempotent; sudo when not root).
# Usage: scripts/build-windows.sh [BUILD_DIR] [extra cmake arguments...]
#
# The header-only libraries (nlohmann-json, toml++, CLI11, fmt in header-only mode) and
# DirectX-Headers and Vulkan's headers come from the same Debian packages as the Linux build,
# and the workloads' SPIR-V from the same host tools (glslang, SPIRV-Tools). The headers are
# exposed to the cross compiler through a folder of links to exactly those headers: putting
# /usr/include itself on its path would shadow mingw's C library with glibc's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build-windows"}
shift || true

packages=(cmake ninja-build g++-mingw-w64-x86-64-posix directx-headers-dev libtomlplusplus-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libfccp-dev libz-mingw-w64-dev python3
          libvulkan-dev glslang-tools spirv-tools)
# shellcheck source=scripts/ensure-packages.sh
. "$root/scripts/ensure-packages.sh"
ensure_packages build-windows "${packages[@]}"

headers="$build_dir/host-headers"
mkdir -p "$headers"
for dir in nlohmann toml++ CLI fmt directx dxguids libfccp vulkan vk_video; do
  ln -sfn "/usr/include/$dir" "$headers/$dir"
done

cmake_generator "$build_dir"
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64.cmake" \
  -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} -DGPUOVERLAP_HOST_HEADERS="$headers" \
  -DGPUOVERLAP_TESTS=OFF -DGPUOVERLAP_VULKAN=ON "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
echo "build-windows: $build_dir/gpuoverlap.exe"
