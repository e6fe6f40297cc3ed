#!/usr/bin/env bash
# Compiles workloads/perlin.hlsl for the D3D12 backend to DXBC (shader model 5.0) and commits
# nothing itself: it writes workloads/dxbc/perlin_{cs,vs,ps,ps_depth}_main.dxbc and SOURCE_SHA256 (the
# hash of the HLSL they came from, which tests/python/test_dxbc.py checks, so a change to the
# HLSL fails the tests until this script is run again).
#
# The compiler is vkd3d-compiler 2.x: Debian 12 has none and Wine's D3DCompile cannot compile
# this HLSL, so it is *downloaded* (never installed) from Debian sid with the libc it needs and
# run through that libc's loader, in build-dxbc/. It has no -D option: GPUOVERLAP_D3D12 is
# defined by a line put before the source.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/build-dxbc"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
if [ ! -x "$work/root/usr/bin/vkd3d-compiler" ]; then
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
  echo "deb $uri sid main" > "$work/sid.list"
  apt_sid=(apt-get -q -o Dir::Etc::sourcelist="$work/sid.list" -o Dir::Etc::sourceparts=/dev/null
           -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache")
  "${apt_sid[@]}" update >"$work/apt.log" 2>&1
  (cd "$work" && "${apt_sid[@]}" download vkd3d-compiler libvkd3d-shader1 libc6 >>"$work/apt.log" 2>&1)
  for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/root"; done
fi
lib="$work/root/usr/lib/x86_64-linux-gnu"
compiler() {
  "$lib/ld-linux-x86-64.so.2" --library-path "$lib:/usr/lib/x86_64-linux-gnu" \
    "$work/root/usr/bin/vkd3d-compiler" "$@"
}
source_file="$root/workloads/perlin.hlsl"
{ echo "#define GPUOVERLAP_D3D12 1"; cat "$source_file"; } > "$work/perlin_d3d12.hlsl"
out="$root/workloads/dxbc"
mkdir -p "$out"
for entry in cs_main:cs_5_0 vs_main:vs_5_0 ps_main:ps_5_0 ps_depth_main:ps_5_0; do
  compiler -x hlsl -b dxbc-tpf -p "${entry#*:}" -e "${entry%%:*}" \
    -o "$out/perlin_${entry%%:*}.dxbc" "$work/perlin_d3d12.hlsl"
done
sha256sum "$source_file" | cut -d' ' -f1 > "$out/SOURCE_SHA256"
compiler --version | head -1 > "$out/COMPILER"
echo "compile-dxbc: $(ls "$out"/*.dxbc | wc -l) shaders in $out ($(cat "$out/COMPILER"))"
