// `gpuoverlap selftest`: the measurement measured. Runs purpose-built scenarios through any
// ScenarioExecutor and checks the tool's own clocks, resolution and overhead against
// documented tolerances (docs/selftest.md). API neutral: the executor is injected, so the
// checks are unit-tested with synthetic timelines.
//
// Checks, each one or more rows of selftest.csv:
//   linearity        duration against iterations (1 group) and against groups (fixed
//                    iterations): least-squares fit and R^2; the groups fit uses the points
//                    past saturation (where the GPU is full), which it reports.
//   clock_agreement  workloads sized to 0.1, 1 and 10 ms (from the iterations fit): start,
//                    end and duration differences between poll, timestamp and shader clock.
//   poll_detection   shader clock value written with a stamp against the CPU time at which
//                    the poller saw it, with uncached and cached stamp memory.
//   round_trip       host-GPU flag ping-pong, uncached and cached memory, and the round trip
//                    through a host-signalled timeline semaphore.
//   overhead         the 1 ms workload with and without stamping, timestamp durations.
//   ordering         a chain of dependent workloads never overlaps on any clock.
//   neutrality       the negative control (idle-priority threads on every CPU the game frame
//                    uses) is not called intrusive against the baseline, 3 rounds.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/executor.h"
#include "engine/suite_runner.h"

namespace gpuoverlap {

struct SelftestOptions {
  std::filesystem::path out_directory;  // selftest.csv, and every measurement under runs/
  std::uint32_t frames = 30;            // measured frames per measurement
  std::uint32_t warmup_frames = 3;
  std::uint32_t frame_timeout_ms = kDefaultFrameTimeoutMs;
  std::uint32_t ping_pong_rounds = 1000;
  // Sweeps stop growing a workload once its duration reaches this (keeps lavapipe bounded).
  double sweep_cap_us = 20'000;
  std::function<bool()> should_stop;
  PollerPlacement poller;  // where the stamp poller runs (queues/poller_placement.h)
  // The device is a CPU (lavapipe): its timing checks are limited by it (limit_for_cpu_device).
  bool cpu_device = false;
  // A fault injected on purpose, to show the self-test fails on one: every poll end stamp is
  // moved this many µs later after the measurement, unflagged (its window unchanged), as a
  // poller that stamped late without noticing would. 0: none. Never set by a real run.
  double injected_end_delay_us = 0;
};

// pass and fail against the documented tolerance; limited: the figure is past its target, but
// the data cannot say the tool is at fault: the target lies inside the figure's 95 % interval,
// or a cause of the host or device is measured and named and the affected stamps are flagged
// (docs/selftest.md, "Pass, fail, limited"). Only fail fails the self-test.
enum class Verdict { pass, fail, limited, not_applicable, info };
std::string_view to_string(Verdict verdict);

struct CheckRow {
  std::string check;   // linearity, clock_agreement, poll_detection, ...
  std::string metric;  // what was measured, e.g. "start |poll-ts| p50"
  std::string clock;   // the clock or clock pair, e.g. "poll-clk"
  std::string config;  // the configuration, e.g. "1ms", "uncached"
  std::optional<double> value;
  std::string unit;
  std::string target;  // the documented tolerance, e.g. "<= 2"; empty for info rows
  Verdict verdict = Verdict::info;
  std::string detail;  // sample count, fit, or why a check does not apply
};

struct SelftestOutcome {
  std::vector<CheckRow> rows;
  std::optional<Error> failure;  // a measurement that could not run at all
  bool passed() const;           // no failed row and no failure; limited rows do not fail
  std::size_t limited() const;   // rows limited by this host or device
};

SelftestOutcome run_selftest(ScenarioExecutor& executor, const SelftestOptions& options,
                             std::ostream& log);

std::string selftest_csv(const std::vector<CheckRow>& rows);
std::string selftest_table(const std::vector<CheckRow>& rows);

// --- the checks on measured data, exposed for the unit tests ----------------------------------

// A figure with an upper target and its 95 % interval's low end: pass within the target; limited
// where the target lies inside the interval (the data cannot say the figure is over it); fail
// where the whole interval is beyond it, or there is no interval to say.
Verdict judge_upper(double value, std::optional<double> interval_low, double target);

// A CPU device (a software rasteriser on a shared, loaded CPU): its timings are the CPU
// scheduler's, so a failed timing row (linearity, clock agreement, poll detection, overhead,
// and neutrality, whose frames wait on the device's threads) becomes limited by this device,
// the reason added to its detail. Ordering and round trips stay as judged: a dependent
// workload that overlaps its producer is a fault on any device.
void limit_for_cpu_device(std::vector<CheckRow>& rows);

// "poll_detection p50 undisturbed (uncached): <detail>" for each limited row: what limits it
// and what would lift it, one line each.
std::vector<std::string> limit_lines(const std::vector<CheckRow>& rows);

// One point of a sweep: the x value and the median duration (µs) over the frames.
struct SweepPoint {
  double x = 0;
  double duration_us = 0;
};
// The first point from which every doubling of x grows the duration by at least 1.3x: where
// the GPU is full and more work queues up. nullopt when the sweep never saturates.
std::optional<std::size_t> saturation_index(const std::vector<SweepPoint>& points);

// The poll_detection rows of one stamp-memory configuration, from its timeline with its
// stamps' disturbance marked (clock_agreement.h, mark_poll_disturbance): the detection latency
// (poll time minus the shader clock written with the stamp) of the undisturbed stamps against
// the precision targets; the disturbed share against its own target, with the likely cause
// named when it fails (the host's steal, a poller without a core of its own, or one preempted
// on its core, or one interrupted there with its priority raised); the p99 of every stamp and
// the steal and the interrupts on a pinned poller's CPU as information. `steal`: the host's
// steal over the measurement as a fraction (nullopt: unknown); `poller`: where the poller ran;
// `interrupts_per_s`: on its CPU during the measurement (nullopt: unpinned or unknown), which
// names the cause of a pinned poller's disturbances.
std::vector<CheckRow> detection_rows(const ScenarioTimeline& timeline, const std::string& config,
                                     std::optional<double> steal, const PollerPlacement& poller,
                                     std::optional<double> interrupts_per_s = std::nullopt);

// How every self-test measurement runs (keeping it under OUT/runs/, no run.json, the poller
// placed as asked, priorities falling back); the caller sets frames where it needs its own.
SuiteOptions selftest_suite_options(const SelftestOptions& options);

// The neutrality row (selftest/neutrality.cpp): the negative control (idle-priority threads on
// every CPU the game frame uses) judged against the baseline as a study judges it, three
// interleaved rounds of game-frame. fail when it is called intrusive: the harness disturbs the
// frames it measures (docs/background.md, "The harness while frames are measured").
Result<CheckRow> neutrality_row(ScenarioExecutor& executor, const SelftestOptions& options);

// Ordering violations in a timeline: a consumer that starts before its producer ends, on
// `clock` (a pair of rows without it counts as none).
std::size_t ordering_violations(const ScenarioTimeline& timeline, const Scenario& scenario,
                                Clock clock);

}  // namespace gpuoverlap
