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
#
# A session, for many runs in a row (tests/windows): each run above starts a display, Wine's
# server and its services, and waits for them to go, about 3.3 s; in a session a run takes
# 0.1 s. `wine-run.sh --session-start` starts a display and a server that stays, with the
# services, prints the display's name, and returns; runs with WINE_RUN_DISPLAY set to it use
# them and wait for nothing more than the program; `wine-run.sh --session-stop DISPLAY` ends
# them. A session left running holds nothing but the two processes and the display's lock.
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

# start_display: Xvfb on the first free number from 90, detached from this script's output;
# sets display and xvfb_pid once its socket is there (at most 10 s).
start_display() {
  display=90
  while [ -e "/tmp/.X11-unix/X$display" ] || [ -e "/tmp/.X$display-lock" ]; do display=$((display + 1)); done
  setsid Xvfb ":$display" -screen 0 640x480x24 -nolisten tcp >/dev/null 2>&1 </dev/null &
  xvfb_pid=$!
  for _ in $(seq 1 200); do [ -e "/tmp/.X11-unix/X$display" ] && return 0; sleep 0.05; done
  echo "wine-run: Xvfb :$display did not start within 10 s" >&2
  return 1
}

case "${1:-}" in
  --session-stop)
    [ -n "${2:-}" ] || { echo "wine-run: --session-stop needs the display --session-start printed" >&2; exit 2; }
    wineserver -k </dev/null >/dev/null 2>&1 || true
    pkill -f "^Xvfb $2 " || true
    exit 0
    ;;
esac

if [ -n "${WINE_RUN_DISPLAY:-}" ] && [ "${1:-}" != --session-start ]; then
  # In a session: its display and its server, which stays.
  export DISPLAY=$WINE_RUN_DISPLAY
  status=0
  wine "$exe" "$@" </dev/null || status=$?
  exit "$status"
fi

start_display
session=0
if [ "${1:-}" = --session-start ]; then session=1; fi
# The display goes when this script ends, unless it is a session's that started.
cleanup() { kill "$xvfb_pid" 2>/dev/null || true; }
trap cleanup EXIT
export DISPLAY=":$display"

if [ ! -f "$prefix/system.reg" ]; then
  mkdir -p "$prefix"
  # No Mono or Gecko: their installers would wait for a click on the invisible display.
  WINEDLLOVERRIDES="mscoree,mshtml=" wine wineboot -i >"$prefix.log" 2>&1 </dev/null
  # Wine's D3D12 (vkd3d) and DXGI on Vulkan, not OpenGL.
  wine reg add 'HKCU\Software\Wine\Direct3D' /v renderer /t REG_SZ /d vulkan /f >>"$prefix.log" 2>&1 </dev/null
  wineserver -w
fi

if [ "$session" = 1 ]; then
  # The server stays (-p) until --session-stop; wineboot starts the services now, with no
  # caller's pipe to inherit.
  # A server already running for the prefix (another session) keeps this one from starting.
  if ! wineserver -p </dev/null >/dev/null 2>&1; then
    echo "wine-run: a Wine server is already running for $WINEPREFIX (another session?); end it with --session-stop DISPLAY or wineserver -k" >&2
    exit 2
  fi
  wine wineboot </dev/null >/dev/null 2>&1
  trap - EXIT
  echo "$DISPLAY"
  exit 0
fi

status=0
wine "$exe" "$@" </dev/null || status=$?
wineserver -w
exit "$status"
