// The runner with a fake executor: files per scenario, run.json, failures that stop the run
// without losing what was measured.
#include "scenarios/suite_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenarios/presets.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

class FakeExecutor : public ScenarioExecutor {
 public:
  std::vector<std::string> ran;
  std::vector<RunSettings> settings_seen;
  std::string fail_setup_of, fail_midway_of;

  Result<ScenarioTimeline> run(const Scenario& s, const RunSettings& settings,
                               const ProgressCallback& progress) override {
    ran.push_back(s.name);
    settings_seen.push_back(settings);
    if (s.name == fail_setup_of)
      return Error{"priority refused", -1000174001, "VK_ERROR_NOT_PERMITTED_KHR"};
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
    for (const char* file : {"records.csv", "summary.csv", "meta.json"})
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
  EXPECT_TRUE(fs::exists(options_.out_directory / "default" / "records.csv"));
  EXPECT_FALSE(fs::exists(options_.out_directory / "high-priority-compute"));
  const auto run = read_json(options_.out_directory / "run.json");
  EXPECT_EQ(run["scenarios"][1]["status"], "failed");
  EXPECT_EQ(run["failure"]["api_code_name"], "VK_ERROR_NOT_PERMITTED_KHR");
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
  std::ifstream records(options_.out_directory / "default" / "records.csv");
  std::string all((std::istreambuf_iterator<char>(records)), {});
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
