#!/usr/bin/env bash
# Every test: install, build with tests, run the unit and integration tests (integration runs
# the real binary on the default Vulkan device: lavapipe without a GPU), the Windows build
# (mingw-w64) under Wine against the Linux build (tests/windows/), then again with
# AddressSanitizer + UndefinedBehaviorSanitizer and the threaded parts with ThreadSanitizer,
# and last the libFuzzer targets for FUZZ_SECONDS each (scripts/fuzz.sh, default 60).
# SANITIZERS=0 skips the sanitizer builds and the fuzzing. Ends with the time each stage took
# (also when a stage fails), so a slow stage is seen where it is.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

stage_names=()
stage_seconds=()
stage_name=""
stage_start=0
# stage NAME: stops the clock of the stage before and starts NAME's.
stage() {
  end_stage
  stage_name=$1
  stage_start=$SECONDS
  echo "== $1"
}
end_stage() {
  if [ -n "$stage_name" ]; then
    stage_names+=("$stage_name")
    stage_seconds+=($((SECONDS - stage_start)))
    stage_name=""
  fi
}
pg_dir=""
on_exit() {
  local status=$?
  end_stage
  if [ -n "$pg_dir" ]; then "$root/scripts/pg-throwaway.sh" stop "$pg_dir"; fi
  echo "== time per stage (s)"
  local i
  for i in "${!stage_names[@]}"; do
    printf '%6d  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
  done
  printf '%6d  in all (exit status %d)\n' "$SECONDS" "$status"
}
trap on_exit EXIT

# Release: the flags scripts/run-suite.sh builds the tool with, so that what is tested is what
# runs (and without -g, which made the compile about 1.6 times as long).
stage "packages and build (Release)"
BUILD_TYPE=Release "$root/scripts/setup.sh" "$root/build-test" -DGPUOVERLAP_TESTS=ON

stage "tests (Release)"
# The results history's tests run on SQLite and on this throwaway PostgreSQL server, stopped
# and removed however the script ends.
pg=$("$root/scripts/pg-throwaway.sh" start)
pg_dir=$(head -1 <<<"$pg")
export GPUOVERLAP_TEST_POSTGRESQL=$(tail -1 <<<"$pg")
echo "PostgreSQL for the history tests: $GPUOVERLAP_TEST_POSTGRESQL"
# As root on Linux the kernel's scheduler record can be taken (tracefs): the neutrality test
# must then read it, never fall back to its check without privilege.
if [ "$(id -u)" = 0 ] && [ "$(uname -s)" = Linux ]; then export GPUOVERLAP_REQUIRE_SCHED_TRACE=1; fi
ctest --test-dir "$root/build-test" --output-on-failure -j"$jobs"

stage "Windows build (mingw-w64)"
"$root/scripts/build-windows.sh"
stage "Wine and its prefix"
timeout 900 "$root/scripts/wine-run.sh" --version  # installs Wine and makes the prefix once
stage "Windows tests under Wine, against the Linux build (what needs no GPU)"
GPUOVERLAP_BINARY="$root/build-test/gpuoverlap" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  "$root/tests/windows"

if [ "${SANITIZERS:-1}" != 0 ]; then
  stage "AddressSanitizer + UndefinedBehaviorSanitizer: build"
  BUILD_TYPE=Debug "$root/scripts/setup.sh" "$root/build-asan" -DGPUOVERLAP_TESTS=ON \
    -DGPUOVERLAP_SANITIZE=address,undefined
  # Leak checking stays on for everything that runs in-process. The integration tests start
  # the binary, which loads the Vulkan driver: creating and destroying a bare VkInstance
  # (`gpuoverlap devices`) already leaks 240 bytes inside a driver module that is unloaded by
  # exit, so LeakSanitizer cannot even name it to suppress it. There, leaks are not checked;
  # ASan's memory errors and UBSan still are.
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  stage "AddressSanitizer + UndefinedBehaviorSanitizer: in-process tests"
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$root/build-asan" --output-on-failure -j"$jobs" -LE integration
  # The python_* tests are left out: the Python they test is not instrumented, and the runs
  # they make of the binary (presets and options) are all in AllPresets. So is the neutrality
  # test: the kernel's record is of the Release build, which is what a user runs.
  stage "AddressSanitizer + UndefinedBehaviorSanitizer: the binary"
  ASAN_OPTIONS=detect_leaks=0 ctest --test-dir "$root/build-asan" --output-on-failure -j"$jobs" -L integration \
    -E '^(python_|neutrality_)'

  stage "ThreadSanitizer: build (what its tests need)"
  # The threaded parts: pollers, the loops and executor on a fake backend, runner, devices at
  # once, and the executor on the device, the live viewer's hand-over.
  TARGETS="gpuoverlap unit_tests integration_tests" BUILD_TYPE=Debug "$root/scripts/setup.sh" \
    "$root/build-tsan" -DGPUOVERLAP_TESTS=ON -DGPUOVERLAP_SANITIZE=thread
  stage "ThreadSanitizer: tests"
  export TSAN_OPTIONS="halt_on_error=1 suppressions=$root/tests/tsan.supp"
  # The suite's run (`run --all`: the study, the matrix, devices kept between scenarios) and
  # the history's threaded change-point search on it, beside the ctest below (alone after it,
  # the stage took 336 s, not 302); not the single-threaded report, compare,
  # plot.py and viewer on it, which the plain and ASan stages run.
  suite_log=$(mktemp)
  timeout 1800 "$root/build-tsan/tests/integration_tests" --gtest_brief=1 \
    --gtest_filter='AllPresets.*:-AllPresets.ReportComparePlotReadEveryScenario:AllPresets.ReportAnswersTheFiveQuestionsFirst:AllPresets.TheViewerShowsTheStudyAndTheMatricesAsPictures' \
    >"$suite_log" 2>&1 &
  suite_pid=$!
  ctest_status=0
  ctest --test-dir "$root/build-tsan" --output-on-failure -j"$jobs" -R 'StampPoller|SequencePoller|JobSystem|FrameLoop|PreemptionLoop|DeviceExecutor|LoadProcess|SuiteRunner|StepGate|ConcurrencyPlan|ConcurrentDevices|BackgroundProcessor|BackgroundSession|VariantSlot|Background\.|Verdict|LiveFeed|LiveEdits|LiveScript|ViewerLive' ||
    ctest_status=$?
  suite_status=0
  wait "$suite_pid" || suite_status=$?
  echo "ThreadSanitizer: the suite's run (AllPresets), exit status $suite_status:"
  cat "$suite_log"
  rm -f "$suite_log"
  if [ "$ctest_status" != 0 ] || [ "$suite_status" != 0 ]; then exit 1; fi

  stage "fuzzing: the scenario parser and the results readers (clang, ASan + UBSan)"
  "$root/scripts/fuzz.sh"
fi
