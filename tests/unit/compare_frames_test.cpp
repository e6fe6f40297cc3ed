// compare's frame section (what a player feels), its pooling of a study's rounds per condition
// and its comparison of study decisions, on synthetic results.
#include <gtest/gtest.h>

#include <fstream>

#include "analysis/compare.h"
#include "analysis/results.h"
#include "temp_dir.h"

namespace gpuoverlap {
namespace {

// A paced game frame (period 8 ms) of one workload: `frames` frames whose interval is 8 ms with
// a little deterministic jitter, except every `late_every`-th frame (0: none), `late_us` long;
// the workload's duration is the same in every run.
LoadedScenario game_frame(const std::string& name, int frames, int late_every = 0,
                          double late_us = 10'000, double cpu_phase_us = 5'000) {
  LoadedScenario s;
  s.name = name;
  s.workloads = {"A"};
  s.meta_json = {{"scenario", {{"name", name}}},
                 {"device", {{"name", "Test GPU"}, {"driver_name", "test"}}},
                 {"cpu", {{"frame_period_ms", 8.0}}}};
  for (int f = 0; f < frames; ++f) {
    const double wobble = ((f * 7919) % 11 - 5) * 10.0;  // ±50 µs
    RecordRow a{};
    a.frame = static_cast<std::uint32_t>(f);
    a.workload = "A";
    a.queue = "direct";
    a.depends_on = "";
    a.barrier = "none";
    a.poll_start_us = 10.0;
    a.poll_end_us = 110.0 + wobble / 100;
    s.records.push_back(a);
    LoadedFrame frame;
    frame.frame = static_cast<std::uint32_t>(f);
    const bool late = late_every > 0 && f % late_every == 0;
    frame.frame_interval_us = late ? late_us : 8'000.0 + wobble;
    frame.stutter = *frame.frame_interval_us > 12'000;
    frame.cpu_phase_us = cpu_phase_us + wobble;
    frame.wake_max_us = 20.0 + wobble / 10;
    s.frames.push_back(frame);
  }
  read_meta(s);
  return s;
}

LoadedRun run_of(std::vector<LoadedScenario> scenarios,
                 std::filesystem::path directory = "/tmp/synthetic") {
  LoadedRun r;
  r.directory = std::move(directory);
  r.scenarios = std::move(scenarios);
  return r;
}

const CompareRow* row_of(const CompareResult& r, const std::string& metric_prefix) {
  for (const CompareRow& row : r.rows)
    if (row.metric.starts_with(metric_prefix)) return &row;
  return nullptr;
}

TEST(CompareFrames, ASlowerFrameIsCaughtOnItsFrameMetricsAndNowhereElse) {
  // A third of the candidate's frames 11 ms: late (beyond 8.4 ms) but no stutter (12 ms).
  const CompareResult r =
      compare_runs(run_of({game_frame("g", 300)}), run_of({game_frame("g", 300, 3, 11'000)}), {});
  ASSERT_TRUE(r.changed);
  for (const CompareRow& row : r.rows) {
    SCOPED_TRACE(row.metric);
    const bool expected = row.metric == "interval" || row.metric.starts_with("late");
    EXPECT_EQ(row.outcome, expected ? CompareOutcome::slower : CompareOutcome::ok);
    EXPECT_EQ(row.section != CompareSection::workloads, row.workload == "frame");
  }
  const CompareRow* late = row_of(r, "late");
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->section, CompareSection::frame_share);
  EXPECT_EQ(late->metric, "late (> 8.40 ms)");
  EXPECT_DOUBLE_EQ(late->baseline[0], 0.0);
  EXPECT_NEAR(late->candidate[0], 100.0 / 3, 0.5);
  EXPECT_GT(late->difference[0].low, 25.0);
  const CompareRow* stutters = row_of(r, "stutters");
  ASSERT_NE(stutters, nullptr);
  EXPECT_EQ(stutters->outcome, CompareOutcome::ok);
  const std::string table = compare_table(r, {});
  EXPECT_NE(table.find("frames (what a player feels)"), std::string::npos) << table;
  EXPECT_NE(table.find("+33.3pt"), std::string::npos) << table;
  EXPECT_NE(table.find("points for a share of frames"), std::string::npos) << table;
  const std::string csv = compare_csv(r);
  EXPECT_NE(csv.find(",verdict,section,upper_percentile\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",slower,frame_share,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("g,frame,interval,"), std::string::npos) << csv;
}

TEST(CompareFrames, TheSameFramesChangeNothingAndAScenarioWithoutAGameFrameHasNoFrameRows) {
  const CompareResult same =
      compare_runs(run_of({game_frame("g", 300, 50)}), run_of({game_frame("g", 300, 50)}), {});
  EXPECT_FALSE(same.changed);
  EXPECT_NE(row_of(same, "CPU phase"), nullptr);
  EXPECT_NE(row_of(same, "wake-up"), nullptr);
  EXPECT_EQ(row_of(same, "critical path"), nullptr) << "no frame has one";
  LoadedScenario plain = game_frame("p", 100);
  plain.meta_json.erase("cpu");  // MJP's presets: frames.csv has the loop's cadence, no player's
  read_meta(plain);
  const CompareResult r = compare_runs(run_of({plain}), run_of({plain}), {});
  for (const CompareRow& row : r.rows) EXPECT_EQ(row.section, CompareSection::workloads);
}

TEST(CompareFrames, RunsAreTheUnitForFrameMetricsToo) {
  std::vector<LoadedRun> baseline, same, slower;
  for (int i = 0; i < 5; ++i) {
    baseline.push_back(run_of({game_frame("g", 200, 40 + i)}));
    same.push_back(run_of({game_frame("g", 200, 45 - i)}));
    slower.push_back(run_of({game_frame("g", 200, 3, 11'000, 7'000)}));
  }
  EXPECT_FALSE(compare_runs(baseline, same, {}).changed);
  const CompareResult r = compare_runs(baseline, slower, {});
  EXPECT_EQ(r.method, CompareMethod::runs);
  for (const char* metric : {"interval", "late", "CPU phase"}) {
    const CompareRow* row = row_of(r, metric);
    ASSERT_NE(row, nullptr) << metric;
    EXPECT_EQ(row->outcome, CompareOutcome::slower) << metric;
  }
  // The share's run-by-run difference: the smallest and largest candidate-minus-baseline.
  const CompareRow* late = row_of(r, "late");
  EXPECT_NEAR(late->difference[0].low, 100.0 * 67 / 200 - 100.0 * 5 / 200, 1e-9);
}

TEST(CompareFrames, EachRunIsLateAgainstItsOwnPeriod) {
  // On a CPU device the period is calibrated per run: 80 ms frames at an 80 ms pace are on time.
  LoadedScenario slow_pace = game_frame("g", 200);
  slow_pace.meta_json["cpu"]["frame_period_ms"] = 80.0;
  read_meta(slow_pace);
  for (LoadedFrame& f : slow_pace.frames) *f.frame_interval_us *= 10;
  const CompareResult r = compare_runs(run_of({game_frame("g", 200)}), run_of({slow_pace}), {});
  EXPECT_EQ(row_of(r, "late (> period")->outcome, CompareOutcome::ok);
  EXPECT_EQ(row_of(r, "interval")->outcome,
            CompareOutcome::slower);  // what a player feels, all the same
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("kept another frame period"), std::string::npos) << r.warnings[0];
}

TEST(CompareFrames, TheShareIntervalHoldsZeroForEqualSharesAndNotForDistantOnes) {
  const Interval none = share_difference_interval(0, 300, 0, 300);
  EXPECT_LE(none.low, 0.0);
  EXPECT_GE(none.high, 0.0);
  EXPECT_LT(none.high - none.low, 3.0);
  const Interval far = share_difference_interval(32, 1200, 457, 1200);
  EXPECT_GT(far.low, 30.0);
  EXPECT_LT(far.high, 40.0);
  // The observed difference always lies inside.
  const Interval one = share_difference_interval(0, 10, 10, 10);
  EXPECT_GE(one.high, 100.0);
}

// A study round as `run` writes it: "<study>/<condition>/round-<n>".
LoadedScenario round_of(const std::string& study, const std::string& condition, int round,
                        int late_every = 0) {
  LoadedScenario s =
      game_frame(study + "/" + condition + "/round-" + std::to_string(round), 60, late_every);
  s.meta_json["scenario"]["study"] = {{"name", study}, {"condition", condition}, {"round", round}};
  read_meta(s);
  return s;
}

class CompareStudies : public TempDir {
 protected:
  // A run of study "st" with conditions "calm" and "busy" in `rounds` rounds, and its
  // verdict.json giving each condition's decision.
  LoadedRun study_run(const std::string& name, int rounds, const std::string& calm_verdict,
                      const std::string& busy_verdict, int busy_late_every = 0) {
    std::vector<LoadedScenario> scenarios;
    for (int r = 1; r <= rounds; ++r) {
      scenarios.push_back(round_of("st", "calm", r));
      scenarios.push_back(round_of("st", "busy", r, busy_late_every));
    }
    const std::filesystem::path directory = dir_ / name;
    std::filesystem::create_directories(directory / "st");
    std::ofstream(directory / "st" / "verdict.json") << nlohmann::json{
        {"conditions",
         {{{"condition", "calm"}, {"verdict", calm_verdict}},
          {{"condition", "busy"},
           {"verdict", busy_verdict}}}}}.dump();
    return run_of(std::move(scenarios), directory);
  }
};

TEST_F(CompareStudies, RoundsArePooledPerConditionWhateverTheirCount) {
  const CompareResult r = compare_runs(study_run("a", 3, "non-intrusive", "intrusive"),
                                       study_run("b", 2, "non-intrusive", "intrusive", 2), {});
  EXPECT_TRUE(r.unmatched.empty()) << r.unmatched.front();
  EXPECT_TRUE(r.decision_changes.empty());
  bool busy_late = false;
  for (const CompareRow& row : r.rows) {
    EXPECT_TRUE(row.scenario == "st/calm" || row.scenario == "st/busy") << row.scenario;
    if (row.scenario == "st/busy" && row.metric.starts_with("late"))
      busy_late = row.outcome == CompareOutcome::slower;
    if (row.scenario == "st/calm") {
      EXPECT_EQ(row.outcome, CompareOutcome::ok) << row.metric;
    }
  }
  EXPECT_TRUE(busy_late);
  EXPECT_EQ(compare_unit(round_of("st", "calm", 12)), "st/calm");
  EXPECT_EQ(compare_unit(game_frame("g", 1)), "g");
}

TEST_F(CompareStudies, EveryConditionWhoseDecisionChangedIsReportedAndADecidedFlipGates) {
  const CompareResult flipped = compare_runs(study_run("a", 2, "non-intrusive", "intrusive"),
                                             study_run("b", 2, "intrusive", "intrusive"), {});
  ASSERT_EQ(flipped.decision_changes.size(), 1u);
  const DecisionChange& d = flipped.decision_changes[0];
  EXPECT_EQ(d.study, "st");
  EXPECT_EQ(d.condition, "calm");
  EXPECT_EQ(d.baseline_mode, Decision::non_intrusive);
  EXPECT_EQ(d.candidate_mode, Decision::intrusive);
  EXPECT_TRUE(d.gates);
  EXPECT_TRUE(flipped.changed);
  const std::string table = compare_table(flipped, {});
  EXPECT_NE(table.find("baseline non-intrusive, candidate intrusive  CHANGED"), std::string::npos)
      << table;
  // A move to inconclusive is reported, and is no evidence of a change.
  const CompareResult moved =
      compare_runs(study_run("c", 2, "non-intrusive", "intrusive"),
                   study_run("d", 2, "non-intrusive", "inconclusive (no power)"), {});
  ASSERT_EQ(moved.decision_changes.size(), 1u);
  EXPECT_FALSE(moved.decision_changes[0].gates);
  EXPECT_FALSE(moved.changed);
  // Several runs a side: the most frequent decision of each, and how often.
  std::vector<LoadedRun> baseline, candidate;
  for (int i = 0; i < 3; ++i) {
    baseline.push_back(study_run("e" + std::to_string(i), 1, "non-intrusive", "intrusive"));
    candidate.push_back(
        study_run("f" + std::to_string(i), 1, i == 0 ? "non-intrusive" : "intrusive", "intrusive"));
  }
  const CompareResult runs = compare_runs(baseline, candidate, {});
  ASSERT_EQ(runs.decision_changes.size(), 1u);
  EXPECT_NE(compare_table(runs, {}).find("baseline non-intrusive (3 of 3 runs), candidate "
                                         "intrusive (2 of 3 runs)"),
            std::string::npos)
      << compare_table(runs, {});
}

}  // namespace
}  // namespace gpuoverlap
