#!/usr/bin/env bash
# Fuzzing as a test: builds the libFuzzer targets of tests/fuzz with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, runs each for FUZZ_SECONDS (default 60) from its committed seed
# corpus (plus the presets, for the scenario parser), both at once, and fails on any crash,
# sanitizer report, leak or input slower than 10 s. Prints the executions each one ran.
# A crashing input is kept as build-fuzz/artifacts/<target>-crash-*: reproduce with
#   build-fuzz/tests/fuzz/<target> build-fuzz/artifacts/<target>-crash-...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
build="$root/build-fuzz"

EXTRA_PACKAGES="clang libclang-rt-14-dev" CC=clang CXX=clang++ BUILD_TYPE=Debug \
  TARGETS="scenario_fuzzer results_fuzzer" "$root/scripts/setup.sh" "$build" \
  -DGPUOVERLAP_TESTS=OFF -DGPUOVERLAP_FUZZ=ON -DGPUOVERLAP_SANITIZE=address,undefined

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/artifacts"
# run_fuzzer TARGET "FLAGS" SEED_FOLDER...: libFuzzer writes what it finds into the FIRST
# corpus folder, so that is a scratch one; the committed seeds are only read.
run_fuzzer() {
  local target=$1 flags=$2
  shift 2
  mkdir -p "$work/$target"
  # shellcheck disable=SC2086 # flags is a list
  "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" $flags \
    "$work/$target" "$@" >"$work/$target.log" 2>&1
}
status=0
run_fuzzer scenario_fuzzer "-dict=$root/tests/fuzz/scenario.dict -max_len=8192" \
  "$root/tests/fuzz/corpus/scenario" "$root/scenarios/presets" &
scenario_pid=$!
run_fuzzer results_fuzzer "-max_len=16384" "$root/tests/fuzz/corpus/results" &
results_pid=$!
wait "$scenario_pid" || status=1
wait "$results_pid" || status=1

for target in scenario_fuzzer results_fuzzer; do
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log")
  coverage=$(grep -o 'cov: [0-9]*' "$work/$target.log" | tail -1 || true)
  corpus=$(find "$work/$target" -type f | wc -l)
  echo "fuzz: $target: ${executions:-?} executions in ${seconds} s, ${coverage:-cov: ?} edges, $corpus new inputs"
  if grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: " \
    "$work/$target.log"; then
    status=1
    echo "fuzz: $target FAILED; the end of its log:" >&2
    tail -40 "$work/$target.log" >&2
  fi
done
exit "$status"
