#!/usr/bin/env bash
# Runs build-windows/gpuoverlap.exe ARGS... under Debian 12's Wine (8.0), in a private prefix,
# with lavapipe as the Vulkan device under Wine's D3D12 (vkd3d) and an Xvfb display (Wine's
# graphics stack needs one). Installs what it needs (idempotent; sudo when not root). The
# exit status is the program's.
#
# WINE_RUN_PREFIX (default build-windows/wine-prefix) and GPUOVERLAP_EXE override the paths;
# WINE_RUN_VK_ICD_FILENAMES the Vulkan drivers under D3D12 (default lavapipe's).
# Hazard: a wineserver started from a pipe keeps the pipe open, so every wine command here
# reads /dev/null and writes to files or the terminal, never into $(...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=${GPUOVERLAP_EXE:-"$root/build-windows/gpuoverlap.exe"}
prefix=${WINE_RUN_PREFIX:-"$root/build-windows/wine-prefix"}
[ -f "$exe" ] || { echo "wine-run: no $exe; run scripts/build-windows.sh first" >&2; exit 2; }

packages=(wine wine64 libwine xvfb xauth mesa-vulkan-drivers libvulkan1)
# shellcheck source=scripts/ensure-packages.sh
. "$root/scripts/ensure-packages.sh"
ensure_packages wine-run "${packages[@]}"

export WINEPREFIX=$prefix WINEARCH=win64 WINEDEBUG=${WINEDEBUG:--all}
export VK_ICD_FILENAMES=${WINE_RUN_VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
export VK_DRIVER_FILES=$VK_ICD_FILENAMES

# A display of our own, on the first free number from 90; gone when this script ends.
display=90
while [ -e "/tmp/.X11-unix/X$display" ] || [ -e "/tmp/.X$display-lock" ]; do display=$((display + 1)); done
Xvfb ":$display" -screen 0 640x480x24 -nolisten tcp >/dev/null 2>&1 </dev/null &
xvfb_pid=$!
cleanup() { kill "$xvfb_pid" 2>/dev/null || true; }
trap cleanup EXIT
export DISPLAY=":$display"
for _ in $(seq 1 100); do [ -e "/tmp/.X11-unix/X$display" ] && break; sleep 0.05; done

if [ ! -f "$prefix/system.reg" ]; then
  mkdir -p "$prefix"
  # No Mono or Gecko: their installers would wait for a click on the invisible display.
  WINEDLLOVERRIDES="mscoree,mshtml=" wine wineboot -i >"$prefix.log" 2>&1 </dev/null
  # Wine's D3D12 (vkd3d) and DXGI on Vulkan, not OpenGL.
  wine reg add 'HKCU\Software\Wine\Direct3D' /v renderer /t REG_SZ /d vulkan /f >>"$prefix.log" 2>&1 </dev/null
  wineserver -w
fi

status=0
wine "$exe" "$@" </dev/null || status=$?
wineserver -w
exit "$status"
