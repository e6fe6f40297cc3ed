// The non-intrusiveness verdict (analysis/verdict.h) on hand-built timelines, the statistics
// under it, and the per-frame and background exports it reads.
#include "analysis/verdict.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/bootstrap.h"
#include "analysis/csv_table.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

std::vector<double> normal_sample(double mean, double sd, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> dist(mean, sd);
  std::vector<double> out(n);
  for (double& v : out) v = dist(random);
  return out;
}

TEST(RankTest, SeparatesShiftedSamplesAndNotEqualOnes) {
  const auto base = normal_sample(100, 5, 200, 1);
  EXPECT_LT(rank_test_greater_p(base, normal_sample(110, 5, 200, 2)), 1e-6);
  EXPECT_GT(rank_test_greater_p(base, normal_sample(90, 5, 200, 3)), 0.999)
      << "one-sided: a faster candidate is not 'greater'";
  const double same = rank_test_greater_p(base, normal_sample(100, 5, 200, 4));
  EXPECT_GT(same, 0.01);
  EXPECT_LT(same, 0.99);
  // All ties: no evidence either way.
  EXPECT_DOUBLE_EQ(rank_test_greater_p({1, 1, 1}, {1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(rank_test_greater_p({}, {1.0}), 1.0);
}

TEST(Bootstrap, RatioIntervalsCoverTheTrueRatioAndAreDeterministic) {
  const auto base = normal_sample(100, 5, 400, 5);
  const auto twice = normal_sample(200, 10, 400, 6);
  const auto ci = bootstrap_percentile_ratios(base, twice, {50.0, 99.0});
  ASSERT_EQ(ci.size(), 2u);
  EXPECT_LT(ci[0].low, 2.0);
  EXPECT_GT(ci[0].high, 2.0);
  EXPECT_LE(ci[1].low, ci[1].high);
  const auto again = bootstrap_percentile_ratios(base, twice, {50.0, 99.0});
  EXPECT_EQ(ci[0].low, again[0].low);
  EXPECT_EQ(ci[1].high, again[1].high);
  const auto same = bootstrap_percentile_ratios(base, base, {50.0});
  EXPECT_LE(same[0].low, 1.0);
  EXPECT_GE(same[0].high, 1.0);
}

// One condition of a study: `frames` frames with the given CPU frame times, one workload of
// 50 µs on the poll clock, background compiles overlapping every frame unless `idle`.
ScenarioOutcome condition(const std::string& name, std::optional<background::BackgroundSpec> bg,
                          const std::vector<double>& cpu_frame_us, bool overlapped) {
  ScenarioOutcome out;
  out.scenario.name = "study/" + name;
  out.scenario.study = "study";
  out.scenario.condition = name;
  out.scenario.queues.push_back({"direct", QueueType::direct, QueuePriority::normal});
  out.scenario.workloads.push_back({"A", 0, WorkloadKind::compute, 8, 64, {}});
  out.scenario.background = bg;
  ScenarioTimeline t;
  for (std::uint32_t f = 0; f < cpu_frame_us.size(); ++f) {
    FrameRecord fr;
    fr.frame = f;
    fr.cpu_frame_us = cpu_frame_us[f];
    fr.cpu_submit_us = 20;
    fr.submit_to_start_us = 5;
    fr.poll_gap_max_us = 1;
    fr.bg_managed = overlapped && bg && bg->unmanaged_threads == 0 ? 1 : 0;
    fr.bg_unmanaged = overlapped && bg && bg->unmanaged_threads > 0 ? 1 : 0;
    t.frames.push_back(fr);
    WorkloadFrameRecord r;
    r.frame = f;
    r.poll_start_us = 5;
    r.poll_end_us = 55;
    t.records.push_back(r);
  }
  out.timeline = t;
  return out;
}

background::BackgroundSpec managed_spec() { return {}; }
background::BackgroundSpec unmanaged_spec() {
  background::BackgroundSpec s;
  s.unmanaged_threads = 4;
  return s;
}

const VerdictRow& row_of(const StudyVerdict& v, const std::string& condition,
                         const std::string& metric) {
  for (const VerdictRow& r : v.rows)
    if (r.condition == condition && r.metric == metric) return r;
  throw std::runtime_error("no row " + condition + " " + metric);
}

TEST(Verdict, DetectedControlIsIntrusiveAndAnUndisturbedConditionIsNot) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 300, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(1000, 20, 300, 8), true);
  const auto control =
      condition("unmanaged", unmanaged_spec(), normal_sample(1500, 30, 300, 9), true);
  auto v = judge_study({&baseline, &managed, &control}, VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->baseline, "baseline");
  EXPECT_EQ(v->gpu_clock, "poll") << "no timestamps in the baseline";
  EXPECT_TRUE(v->has_control);
  EXPECT_TRUE(v->control_detected);
  const VerdictRow& hit = row_of(*v, "unmanaged", "cpu_frame_us");
  EXPECT_EQ(hit.verdict, "intrusive");
  EXPECT_NEAR(*hit.ratio_p50, 1.5, 0.05);
  EXPECT_GT(*hit.ci_low, 1.05);
  EXPECT_LT(hit.rank_p, 0.01);
  EXPECT_TRUE(hit.control);
  const VerdictRow& calm = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(calm.verdict, "non-intrusive");
  EXPECT_LE(*calm.ci_low, 1.0 + 0.05);
  EXPECT_EQ(row_of(*v, "managed", "gpu_duration_us:A").verdict, "non-intrusive");
  ASSERT_EQ(v->conditions.size(), 2u);
  EXPECT_EQ(v->conditions[0].verdict, "non-intrusive");
  EXPECT_EQ(v->conditions[1].verdict, "intrusive");
  EXPECT_EQ(v->conditions[0].active_frames, 300u);
}

// Metrics are judged on parallel threads; the rows must be those of a serial run: the same
// order and, every bootstrap being seeded by itself, the same numbers every time.
TEST(Verdict, ParallelJudgingIsDeterministicAndKeepsTheMetricOrder) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 300, 7), false);
  const auto control =
      condition("unmanaged", unmanaged_spec(), normal_sample(1500, 30, 300, 9), true);
  const auto first = judge_study({&baseline, &control}, VerdictSettings{});
  const auto second = judge_study({&baseline, &control}, VerdictSettings{});
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(verdict_csv(*first), verdict_csv(*second));
  ASSERT_GE(first->rows.size(), 5u);
  EXPECT_EQ(first->rows[0].metric, "cpu_frame_us");
  EXPECT_EQ(first->rows.back().metric, "gpu_duration_us:A");
}

TEST(Verdict, AnUndetectedControlMakesEveryOtherVerdictInconclusiveNoPower) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 300, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(1000, 20, 300, 8), true);
  const auto control =
      condition("unmanaged", unmanaged_spec(), normal_sample(1000, 20, 300, 10), true);
  auto v = judge_study({&baseline, &managed, &control}, VerdictSettings{});
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->control_detected);
  for (const VerdictRow& r : v->rows)
    if (!r.control) {
      EXPECT_EQ(r.verdict, "inconclusive (no power)") << r.metric;
    }
  EXPECT_EQ(v->conditions[0].verdict, "inconclusive (no power)");
  EXPECT_NE(v->summary.find("NOT detected"), std::string::npos);
}

TEST(Verdict, FramesWithoutBackgroundWorkDoNotCount) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 300, 7), false);
  const auto idle = condition("managed", managed_spec(), normal_sample(1000, 20, 300, 8), false);
  auto v = judge_study({&baseline, &idle}, VerdictSettings{});
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_control);
  const VerdictRow& r = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(r.verdict, "inconclusive");
  EXPECT_NE(r.note.find("overlapped only 0 of 300"), std::string::npos) << r.note;
  EXPECT_NE(v->summary.find("no positive control"), std::string::npos);
}

TEST(Verdict, TooFewFramesIsInconclusiveAndAStudyNeedsOneBaseline) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 5, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(2000, 20, 5, 8), true);
  auto v = judge_study({&baseline, &managed}, VerdictSettings{});
  ASSERT_TRUE(v.ok());
  for (const VerdictRow& r : v->rows) EXPECT_EQ(r.verdict, "inconclusive") << r.metric;
  EXPECT_FALSE(judge_study({&managed}, VerdictSettings{}).ok());
  EXPECT_FALSE(judge_study({&baseline, &baseline}, VerdictSettings{}).ok());
}

TEST(Verdict, SubMicrosecondDifferencesAreNeverIntrusive) {
  // poll_gap_max_us: 1 µs against 1.5 µs is +50 %, but under min_difference_us.
  auto baseline = condition("baseline", std::nullopt, std::vector<double>(100, 1000), false);
  auto managed = condition("managed", managed_spec(), std::vector<double>(100, 1000), true);
  for (FrameRecord& f : managed.timeline->frames) f.poll_gap_max_us = 1.5;
  auto v = judge_study({&baseline, &managed}, VerdictSettings{});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(row_of(*v, "managed", "poll_gap_max_us").verdict, "non-intrusive");
}

TEST(Verdict, CsvHasTheDocumentedColumns) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 50, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(1000, 20, 50, 8), true);
  auto v = judge_study({&baseline, &managed}, VerdictSettings{});
  ASSERT_TRUE(v.ok());
  const std::string csv = verdict_csv(*v);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "condition,metric,baseline_p50,p50,ratio_p50,ci_low,ci_high,baseline_p99,p99,"
            "ratio_p99,verdict,p99_ci_low,p99_ci_high,rank_p,frames,baseline_frames,control,"
            "note");
  // 4 frame metrics + 1 workload, one condition.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 5);
}

TEST(BackgroundActivity, CountsTheCompilesOverlappingEachFrame) {
  ScenarioTimeline t;
  t.time_origin_ns = 1'000'000;
  t.frames.push_back({.frame = 0, .cpu_start_us = 0, .cpu_frame_us = 100});    // [1.0, 1.1] ms
  t.frames.push_back({.frame = 1, .cpu_start_us = 200, .cpu_frame_us = 100});  // [1.2, 1.3] ms
  auto task = [](std::int64_t start_ns, std::int64_t finish_ns, bool managed, bool boosted) {
    background::BackgroundTaskRecord r;
    r.start_ns = start_ns, r.finish_ns = finish_ns, r.managed = managed, r.boosted = boosted;
    return r;
  };
  t.background_tasks = {task(900'000, 1'050'000, true, false),     // frame 0 only
                        task(1'050'000, 1'250'000, true, true),    // both
                        task(1'250'000, 1'400'000, false, false),  // frame 1 only
                        task(0, 1'100'000, true, false)};          // cancelled: never ran
  annotate_background_activity(t);
  EXPECT_EQ(t.frames[0].bg_managed, 2u);
  EXPECT_EQ(t.frames[0].bg_boosted, 1u);
  EXPECT_EQ(t.frames[0].bg_unmanaged, 0u);
  EXPECT_EQ(t.frames[1].bg_managed, 1u);
  EXPECT_EQ(t.frames[1].bg_boosted, 1u);
  EXPECT_EQ(t.frames[1].bg_unmanaged, 1u);
}

TEST(BackgroundExport, FramesAndBackgroundCsvUseTheRunsTimeOrigin) {
  Scenario s;
  s.name = "s";
  ScenarioTimeline t;
  t.time_origin_ns = 5'000'000;
  t.frames.push_back({.frame = 0, .cpu_start_us = -3, .cpu_frame_us = 100, .cpu_submit_us = 20});
  background::BackgroundTaskRecord r;
  r.id = 1, r.label = "compile #1 A, quoted", r.queued_ns = 4'000'000, r.start_ns = 4'500'000,
  r.finish_ns = 6'000'000, r.outcome = "delivered", r.worker = 0, r.idle_priority = true;
  t.background_tasks.push_back(r);
  const std::string frames = frames_csv(s, t);
  EXPECT_EQ(frames.substr(0, frames.find('\n')),
            "scenario,frame,cpu_start_us,cpu_frame_us,cpu_submit_us,submit_to_start_us,"
            "poll_gap_max_us,bg_managed,bg_boosted,bg_unmanaged,status");
  EXPECT_NE(frames.find("s,0,-3.000,100.000,20.000,,,0,0,0,ok"), std::string::npos) << frames;
  const std::string bg = background_csv(s, t);
  EXPECT_NE(bg.find("s,1,managed,\"compile #1 A, quoted\",0,0,1,-1000.000,-500.000,1000.000,"
                    "delivered,0.000,0.000,1"),
            std::string::npos)
      << bg;
}

}  // namespace
}  // namespace gpuoverlap
