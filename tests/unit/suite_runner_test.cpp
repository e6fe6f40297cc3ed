// The runner with a fake executor: files per scenario, run.json, failures that stop the run
// without losing what was measured.
#include "engine/suite_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/input_file.h"
#include "scenarios/cpu_device_sizes.h"
#include "scenarios/presets.h"
#include "scenarios/suite_estimate.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

class FakeExecutor : public ScenarioExecutor {
 public:
  std::vector<std::string> ran;
  std::vector<RunSettings> settings_seen;
  std::vector<Scenario> scenarios_seen;
  std::string fail_setup_of, fail_midway_of, unsupported_by;
  double frame_interval_us = 100'000;  // a game frame's, each frame after the first

  Result<ScenarioTimeline> run(const Scenario& s, const RunSettings& settings,
                               const ProgressCallback& progress) override {
    ran.push_back(s.name);
    settings_seen.push_back(settings);
    scenarios_seen.push_back(s);
    if (s.name == fail_setup_of)
      return Error{"priority refused", -1000174001, "VK_ERROR_NOT_PERMITTED_KHR"};
    if (s.name == unsupported_by)
      return Error{"enhanced barriers: unsupported by this runtime (E_NOTIMPL)",
                   static_cast<std::int32_t>(0x80004001), "E_NOTIMPL", ErrorCategory::unsupported};
    ScenarioTimeline t;
    t.meta["device"] = {{"name", "fake"}};
    for (std::uint32_t f = 0; f < settings.frames; ++f)
      for (std::size_t w = 0; w < s.workloads.size(); ++w)
        t.records.push_back({.frame = f,
                             .workload = w,
                             .poll_start_us = 1.0,
                             .poll_end_us = 2.0,
                             .ts_start_us = 1.0,
                             .ts_end_us = 2.0});
    if (s.cpu)
      for (std::uint32_t f = 0; f < settings.frames; ++f)
        t.frames.push_back(
            {.frame = f,
             .frame_interval_us = f > 0 ? std::optional(frame_interval_us) : std::nullopt});
    if (s.name == fail_midway_of) {
      t.records.back().status = RecordStatus::timeout;
      t.failure = make_error("the GPU did not finish frame 1");
    }
    if (progress)
      progress(settings.warmup_frames + settings.frames, settings.warmup_frames + settings.frames);
    return t;
  }
};

std::vector<Scenario> load(std::initializer_list<const char*> names) {
  std::vector<Scenario> out;
  for (const char* n : names) out.push_back(*resolve_scenario(n));
  return out;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

class SuiteRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.out_directory = fs::temp_directory_path() /
                             ("gpuoverlap-suite-" + std::to_string(::getpid()) + "-" +
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(options_.out_directory);
    options_.command_line = "gpuoverlap run test";
  }
  void TearDown() override { fs::remove_all(options_.out_directory); }
  SuiteOptions options_;
  FakeExecutor executor_;
  std::ostringstream log_;
};

TEST_F(SuiteRunner, WritesEveryScenarioAndRunJson) {
  options_.frames = 3;
  options_.warmup_frames = 1;
  const auto outcome = run_suite(executor_, load({"default", "three-dispatches"}), options_, log_);
  ASSERT_FALSE(outcome.failure.has_value());
  EXPECT_EQ(executor_.ran, (std::vector<std::string>{"default", "three-dispatches"}));
  EXPECT_EQ(executor_.settings_seen[0].frames, 3u);
  EXPECT_EQ(executor_.settings_seen[0].warmup_frames, 1u);
  for (const char* name : {"default", "three-dispatches"})
    for (const char* file : {"records.csv.gz", "summary.csv", "meta.json"})
      EXPECT_TRUE(fs::exists(options_.out_directory / name / file)) << name << "/" << file;
  const auto meta = read_json(options_.out_directory / "default" / "meta.json");
  EXPECT_EQ(meta["device"]["name"], "fake");
  EXPECT_EQ(meta["scenario"]["workloads"].size(), 8u);
  EXPECT_EQ(meta["settings"]["frames"], 3);
  EXPECT_EQ(meta["command_line"], "gpuoverlap run test");
  EXPECT_TRUE(meta.contains("tool"));
  const auto run = read_json(options_.out_directory / "run.json");
  EXPECT_EQ(run["scenarios"].size(), 2u);
  EXPECT_EQ(run["scenarios"][1]["status"], "ok");
  const std::string table = summary_table(outcome);
  EXPECT_NE(table.find("Compute Queue C"), std::string::npos);
}

// A study's rounds are written three levels deep; run.json must name each directory from the
// results root, or report and compare cannot find them (they read "round-1" at the top).
TEST_F(SuiteRunner, RunJsonNamesNestedDirectoriesFromTheResultsRoot) {
  options_.frames = 1;
  auto study = resolve_scenarios("non-intrusiveness");
  ASSERT_TRUE(static_cast<bool>(study));
  std::vector<Scenario> scenarios(study->begin(), study->begin() + 2);
  scenarios.push_back(*resolve_scenario("default"));
  for (Scenario& s : scenarios) s.background.reset();  // the fake executor runs no compiles
  const auto outcome = run_suite(executor_, scenarios, options_, log_);
  ASSERT_FALSE(outcome.failure.has_value());
  const auto run = read_json(options_.out_directory / "run.json");
  ASSERT_EQ(run["scenarios"].size(), 3u);
  EXPECT_EQ(run["scenarios"][0]["directory"], "non-intrusiveness/baseline/round-1");
  EXPECT_EQ(run["scenarios"][1]["directory"], "non-intrusiveness/null/round-1");
  EXPECT_EQ(run["scenarios"][2]["directory"], "default");
  for (const auto& entry : run["scenarios"]) {
    EXPECT_TRUE(
        fs::exists(options_.out_directory / entry["directory"].get<std::string>() / "meta.json"));
    EXPECT_TRUE(entry["seconds"].is_number());
    EXPECT_TRUE(entry["write_seconds"].is_number());
  }
}

TEST_F(SuiteRunner, ProgressLinesSayElapsedAndTimeLeft) {
  options_.frames = 2;
  (void)run_suite(executor_, load({"default", "no-barriers", "three-dispatches"}), options_, log_);
  const std::string log = log_.str();
  // No estimate before anything has run; from the second scenario on, elapsed and left.
  EXPECT_NE(log.find("[1/3] default: 10 warm-up + 2 frames\n"), std::string::npos) << log;
  EXPECT_NE(log.find("[2/3] no-barriers: 10 warm-up + 2 frames ("), std::string::npos) << log;
  EXPECT_NE(log.find(" left)\n"), std::string::npos) << log;
}

TEST(SuiteEstimate, LearnsTheCostPerFrameAndPredictsPreemptionFromItsDuration) {
  std::vector<Scenario> scenarios = {*resolve_scenario("default"), *resolve_scenario("default"),
                                     resolve_scenarios("preemption-slow-shader-normal")->front()};
  SuiteEstimate estimate(scenarios, {{.warmup = 10, .measured = 90}, {.measured = 50}, {}});
  EXPECT_FALSE(estimate.remaining_s(0).has_value());  // nothing seen of frame scenarios yet
  estimate.finished(0, 10.0);                         // 0.1 s per frame
  // 50 frames at 0.1 s, and 3 s of urgent jobs + (3 baseline + 3 calibration) x 100 ms.
  EXPECT_NEAR(*estimate.remaining_s(1), 5.0 + 3.6, 1e-9);
  estimate.finished(1, 5.0);
  EXPECT_NEAR(*estimate.remaining_s(2), 3.6, 1e-9);
  estimate.finished(2, 7.2);  // twice the prediction: later preemption estimates double
  EXPECT_NEAR(*estimate.remaining_s(2), 7.2, 1e-9);
  EXPECT_EQ(*estimate.remaining_s(3), 0.0);
}

// A paced frame (a game frame) costs its frames times its period, a study round at most its
// round_ms of measured frames; an undecided study may take its whole budget.
TEST(SuiteEstimate, PredictsPacedFramesAndBoundsAStudyByItsBudget) {
  auto study = resolve_scenarios("non-intrusiveness");
  ASSERT_TRUE(study.ok()) << study.error().message;
  std::vector<Scenario> scenarios(study->begin(), study->begin() + 2);
  ASSERT_TRUE(scenarios[0].cpu && scenarios[0].cpu->frame_period_ms > 0);
  const double period_ms = scenarios[0].cpu->frame_period_ms;
  for (Scenario& s : scenarios) {
    s.study_budget_s = 100;
    s.study_round_ms = 0;
  }
  scenarios[1].study_round_ms = static_cast<std::uint32_t>(10 * period_ms);  // 10 of 50 frames
  SuiteEstimate estimate(scenarios,
                         {{.warmup = 10, .measured = 50}, {.warmup = 10, .measured = 50}});
  // Nothing seen yet: the prediction itself, 60 and 20 periods.
  EXPECT_NEAR(*estimate.remaining_s(0), (60 + 20) * period_ms / 1000, 1e-9);
  // The budget bounds the study: 100 s in all, none of it spent.
  EXPECT_NEAR(*estimate.remaining_at_most_s(0), 100, 1e-9);
  estimate.finished(0, 2 * 60 * period_ms / 1000);  // twice the prediction: later ones double
  EXPECT_NEAR(*estimate.remaining_s(1), 2 * 20 * period_ms / 1000, 1e-9);
  EXPECT_NEAR(*estimate.remaining_at_most_s(1), 100 - 2 * 60 * period_ms / 1000, 1e-9);
  // Without a budget the bound is the estimate.
  for (Scenario& s : scenarios) s.study_budget_s = 0;
  SuiteEstimate unbudgeted(scenarios, {{.warmup = 10, .measured = 50}, {.measured = 50}});
  EXPECT_EQ(*unbudgeted.remaining_at_most_s(0), *unbudgeted.remaining_s(0));
}

// The --out space check: a plain scenario's frames count (Scenario::rounds is 0 outside a
// study and once zeroed them, so a 5000-frame run passed a 6 MiB disk).
TEST(SuiteEstimate, ResultsBytesGrowWithFramesAndWorkloads) {
  auto s = resolve_scenario("three-dispatches");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Scenario small = *s, large = *s;
  small.frames = 10;
  small.warmup_frames = 0;
  large.frames = 5000;
  large.warmup_frames = 0;
  const std::uint64_t base = estimated_results_bytes({});
  const std::uint64_t per_frame =
      (estimated_results_bytes({large}) - estimated_results_bytes({small})) / 4990;
  EXPECT_EQ(per_frame, 1024u * s->workloads.size());
  EXPECT_GT(estimated_results_bytes({small}), base);
  EXPECT_EQ(estimated_results_bytes({small, small}) - base,
            2 * (estimated_results_bytes({small}) - base));
}

TEST(SuiteEstimate, FormatsDurations) {
  EXPECT_EQ(format_duration(42.4), "42 s");
  EXPECT_EQ(format_duration(190), "3 min 10 s");
  EXPECT_EQ(format_duration(3900), "1 h 5 min");
  EXPECT_EQ(format_duration(-1), "0 s");
}

// run --all: each configuration once. The twelve preemption-<load>-<priority> presets are the
// configurations of preemption-matrix and run only inside it.
TEST(PresetSuite, RunsEachConfigurationOnce) {
  auto suite = suite_scenarios();
  ASSERT_TRUE(static_cast<bool>(suite)) << suite.error().message;
  EXPECT_EQ(suite->covered.size(), 12u);
  std::set<std::string> configurations, names;
  std::size_t preemption = 0;
  for (const Scenario& s : suite->scenarios) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    if (!s.preemption) continue;
    ++preemption;
    EXPECT_EQ(s.name.rfind("preemption-matrix/", 0), 0u) << s.name;
    EXPECT_TRUE(configurations.insert(preemption::to_json(*s.preemption).dump()).second)
        << s.name << " runs a configuration twice";
  }
  EXPECT_EQ(preemption, 12u);
  for (const char* kept : {"default", "barrier-cost", "non-intrusiveness/baseline/round-1"})
    EXPECT_TRUE(names.count(kept)) << kept;
  EXPECT_FALSE(names.count("preemption-big-dispatch-high"));
}

TEST(CpuDeviceSizes, LowersWhatTheUserDidNotSet) {
  std::vector<Scenario> scenarios = {*resolve_scenario("default"),
                                     resolve_scenarios("preemption-slow-shader-normal")->front()};
  auto study = resolve_scenarios("non-intrusiveness");
  scenarios.push_back(study->front());
  const SizeProfile profile = apply_cpu_device_sizes(scenarios, {});
  EXPECT_EQ(scenarios[0].frames, 20u);
  EXPECT_EQ(scenarios[0].warmup_frames, 3u);
  EXPECT_EQ(scenarios[1].preemption->duration_ms, 1000);
  EXPECT_EQ(scenarios[1].preemption->target_ms, 50);
  EXPECT_EQ(scenarios[2].frames, 40u);  // 120 per condition over 3 rounds
  EXPECT_EQ(profile.meta["profile"], "cpu-device");
  EXPECT_EQ(profile.meta["scenarios_lowered"], 3);
  EXPECT_NE(profile.log_line.find("CPU device"), std::string::npos);

  std::vector<Scenario> given = {*resolve_scenario("default"),
                                 resolve_scenarios("preemption-slow-shader-normal")->front()};
  given[0].frames = 500;  // as --frames 500 leaves it
  const SizeProfile kept = apply_cpu_device_sizes(
      given, {.frames = true, .warmup = true, .duration_ms = true, .target_ms = true});
  EXPECT_EQ(given[0].frames, 500u);
  EXPECT_EQ(given[0].warmup_frames, 10u);
  EXPECT_EQ(given[1].preemption->duration_ms, 3000);
  EXPECT_EQ(kept.meta["scenarios_lowered"], 0);
  EXPECT_TRUE(kept.log_line.empty());

  // Never raised: a scenario already smaller keeps its size.
  std::vector<Scenario> small = {*resolve_scenario("default")};
  small[0].frames = 5;
  (void)apply_cpu_device_sizes(small, {});
  EXPECT_EQ(small[0].frames, 5u);
}

TEST(CpuDeviceSizes, PeriodIsTheUnpacedMedianWithHeadroom) {
  EXPECT_FALSE(cpu_device_period({100'000, 100'000, 100'000, 100'000}, 8))
      << "four intervals are too few";
  const auto period = cpu_device_period({90'000, 100'000, 101'000, 250'000, 99'000, 100'500}, 8);
  ASSERT_TRUE(period.has_value());
  EXPECT_DOUBLE_EQ(period->unpaced_interval_p50_ms, 100.25);
  EXPECT_EQ(period->period_ms, 116) << "1.15 x 100.25 ms, rounded up to a millisecond";
  EXPECT_EQ(period->intervals, 6u);
  EXPECT_EQ(cpu_device_period({1000, 1000, 1000, 1000, 1000}, 8)->period_ms, 8)
      << "never shorter than the file's period";
}

// On a CPU device a study's paced game frame runs at the period its baseline sustains: one
// unwritten calibration run of the baseline, unpaced and without background work, before the
// study's first condition; every condition and round after it at the period, recorded.
TEST_F(SuiteRunner, CpuDevicePacingCalibratesOncePerStudy) {
  options_.frames = 3;
  options_.warmup_frames = 1;
  options_.cpu_device_pacing = true;
  std::vector<Scenario> study = *resolve_scenarios("non-intrusiveness");
  // The managed condition first: the calibration still runs the baseline.
  std::swap(study[0], study[3]);
  ASSERT_EQ(study.front().name, "non-intrusiveness/managed/round-1");
  const auto outcome = run_suite(executor_, study, options_, log_);
  ASSERT_FALSE(outcome.failure.has_value());
  ASSERT_EQ(executor_.scenarios_seen.size(), study.size() + 1);
  const Scenario& probe = executor_.scenarios_seen.front();
  EXPECT_EQ(probe.name, "non-intrusiveness/baseline/round-1");
  EXPECT_FALSE(probe.background.has_value());
  EXPECT_EQ(probe.cpu->frame_period_ms, 0) << "unpaced";
  EXPECT_EQ(executor_.settings_seen.front().frames, kCpuDevicePeriodCalibrationFrames);
  EXPECT_EQ(outcome.scenarios.size(), study.size()) << "the calibration run is not a result";
  for (std::size_t i = 1; i < executor_.scenarios_seen.size(); ++i) {
    const Scenario& ran = executor_.scenarios_seen[i];
    SCOPED_TRACE(ran.name);
    EXPECT_EQ(ran.cpu->frame_period_ms, 115) << "1.15 x 100 ms";
    ASSERT_TRUE(ran.cpu->period_calibration.has_value());
    EXPECT_EQ(ran.cpu->period_calibration->period_ms_in_file, 8);
    EXPECT_EQ(ran.cpu->period_calibration->unpaced_interval_p50_ms, 100);
    EXPECT_EQ(ran.cpu->period_calibration->from, "non-intrusiveness/baseline/round-1");
  }
  // The outcomes keep the scenarios as they ran: the verdict's period is the calibrated one
  // (meta.json's cpu, written by the frame loop, is the integration tests' to check).
  for (const ScenarioOutcome& o : outcome.scenarios)
    EXPECT_EQ(o.scenario.cpu->frame_period_ms, 115);
  EXPECT_NE(log_.str().find("non-intrusiveness: the device is the CPU: paced at 115 ms"),
            std::string::npos)
      << log_.str();

  // Off (a GPU, or --full-size), the files' period and no calibration run.
  FakeExecutor plain;
  options_.cpu_device_pacing = false;
  (void)run_suite(plain, study, options_, log_);
  ASSERT_EQ(plain.scenarios_seen.size(), study.size());
  for (const Scenario& ran : plain.scenarios_seen) {
    EXPECT_EQ(ran.cpu->frame_period_ms, 8);
    EXPECT_FALSE(ran.cpu->period_calibration.has_value());
  }
}

TEST_F(SuiteRunner, ScenarioFramesAreUsedWithoutOverride) {
  (void)run_suite(executor_, load({"three-dispatches"}), options_, log_);
  EXPECT_EQ(executor_.settings_seen.at(0).frames, 100u);
  EXPECT_EQ(executor_.settings_seen.at(0).warmup_frames, 10u);
}

TEST_F(SuiteRunner, SetupFailureStopsTheRunKeepingEarlierResults) {
  options_.frames = 2;
  executor_.fail_setup_of = "high-priority-compute";
  const auto outcome = run_suite(
      executor_, load({"default", "high-priority-compute", "no-barriers"}), options_, log_);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_NE(outcome.failure->message.find("high-priority-compute"), std::string::npos);
  EXPECT_EQ(outcome.failure->api_code_name, "VK_ERROR_NOT_PERMITTED_KHR");
  EXPECT_EQ(executor_.ran.size(), 2u);  // no-barriers never ran
  EXPECT_TRUE(fs::exists(options_.out_directory / "default" / "records.csv.gz"));
  EXPECT_FALSE(fs::exists(options_.out_directory / "high-priority-compute"));
  const auto run = read_json(options_.out_directory / "run.json");
  EXPECT_EQ(run["scenarios"][1]["status"], "failed");
  EXPECT_EQ(run["failure"]["api_code_name"], "VK_ERROR_NOT_PERMITTED_KHR");
}

// A feature the runtime lacks, refused before any GPU work, leaves the device intact: the
// scenario is recorded as unsupported with its reason and the suite runs on.
TEST_F(SuiteRunner, AnUnsupportedScenarioIsRecordedAndTheRestRuns) {
  options_.frames = 2;
  executor_.unsupported_by = "three-dispatches-enhanced";
  const auto outcome = run_suite(
      executor_, load({"three-dispatches-enhanced", "three-dispatches-legacy"}), options_, log_);
  EXPECT_FALSE(outcome.failure.has_value());
  EXPECT_EQ(executor_.ran.size(), 2u);
  ASSERT_EQ(outcome.scenarios.size(), 2u);
  EXPECT_TRUE(outcome.scenarios[0].unsupported());
  EXPECT_FALSE(outcome.scenarios[1].failure.has_value());
  EXPECT_FALSE(fs::exists(options_.out_directory / "three-dispatches-enhanced"));
  EXPECT_TRUE(fs::exists(options_.out_directory / "three-dispatches-legacy" / "records.csv.gz"));
  const auto run = read_json(options_.out_directory / "run.json");
  EXPECT_EQ(run["scenarios"][0]["status"], "unsupported");
  EXPECT_EQ(run["scenarios"][0]["failure"]["api_code_name"], "E_NOTIMPL");
  EXPECT_EQ(run["scenarios"][1]["status"], "ok");
  EXPECT_TRUE(run["failure"].is_null());
  EXPECT_NE(log_.str().find("three-dispatches-enhanced: unsupported by this runtime, skipped: "
                            "enhanced barriers: unsupported by this runtime (E_NOTIMPL)"),
            std::string::npos)
      << log_.str();
  EXPECT_NE(summary_table(outcome).find("three-dispatches-enhanced (unsupported)"),
            std::string::npos);
}

TEST_F(SuiteRunner, MidRunTimeoutIsWrittenThenReported) {
  options_.frames = 2;
  executor_.fail_midway_of = "default";
  const auto outcome = run_suite(executor_, load({"default", "no-barriers"}), options_, log_);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(executor_.ran.size(), 1u);
  const auto meta = read_json(options_.out_directory / "default" / "meta.json");
  EXPECT_NE(meta["failure"]["message"].get<std::string>().find("did not finish"),
            std::string::npos);
  const auto all =
      read_input_text(options_.out_directory / "default" / "records.csv.gz", 1u << 30).value();
  EXPECT_NE(all.find(",timeout,"), std::string::npos);
}

TEST_F(SuiteRunner, UnwritableOutputIsAFailure) {
  options_.out_directory = "/proc/gpuoverlap-cannot-write-here";
  const auto outcome = run_suite(executor_, load({"default"}), options_, log_);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_TRUE(executor_.ran.empty());
}

}  // namespace
}  // namespace gpuoverlap
