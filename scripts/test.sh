#!/usr/bin/env bash
# Every test: install, build with tests, run the unit and integration tests (integration runs
# the real binary on the default Vulkan device: lavapipe without a GPU), the Windows build
# (mingw-w64) under Wine against the Linux build (tests/windows/), then again with
# AddressSanitizer + UndefinedBehaviorSanitizer and the threaded parts with ThreadSanitizer,
# and last the libFuzzer targets for FUZZ_SECONDS each (scripts/fuzz.sh, default 60).
# SANITIZERS=0 skips the sanitizer builds and the fuzzing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

echo "== build and test (RelWithDebInfo)"
BUILD_TYPE=RelWithDebInfo "$root/scripts/setup.sh" "$root/build-test" -DGPUOVERLAP_TESTS=ON

# The results history's tests run on SQLite and on this throwaway PostgreSQL server, stopped
# and removed however the script ends.
pg=$("$root/scripts/pg-throwaway.sh" start)
pg_dir=$(head -1 <<<"$pg")
trap '"$root/scripts/pg-throwaway.sh" stop "$pg_dir"' EXIT
export GPUOVERLAP_TEST_POSTGRESQL=$(tail -1 <<<"$pg")
echo "PostgreSQL for the history tests: $GPUOVERLAP_TEST_POSTGRESQL"
ctest --test-dir "$root/build-test" --output-on-failure -j"$jobs"

echo "== Windows build (mingw-w64) under Wine: what needs no GPU, against the Linux build"
"$root/scripts/build-windows.sh"
timeout 900 "$root/scripts/wine-run.sh" --version  # installs Wine and makes the prefix once
GPUOVERLAP_BINARY="$root/build-test/gpuoverlap" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  "$root/tests/windows"

if [ "${SANITIZERS:-1}" != 0 ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
  BUILD_TYPE=Debug "$root/scripts/setup.sh" "$root/build-asan" -DGPUOVERLAP_TESTS=ON \
    -DGPUOVERLAP_SANITIZE=address,undefined
  # Leak checking stays on for everything that runs in-process. The integration tests start
  # the binary, which loads the Vulkan driver: creating and destroying a bare VkInstance
  # (`gpuoverlap devices`) already leaks 240 bytes inside a driver module that is unloaded by
  # exit, so LeakSanitizer cannot even name it to suppress it. There, leaks are not checked;
  # ASan's memory errors and UBSan still are.
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$root/build-asan" --output-on-failure -j"$jobs" -LE integration
  ASAN_OPTIONS=detect_leaks=0 ctest --test-dir "$root/build-asan" --output-on-failure -j"$jobs" -L integration

  echo "== ThreadSanitizer (the threaded parts: pollers, the loops and executor on a fake backend, runner, devices at once, and the executor on the device, the live viewer's hand-over)"
  BUILD_TYPE=Debug "$root/scripts/setup.sh" "$root/build-tsan" -DGPUOVERLAP_TESTS=ON \
    -DGPUOVERLAP_SANITIZE=thread
  TSAN_OPTIONS="halt_on_error=1 suppressions=$root/tests/tsan.supp" \
    ctest --test-dir "$root/build-tsan" --output-on-failure -j"$jobs" -R 'StampPoller|SequencePoller|JobSystem|FrameLoop|PreemptionLoop|DeviceExecutor|LoadProcess|SuiteRunner|StepGate|ConcurrencyPlan|ConcurrentDevices|BackgroundProcessor|BackgroundSession|VariantSlot|AllPresets|Background\.|Verdict|LiveFeed|LiveEdits|LiveScript|ViewerLive'

  echo "== fuzzing: the scenario parser and the results readers (clang, ASan + UBSan)"
  "$root/scripts/fuzz.sh"
fi
