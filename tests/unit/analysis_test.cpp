#include <gtest/gtest.h>

#include "analysis/answers.h"
#include "analysis/bootstrap.h"
#include "analysis/compare.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "core/atomic_file.h"
#include "scenarios/scenario.h"
#include "temp_dir.h"
#include "timeline/export.h"
#include "timeline/records.h"
#include "timeline/statistics.h"

namespace gpuoverlap {
namespace {

// A scenario of two workloads, B depending on A, with per-frame durations given.
LoadedScenario synthetic(const std::string& name, double a_duration, double b_duration, int frames,
                         double jitter = 0.5) {
  LoadedScenario s;
  s.name = name;
  s.workloads = {"A", "B"};
  s.meta_json = {{"scenario", {{"name", name}, {"description", "synthetic"}}},
                 {"device", {{"name", "Test GPU"}, {"driver_name", "test"}}},
                 {"queues", nlohmann::json::array({{{"name", "direct"},
                                                    {"type", "direct"},
                                                    {"family", 0},
                                                    {"family_flags", "GRAPHICS|COMPUTE"},
                                                    {"queue_index", 0},
                                                    {"priority_requested", "normal"},
                                                    {"priority_granted", "normal"}}})}};
  read_meta(s);
  for (int f = 0; f < frames; ++f) {
    const double wobble = jitter * ((f * 7919) % 11 - 5) / 5.0;  // deterministic noise
    RecordRow a{static_cast<std::uint32_t>(f),
                "A",
                "direct",
                QueueType::direct,
                QueuePriority::normal,
                WorkloadKind::compute,
                {},
                {},
                "",
                "none",
                RecordStatus::ok,
                10.0 + wobble,
                10.0 + a_duration + wobble,
                {},
                {}};
    RecordRow b{static_cast<std::uint32_t>(f),
                "B",
                "direct",
                QueueType::direct,
                QueuePriority::normal,
                WorkloadKind::compute,
                {},
                {},
                "A",
                "legacy",
                RecordStatus::ok,
                a.poll_end_us.value() + 3.0,
                a.poll_end_us.value() + 3.0 + b_duration + wobble,
                {},
                {}};
    s.records.push_back(a);
    s.records.push_back(b);
  }
  return s;
}

LoadedRun run_of(LoadedScenario s) {
  LoadedRun r;
  r.directory = "/tmp/synthetic";
  r.scenarios.push_back(std::move(s));
  return r;
}

TEST(Metrics, StartEndDurationAndGapPerWorkload) {
  const auto series = metric_series(synthetic("s", 50, 20, 5, 0.0), Clock::poll);
  ASSERT_EQ(series.size(), 7u);  // A: 3, B: 3 + gap
  EXPECT_EQ(series[2].metric, "duration");
  EXPECT_DOUBLE_EQ(series[2].values_us[0], 50.0);
  const auto& gap = series[6];
  EXPECT_EQ(gap.metric, "gap");
  EXPECT_EQ(gap.producer, "A");
  EXPECT_EQ(gap.barrier, "legacy");
  EXPECT_DOUBLE_EQ(gap.values_us[0], 3.0);
  EXPECT_TRUE(metric_series(synthetic("s", 50, 20, 5), Clock::ts).empty());  // no ts values
}

// On the poll clock a disturbed stamp's frame is left out of what rests on it and counted:
// a late consumer start never reads as a slow barrier. Other clocks keep every frame.
TEST(Metrics, DisturbedPollStampsAreLeftOutOfWhatRestsOnThem) {
  LoadedScenario s = synthetic("s", 50, 20, 5, 0.0);
  s.records[3].poll_disturbed = kPollStartDisturbed;  // frame 1, B's start
  s.records[4].poll_disturbed = kPollEndDisturbed;    // frame 2, A's end
  const auto series = metric_series(s, Clock::poll);
  ASSERT_EQ(series.size(), 7u);
  auto find = [&](const std::string& workload, const std::string& metric) {
    for (const MetricSeries& m : series)
      if (m.workload == workload && m.metric == metric) return &m;
    return static_cast<const MetricSeries*>(nullptr);
  };
  EXPECT_EQ(find("A", "start")->values_us.size(), 5u);
  EXPECT_EQ(find("A", "end")->values_us.size(), 4u);
  EXPECT_EQ(find("A", "end")->disturbed_frames, 1u);
  EXPECT_EQ(find("A", "duration")->values_us.size(), 4u);
  EXPECT_EQ(find("B", "start")->values_us.size(), 4u);
  EXPECT_EQ(find("B", "duration")->disturbed_frames, 1u);
  const MetricSeries* gap = find("B", "gap");
  EXPECT_EQ(gap->values_us.size(), 3u) << "B's start in frame 1 and A's end in frame 2";
  EXPECT_EQ(gap->disturbed_frames, 2u);
}

TEST(Bootstrap, IntervalContainsTheTrueShiftAndExcludesZero) {
  std::vector<double> base, shifted;
  for (int i = 0; i < 60; ++i) {
    base.push_back(100.0 + (i % 7));
    shifted.push_back(120.0 + (i % 7));
  }
  const Interval i = bootstrap_percentile_difference(base, shifted, 50);
  EXPECT_LE(i.low, 20.0);
  EXPECT_GE(i.high, 20.0);
  EXPECT_GT(i.low, 0.0);
  const Interval same = bootstrap_percentile_difference(base, base, 50);
  EXPECT_LE(same.low, 0.0);
  EXPECT_GE(same.high, 0.0);
  // Deterministic: the same inputs give the same interval.
  const Interval again = bootstrap_percentile_difference(base, shifted, 50);
  EXPECT_EQ(i.low, again.low);
  EXPECT_EQ(i.high, again.high);
}

TEST(Compare, IdenticalRunsPass) {
  const auto r =
      compare_runs(run_of(synthetic("s", 50, 20, 30)), run_of(synthetic("s", 50, 20, 30)), {});
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.unmatched.empty());
  EXPECT_EQ(r.rows.size(), 7u);
  for (const auto& row : r.rows)
    EXPECT_EQ(row.outcome, CompareOutcome::ok) << row.workload << " " << row.metric;
}

TEST(Compare, ARealSlowdownIsCaughtAndNamed) {
  const auto r =
      compare_runs(run_of(synthetic("s", 50, 20, 30)), run_of(synthetic("s", 50, 40, 30)), {});
  EXPECT_TRUE(r.changed);
  bool b_duration_slower = false;
  for (const auto& row : r.rows) {
    if (row.workload == "A") {
      EXPECT_EQ(row.outcome, CompareOutcome::ok) << row.metric;
    }
    if (row.workload == "B" && row.metric == "duration")
      b_duration_slower = row.outcome == CompareOutcome::slower;
  }
  EXPECT_TRUE(b_duration_slower);
  const std::string table = compare_table(r, {});
  EXPECT_NE(table.find("CHANGED: slower"), std::string::npos);
}

TEST(Compare, ChangesWithinTheThresholdOrTheNoisePass) {
  // 4% slower B: below the 10% threshold.
  EXPECT_FALSE(
      compare_runs(run_of(synthetic("s", 50, 20, 30)), run_of(synthetic("s", 50, 20.8, 30)), {})
          .changed);
  // 30% slower but with noise as large as the change: not provable.
  EXPECT_FALSE(compare_runs(run_of(synthetic("s", 50, 20, 8, 8.0)),
                            run_of(synthetic("s", 50, 26, 8, 8.0)), {})
                   .changed);
  // A faster run is also a change (a CI gate should notice a measurement that changed).
  EXPECT_TRUE(
      compare_runs(run_of(synthetic("s", 50, 20, 30)), run_of(synthetic("s", 25, 20, 30)), {})
          .changed);
}

TEST(Compare, MissingScenariosAndWorkloadsAreReported) {
  LoadedScenario partial = synthetic("s", 50, 20, 10);
  partial.workloads = {"A"};
  std::erase_if(partial.records, [](const RecordRow& r) { return r.workload == "B"; });
  const auto r = compare_runs(run_of(synthetic("s", 50, 20, 10)), run_of(partial), {});
  EXPECT_EQ(r.unmatched.size(), 4u);  // B's start, end, duration, gap
  const auto other =
      compare_runs(run_of(synthetic("s", 50, 20, 10)), run_of(synthetic("t", 50, 20, 10)), {});
  ASSERT_EQ(other.unmatched.size(), 1u);
  EXPECT_NE(other.unmatched[0].find("scenario 's'"), std::string::npos);
}

TEST(Compare, NamesEachSidesPlatformAndWarnsWhenTheApisDiffer) {
  LoadedScenario vulkan = synthetic("s", 50, 20, 30);
  LoadedScenario d3d12 = synthetic("s", 50, 20, 30);
  d3d12.meta_json["device"] = {{"name", "Test GPU"},
                               {"api", "D3D12"},
                               {"api_version", "feature level 12_1"},
                               {"runtime", "Microsoft D3D12 runtime"}};
  d3d12.meta_json["host"] = {{"kernel", "Windows"}};
  read_meta(d3d12);
  // Results from before the "api" key are Vulkan's.
  EXPECT_EQ(api_of(vulkan.meta), "Vulkan");
  EXPECT_EQ(platform_of(vulkan.meta), "Vulkan ? on Test GPU, driver test ?, host ?");
  EXPECT_EQ(platform_of(d3d12.meta),
            "D3D12 feature level 12_1 on Test GPU, runtime Microsoft D3D12 runtime, host Windows");
  const auto across = compare_runs(run_of(vulkan), run_of(d3d12), {});
  EXPECT_TRUE(across.different_apis);
  EXPECT_EQ(across.rows.size(), 7u);
  const std::string table = compare_table(across, {});
  EXPECT_EQ(table.rfind("baseline:  Vulkan ? on Test GPU", 0), 0u) << table;
  EXPECT_NE(table.find("\ncandidate: D3D12 feature level 12_1"), std::string::npos) << table;
  EXPECT_NE(table.find("different APIs"), std::string::npos) << table;
  const auto same = compare_runs(run_of(vulkan), run_of(synthetic("s", 50, 20, 30)), {});
  EXPECT_FALSE(same.different_apis);
  EXPECT_EQ(compare_table(same, {}).find("different APIs"), std::string::npos);
  // meta.json is input: fields of the wrong type read "?", never throw.
  const nlohmann::json hostile = {{"device", {{"api", 7}, {"name", nullptr}}}, {"host", "x"}};
  EXPECT_EQ(platform_of(read_scenario_meta(hostile)), "7 ? on ?, driver ? ?, host ?");
  EXPECT_EQ(api_of(read_scenario_meta(nlohmann::json::array())), "Vulkan");
}

// Runs of one configuration whose B settles at 20 or 22 µs per run (as `no-barriers` settles
// on a schedule per run on the H100): a state the baseline runs also show is no change.
// One run per value of B's duration.
std::vector<LoadedRun> runs_with_b(std::initializer_list<double> b_durations) {
  std::vector<LoadedRun> runs;
  for (double b : b_durations) runs.push_back(run_of(synthetic("s", 50, b, 30)));
  return runs;
}

TEST(Compare, SeveralRunsPerSideAreTheUnitAndARunLevelStateIsNoAlarm) {
  const std::vector<LoadedRun> baseline = runs_with_b({20.0, 22.0, 20.0, 20.0, 22.0});
  const std::vector<LoadedRun> candidate = runs_with_b({22.0, 22.0, 20.0, 22.0, 20.0});
  const CompareResult runs = compare_runs(baseline, candidate, {});
  EXPECT_EQ(runs.method, CompareMethod::runs);
  EXPECT_EQ(runs.threshold_pct, 5.0);
  EXPECT_FALSE(runs.changed);
  EXPECT_TRUE(runs.warnings.empty());
  EXPECT_NEAR(runs.chance_per_metric, 2.0 / 252.0, 1e-12);
  // The frames method on one run of each state calls the 10 % a change: it cannot know.
  const CompareResult frames = compare_runs(baseline[0], candidate[0], {.threshold_pct = 5.0});
  EXPECT_EQ(frames.method, CompareMethod::frames);
  EXPECT_TRUE(frames.changed);
  EXPECT_NE(compare_table(frames, {}).find("method: frames (one run per side)"), std::string::npos);
}

TEST(Compare, SeveralRunsCatchAChangeEveryRunShowsAndReportTheRunsSpread) {
  const std::vector<LoadedRun> baseline = runs_with_b({20.0, 20.2, 19.8, 20.0, 20.6});
  std::vector<LoadedRun> candidate = runs_with_b({22.0, 22.1, 21.9, 22.0, 22.2});
  const CompareResult r = compare_runs(baseline, candidate, {});
  EXPECT_TRUE(r.changed);
  for (const CompareRow& row : r.rows) {
    if (row.workload == "B" && row.metric == "duration") {
      EXPECT_EQ(row.outcome, CompareOutcome::slower);
      // The smallest and largest difference between a candidate and a baseline run's p50.
      EXPECT_NEAR(row.difference[0].low, 21.9 - 20.6, 1e-9);
      EXPECT_NEAR(row.difference[0].high, 22.2 - 19.8, 1e-9);
      // The median of the runs' p50s (each run's p50 is its B plus 0.05 of wobble), not the
      // mean (20.17).
      EXPECT_NEAR(row.baseline[0], 20.05, 1e-9);
      EXPECT_NEAR(row.candidate[0], 22.05, 1e-9);
    } else if (row.workload == "A") {
      EXPECT_EQ(row.outcome, CompareOutcome::ok) << row.metric;
    }
  }
  const std::string table = compare_table(r, {});
  EXPECT_NE(table.find("method: runs (5 baseline, 5 candidate)"), std::string::npos) << table;
  EXPECT_NE(table.find("beyond 5.0%"), std::string::npos) << table;
  // An explicit threshold wins over the method's default: a 10 % change is within 12 %.
  EXPECT_FALSE(compare_runs(baseline, candidate, {.threshold_pct = 12.0}).changed);
  // One run out of line on the candidate side is not every run: no change.
  candidate[2] = run_of(synthetic("s", 50, 20.0, 30));
  EXPECT_FALSE(compare_runs(baseline, candidate, {}).changed);
}

TEST(Compare, TooFewRunsAreWarnedAboutAndALackingRunIsNamed) {
  EXPECT_DOUBLE_EQ(separation_chance(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(separation_chance(3, 3), 0.1);
  EXPECT_DOUBLE_EQ(separation_chance(10, 1), 2.0 / 11.0);
  EXPECT_NEAR(separation_chance(5, 5), 2.0 / 252.0, 1e-15);
  std::vector<LoadedRun> three, other;
  for (int i = 0; i < 3; ++i) three.push_back(run_of(synthetic("s", 50, 20, 30)));
  for (int i = 0; i < 3; ++i) other.push_back(run_of(synthetic("s", 50, 20, 30)));
  other[1].directory = "/tmp/the-odd-run";
  other[1].scenarios[0].workloads = {"A"};
  std::erase_if(other[1].scenarios[0].records,
                [](const RecordRow& r) { return r.workload == "B"; });
  const CompareResult r = compare_runs(three, other, {});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("up to 10.0%"), std::string::npos) << r.warnings[0];
  ASSERT_EQ(r.unmatched.size(), 4u);  // B's start, end, duration, gap
  EXPECT_NE(r.unmatched[0].find("in the candidate run /tmp/the-odd-run"), std::string::npos)
      << r.unmatched[0];
  EXPECT_EQ(r.rows.size(), 3u);  // A's metrics, judged on all six runs
}

TEST(Report, HasDeviceQueuesTablesAndGaps) {
  const ReportPages pages = markdown_report(run_of(synthetic("s", 50, 20, 10, 0.0)));
  EXPECT_NE(pages.page.find("# gpuoverlap report"), std::string::npos);
  EXPECT_NE(pages.page.find("| device | Test GPU"), std::string::npos);
  // The page's barrier table has the dependency; its scenario table the scenario, pointing
  // to the details page, which has the scenario's own section.
  EXPECT_NE(pages.page.find("| s | A → B | legacy | "), std::string::npos) << pages.page;
  EXPECT_NE(pages.page.find("| s | 10 | ok | "), std::string::npos) << pages.page;
  EXPECT_NE(pages.page.find("[report-details.md](report-details.md)"), std::string::npos);
  const std::string& md = pages.details;
  EXPECT_NE(md.find("## s"), std::string::npos);
  EXPECT_NE(md.find("| direct | direct | 0 (GRAPHICS\\|COMPUTE) | 0 | normal → normal |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| A | 10 | 10.0 (10.0–10.0) | 60.0 (60.0–60.0) | 50.0 (50.0–50.0) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| A → B | legacy | 3.0 (3.0–3.0) |"), std::string::npos) << md;
}

// The frame times a player feels, from frames.csv: 1000 frames of 8 ms but every hundredth of
// 20 ms (a stutter past 1.5 periods), and a game frame's CPU phase of 5 ms.
class ReportFrames : public TempDir {};

TEST_F(ReportFrames, GiveFrameTimePercentilesTheOnePercentLowAndStutters) {
  Scenario scenario;
  scenario.name = "s";
  ScenarioTimeline timeline;
  for (std::uint32_t f = 0; f < 1000; ++f) {
    FrameRecord record;
    record.frame = f;
    record.frame_interval_us = f % 100 == 50 ? 20'000.0 : 8'000.0;
    record.stutter = f % 100 == 50;
    record.cpu_phase_us = 5'000.0;
    record.wake_max_us = 12.0;
    timeline.frames.push_back(record);
  }
  std::filesystem::create_directories(dir_);
  ASSERT_TRUE(write_file_atomically(dir_ / "frames.csv", frames_csv(scenario, timeline)).ok());
  LoadedScenario s = synthetic("s", 50, 20, 10, 0.0);
  auto frames = load_frames(dir_ / "frames.csv");
  ASSERT_TRUE(frames.ok()) << frames.error().message;
  ASSERT_EQ(frames->size(), 1000u);
  s.frames = *frames;
  const std::string md = markdown_report(run_of(s)).details;
  // p99 interpolates between the last 8 ms frame and the first 20 ms one; p99.9 is a 20 ms
  // frame; the slowest 1 % (10 frames) are all 20 ms: 50 fps.
  EXPECT_NE(md.find("**Frame time** (start to start, ms): p50 8.000, p99 8.120, p99.9 20.000; 1 % "
                    "low 50.0 fps; 10.0 stutters per 1000 frames (10 of 1000: later than 1.5 "
                    "periods); CPU phase p50 5.000 ms, p99 5.000 ms; worst wake-up p99 12.0 µs."),
            std::string::npos)
      << md;
  // The viewer shows the same figures (viewer_scene_test.cpp), from the same numbers.
  const auto stats = frame_time_stats(s.frames);
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->frames, 1000u);
  EXPECT_EQ(stats->stutters, 10u);
  EXPECT_DOUBLE_EQ(stats->one_percent_low_fps, 50.0);
  // A scenario without frames.csv (results of a lone scenario copied without it) has no line.
  EXPECT_EQ(markdown_report(run_of(synthetic("s", 50, 20, 10, 0.0))).details.find("**Frame time**"),
            std::string::npos);
}

// run.json is untrusted (results folders travel with bug reports): its directories must stay
// inside the results.
TEST(Results, ScenarioDirectoriesStayInsideTheResults) {
  EXPECT_EQ(*scenario_directory("/r", "study/cond/round-1"),
            std::filesystem::path("/r/study/cond/round-1"));
  EXPECT_EQ(*scenario_directory("/r", "a/../b"), std::filesystem::path("/r/b"));
  for (const char* bad : {"../x", "a/../../x", "/etc", "", ".."})
    EXPECT_FALSE(static_cast<bool>(scenario_directory("/r", bad))) << bad;
}

// The control's doses by threads; where two have as many (`unmanaged`, one thread per core, on
// a machine of two cores beside `unmanaged-2`), each also by its condition.
class StudyReport : public TempDir {};
TEST_F(StudyReport, NamesTheConditionOfDosesWithAsManyThreads) {
  LoadedScenario s = synthetic("round-1", 20, 20, 10, 0.0);
  s.meta_json["scenario"]["study"] = {{"name", "study"}, {"kind", "background"}};
  read_meta(s);
  s.directory = dir_ / "study" / "unmanaged" / "round-1";
  LoadedRun run;
  run.directory = dir_;
  run.scenarios.push_back(std::move(s));
  const nlohmann::json verdict = {
      {"conditions", nlohmann::json::array()},
      {"has_control", true},
      {"control_detected", true},
      {"detected_from_threads", 1},
      {"control_doses",
       {{{"condition", "unmanaged-1"}, {"threads", 1}, {"verdict", "intrusive"}},
        {{"condition", "unmanaged-2"}, {"threads", 2}, {"verdict", "inconclusive"}},
        {{"condition", "unmanaged"}, {"threads", 2}, {"verdict", "intrusive"}}}}};
  std::filesystem::create_directories(dir_ / "study");
  ASSERT_TRUE(write_file_atomically(dir_ / "study" / "verdict.json", verdict.dump()));
  const ReportPages pages = markdown_report(run);
  const std::string all = pages.page + pages.details;
  EXPECT_NE(all.find("Control doses: 1 thread: intrusive; 2 threads (unmanaged-2): inconclusive; "
                     "2 threads (unmanaged): intrusive."),
            std::string::npos)
      << all;
}

// Answer 5, one line per load: a load that blocks the urgent job at every priority says so, and
// that priority changed nothing; a load whose class priority changes says by how much.
TEST(Report, AnswerFiveNamesEachLoadsClassAndWhetherPriorityChangedAnything) {
  const auto cell = [](const char* load, const char* priority, const char* cls, double p50,
                       double p99) {
    return PreemptionCell{std::string("m/") + load + "-" + priority,
                          load,
                          value_of(kQueuePriorityNames, priority),
                          value_of(kQueuePriorityNames, priority),
                          preemption::ProcessMode::same,
                          Clock::poll,
                          value_of(preemption::kPreemptionClassNames, std::string_view(cls)),
                          p50,
                          p99,
                          0,
                          std::nullopt};
  };
  const PreemptionCell big[] = {cell("big-dispatch", "realtime", "blocked", 54711, 95285),
                                cell("big-dispatch", "normal", "blocked", 54200, 94000),
                                cell("big-dispatch", "high", "blocked", 54500, 95000)};
  const std::string blocked = preemption_load_line("big-dispatch", preemption::ProcessMode::same,
                                                   {&big[0], &big[1], &big[2]});
  EXPECT_EQ(blocked,
            "`big-dispatch`: **blocked** (p99 past the period: the urgent job waits for the "
            "load's work) at every priority, p50 / p99 normal 54.2 ms / 94.0 ms, high 54.5 ms / "
            "95.0 ms, realtime 54.7 ms / 95.3 ms; priority changed nothing (realtime against "
            "normal: within 1.5x)");
  const PreemptionCell shader[] = {cell("slow-shader", "normal", "coarse", 900, 1400),
                                   cell("slow-shader", "realtime", "preempts", 41, 52)};
  const std::string helped = preemption_load_line("slow-shader", preemption::ProcessMode::separate,
                                                  {&shader[0], &shader[1]});
  EXPECT_EQ(helped,
            "`slow-shader` (the load in a second process): p50 / p99 normal 900 µs / 1.4 ms "
            "**coarse**, realtime 41 µs / 52 µs **preempts**; realtime against normal: p50 "
            "×0.046, p99 ×0.037 (priority helps)");
  const PreemptionCell one[] = {cell("many-draws", "high", "preempts", 45, 50)};
  EXPECT_EQ(preemption_load_line("many-draws", preemption::ProcessMode::same, {&one[0]}),
            "`many-draws`: **preempts** (p99 under 100 µs), p50 / p99 high 45 µs / 50 µs");
}

// A study without verdict.json: why, from run.json's statuses of its scenarios (a runtime that
// refused them all, as Wine's D3DCompile refuses the background variants).
TEST(Report, SaysWhyAStudyHasNoVerdict) {
  LoadedRun run;
  run.run = {{"scenarios",
              {{{"name", "study/managed/round-1"}, {"status", "unsupported"}},
               {{"name", "study/unmanaged/round-1"}, {"status", "unsupported"}},
               {{"name", "study/unmanaged/round-2"}, {"status", "failed"}},
               {{"name", "studying"}, {"status", "failed"}},
               {{"name", "other/a/round-1"}, {"status", "ok"}}}}};
  EXPECT_EQ(missing_verdict_reason(run, "study"),
            "not judged: of its 3 scenarios, 2 unsupported by this runtime, 1 failed");
  EXPECT_EQ(missing_verdict_reason(run, "other"), "`other/verdict.json` is missing or unreadable");
  run.run = nlohmann::json::object();  // a lone scenario directory: no run.json
  EXPECT_EQ(missing_verdict_reason(run, "study"), "`study/verdict.json` is missing or unreadable");
}

TEST(Report, SaysWhereTheTimeWentPerPresetOrStudy) {
  LoadedRun run = run_of(synthetic("s", 50, 20, 10, 0.0));
  run.run = {{"scenarios",
              {{{"directory", "study/a/round-1"}, {"seconds", 2.0}},
               {{"directory", "study/a/round-2"}, {"seconds", 3.0}},
               {{"directory", "default"}, {"seconds", 1.5}},
               {{"directory", "failed-early"}, {"seconds", "not a number"}}}}};
  const std::string md = markdown_report(run).page;
  EXPECT_NE(md.find("**Time:** 6 s measuring (device setup included) in 4 scenarios: study 5.0 s "
                    "(2 scenarios), default 1.5 s."),
            std::string::npos)
      << md;
}

// A gap is taken on the timestamp clock where the scenario has one, except after a copy: its
// timestamp may end long before what follows it can start (a copy on another queue still
// moving bytes), so its gap is the poll clock's, from its end stamp.
TEST(Report, ACopysGapIsTakenOnThePollClock) {
  auto with_timestamps = [](WorkloadKind producer) {
    LoadedScenario s =
        synthetic(producer == WorkloadKind::copy ? "copied" : "dispatched", 50, 20, 10, 0.0);
    for (RecordRow& r : s.records) {
      r.ts_start_us = r.poll_start_us;
      r.ts_end_us = r.poll_end_us;
      if (r.workload == "A") {
        r.kind = producer;
        *r.ts_end_us -= 100.0;  // its timestamp ends 100 µs before its end stamp
      }
    }
    return s;
  };
  LoadedRun run;
  run.directory = "/tmp/synthetic";
  run.scenarios = {with_timestamps(WorkloadKind::compute), with_timestamps(WorkloadKind::copy)};
  const std::vector<BarrierGap> gaps = barrier_gaps(run);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].clock, Clock::ts);
  EXPECT_DOUBLE_EQ(*percentile(gaps[0].values_us, 50), 103.0);
  EXPECT_EQ(gaps[1].scenario, "copied");
  EXPECT_EQ(gaps[1].clock, Clock::poll);
  EXPECT_DOUBLE_EQ(*percentile(gaps[1].values_us, 50), 3.0);
  EXPECT_NE(markdown_report(run).page.find("| copied | A → B | legacy | poll | 10 |"),
            std::string::npos)
      << markdown_report(run).page;
}

// A scenario against its "-legacy" twin (the same work behind legacy barriers) on the frame's
// span: a barrier that lets the consumer start 5 µs sooner is cheaper by 5 µs, one that
// changes nothing shows no difference, and scenarios without a twin, or with the twin's own
// barrier, are not compared.
TEST(Report, ComparesEachScenarioWithItsLegacyTwinOnTheFrameSpan) {
  auto with = [](const std::string& name, const std::string& barrier, double later_us) {
    LoadedScenario s = synthetic(name, 50, 20, 40);
    s.meta_json["scenario"]["default_barrier"] = barrier;
    read_meta(s);
    for (RecordRow& r : s.records)
      if (r.workload == "B") {
        *r.poll_start_us += later_us;
        *r.poll_end_us += later_us;
      }
    // frames.csv's gpu_span_us, as the frame loop writes it: first start to last end.
    std::map<std::uint32_t, std::pair<double, double>> span;
    for (const RecordRow& r : s.records) {
      auto [at, fresh] = span.try_emplace(r.frame, *r.poll_start_us, *r.poll_end_us);
      at->second.first = std::min(at->second.first, *r.poll_start_us);
      at->second.second = std::max(at->second.second, *r.poll_end_us);
    }
    for (const auto& [frame, first_last] : span) {
      LoadedFrame f;
      f.frame = frame;
      f.gpu_span_us = first_last.second - first_last.first;
      s.frames.push_back(f);
    }
    return s;
  };
  LoadedRun run;
  run.directory = "/tmp/synthetic";
  for (LoadedScenario s : {with("chain-legacy", "legacy", 5.0), with("chain", "enhanced", 0.0),
                           with("chain-split-event", "split", 5.0),
                           with("chain-again", "legacy", 0.0), with("other", "enhanced", 0.0)})
    run.scenarios.push_back(std::move(s));
  // A name that only shares the prefix, on other work, is no twin.
  LoadedScenario heavy = with("chain-heavy", "enhanced", 0.0);
  heavy.meta_json["scenario"]["workloads"] = {{{"name", "A"}, {"iterations", 4096}}};
  read_meta(heavy);
  run.scenarios.push_back(std::move(heavy));
  // A disturbed poll stamp leaves its frame out of the poll clock's entry, not the endpoint's.
  run.scenarios[1].records[0].poll_disturbed = kPollEndDisturbed;
  const std::vector<BarrierTwin> twins = barrier_twins(run);
  // Per twin: the endpoint, then the poll clock (the only clock the records have).
  ASSERT_EQ(twins.size(), 4u);
  EXPECT_EQ(twins[0].scenario, "chain");
  EXPECT_EQ(twins[0].legacy_twin, "chain-legacy");
  EXPECT_EQ(twins[0].barrier, "enhanced");
  EXPECT_FALSE(twins[0].clock.has_value());
  EXPECT_EQ(twins[0].frames, 40u);
  EXPECT_NEAR(twins[0].span_p50_us - twins[0].twin_span_p50_us, -5.0, 1e-9);
  EXPECT_EQ(twins[0].outcome(), TwinOutcome::cheaper);  // beyond the margin, 0.5 % of 78 µs
  EXPECT_LT(twins[0].difference_high_us, -4.0);
  EXPECT_GT(twins[0].difference_low_us, -6.0);
  EXPECT_EQ(twins[1].scenario, "chain");
  EXPECT_EQ(twins[1].clock, Clock::poll);
  EXPECT_EQ(twins[1].frames, 39u);
  EXPECT_EQ(twins[1].twin_frames, 40u);
  // One frame fewer moves the p50 by the synthetic frames' jitter.
  EXPECT_NEAR(twins[1].span_p50_us - twins[1].twin_span_p50_us, -5.0, 0.2);
  EXPECT_EQ(twins[1].outcome(), TwinOutcome::cheaper);
  EXPECT_EQ(twins[2].scenario, "chain-split-event");
  EXPECT_FALSE(twins[2].clock.has_value());
  EXPECT_NE(twins[2].outcome(), TwinOutcome::cheaper);
  EXPECT_NE(twins[2].outcome(), TwinOutcome::dearer);
  EXPECT_EQ(twins[3].clock, Clock::poll);
  // A difference within the margin is no difference, however narrow its interval.
  BarrierTwin close = twins[0];
  close.difference_low_us = -0.3, close.difference_high_us = -0.2;
  EXPECT_EQ(close.outcome(), TwinOutcome::same);
  close.difference_low_us = -0.5;
  EXPECT_EQ(close.outcome(), TwinOutcome::undecided);
  const std::string md = markdown_report(run).page;
  EXPECT_NE(md.find("`chain` (enhanced) 73.0 µs against `chain-legacy` 78.0 µs, -5.0 µs"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**cheaper**"), std::string::npos);
  EXPECT_NE(md.find("`chain-split-event` (split)"), std::string::npos);
  EXPECT_NE(md.find("margin of ±0.5 % of the span"), std::string::npos);
  // The table: the endpoint and each clock, one row each.
  EXPECT_NE(md.find("## Barrier twins"), std::string::npos);
  EXPECT_NE(md.find("| chain | chain-legacy | enhanced | frame | 40 / 40 | 73.0 | 78.0 | -5.0 ["),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| chain | chain-legacy | enhanced | poll | 39 / 40 |"), std::string::npos);
}

}  // namespace
}  // namespace gpuoverlap
