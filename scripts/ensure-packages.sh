# Sourced by the scripts that install what they need: ensure_packages WHO PACKAGE... installs
# the Debian packages not installed yet (apt-get, with sudo when not root), saying so on
# stderr as "WHO: installing ...". Idempotent; does nothing when all are there.
ensure_packages() {
  local who=$1 p sudo=""
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "$who: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# cmake_generator BUILD_DIR: sets the array `generator` to the -G arguments of a cmake
# configure of BUILD_DIR: Ninja (package ninja-build) for a new folder, because it compiles a
# target's sources while the libraries it links are still being built, where Make waits for
# them (a first Release build on 2 cores: 153 s against 196); nothing for a folder configured
# before, which keeps its generator (CMake refuses to change it).
cmake_generator() {
  generator=()
  if [ ! -f "$1/CMakeCache.txt" ]; then generator=(-G Ninja); fi
}
