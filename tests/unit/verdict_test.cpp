// The non-intrusiveness verdict (analysis/verdict.h) on hand-built timelines of one round: the
// control's detection, too few frames, the poll's disturbed stamps, verdict.csv's columns, and a
// study of neighbours.
#include "analysis/verdict.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/study_files.h"
#include "verdict_test_data.h"

namespace gpuoverlap::verdict_tests {
namespace {

// 3000 frames, as the non-intrusiveness preset measures: six blocks of 500 bound a 1 % tail
// (300 frames could not).
TEST(Verdict, DetectedControlIsIntrusiveAndAnUndisturbedConditionIsNot) {
  const auto baseline =
      condition("baseline", std::nullopt, normal_sample(1000, 20, 3000, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(1000, 20, 3000, 8), true);
  const auto control =
      condition("unmanaged", unmanaged_spec(), normal_sample(1500, 30, 3000, 9), true);
  auto v = judge_study({&baseline, &managed, &control}, VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->baseline, "baseline");
  EXPECT_EQ(v->gpu_clock, Clock::poll) << "no timestamps in the baseline";
  EXPECT_TRUE(v->has_control);
  EXPECT_TRUE(v->control_detected);
  const VerdictRow& hit = row_of(*v, "unmanaged", "cpu_frame_us");
  EXPECT_EQ(hit.decision, Decision::intrusive);
  EXPECT_NEAR(*hit.ratio_p50, 1.5, 0.05);
  EXPECT_GT(*hit.ci_low, 1.05);
  EXPECT_FALSE(hit.rank_p) << "retired: it judged frames as independent";
  EXPECT_EQ(hit.units, 6u) << "one round: six blocks of 500 frames stand in for rounds";
  EXPECT_EQ(v->unit, "block");
  EXPECT_EQ(v->tests, 4u)
      << "the primary endpoints' tests: cpu_frame_us median and tail, frame_interval_us tail, "
         "gpu_span_us median";
  EXPECT_TRUE(hit.control);
  const VerdictRow& calm = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(calm.decision, Decision::non_intrusive);
  EXPECT_LE(*calm.ci_low, 1.0 + 0.05);
  EXPECT_EQ(calm.role, EndpointRole::primary);
  EXPECT_EQ(row_of(*v, "managed", "gpu_duration_us:A").decision, Decision::diagnostic_within);
  EXPECT_EQ(row_of(*v, "managed", "gpu_duration_us:A").role, EndpointRole::diagnostic);
  ASSERT_EQ(v->conditions.size(), 2u);
  EXPECT_EQ(v->conditions[0].decision, Decision::non_intrusive);
  EXPECT_EQ(v->conditions[1].decision, Decision::intrusive);
  EXPECT_EQ(v->conditions[0].active_frames, 3000u);
}

TEST(Verdict, JudgingIsDeterministicAndKeepsTheMetricOrder) {
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
      if (r.role == EndpointRole::primary)
        EXPECT_EQ(r.decision, Decision::no_power) << r.metric;
      else
        EXPECT_FALSE(is_primary_decision(r.decision)) << r.metric << ": " << r.decision;
    }
  EXPECT_EQ(v->conditions[0].decision, Decision::no_power);
  EXPECT_NE(v->summary.find("NOT detected"), std::string::npos);
}

TEST(Verdict, FramesWithoutBackgroundWorkDoNotCount) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 300, 7), false);
  const auto idle = condition("managed", managed_spec(), normal_sample(1000, 20, 300, 8), false);
  auto v = judge_study({&baseline, &idle}, VerdictSettings{});
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_control);
  const VerdictRow& r = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(r.decision, Decision::inconclusive);
  EXPECT_NE(r.note.find("overlapped only 0 of 300"), std::string::npos) << r.note;
  EXPECT_NE(v->summary.find("no positive control"), std::string::npos);
}

TEST(Verdict, TooFewFramesIsInconclusiveAndAStudyNeedsOneBaseline) {
  const auto baseline = condition("baseline", std::nullopt, normal_sample(1000, 20, 5, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(2000, 20, 5, 8), true);
  auto v = judge_study({&baseline, &managed}, VerdictSettings{});
  ASSERT_TRUE(v.ok());
  for (const VerdictRow& r : v->rows)
    EXPECT_EQ(r.decision, r.role == EndpointRole::primary ? Decision::inconclusive
                                                          : Decision::diagnostic_unclear)
        << r.metric;
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
  EXPECT_EQ(row_of(*v, "managed", "poll_gap_max_us").decision, Decision::diagnostic_within);
}

// A frame whose start stamp the poller saw late (a disturbed window) says when the poller
// looked, not when the GPU started: the poll-clock diagnostics leave it out, and the
// poll_disturbed row counts such frames, so a condition that takes the poller's CPU still shows.
TEST(Verdict, FramesWithADisturbedPollStampAreLeftOutAndCounted) {
  const auto baseline =
      condition("baseline", std::nullopt, normal_sample(1000, 20, 3000, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(1000, 20, 3000, 8), true);
  auto control = condition("unmanaged", unmanaged_spec(), normal_sample(1000, 20, 3000, 9), true);
  std::size_t disturbed = 0;
  for (std::size_t f = 0; f < control.timeline->frames.size(); f += 3) {
    control.timeline->records[f].poll_disturbed = kPollStartDisturbed;
    control.timeline->frames[f].submit_to_start_us = 500;  // seen 495 µs late
    control.timeline->frames[f].gpu_span_us = 5000;
    ++disturbed;
  }
  auto v = judge_study({&baseline, &managed, &control}, VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const VerdictRow& start = row_of(*v, "unmanaged", "submit_to_start_us");
  EXPECT_EQ(start.frames, 3000 - disturbed);
  EXPECT_EQ(start.p99, 5) << "no disturbed frame's late start is in the sample";
  EXPECT_EQ(start.decision, Decision::diagnostic_within);
  EXPECT_EQ(row_of(*v, "unmanaged", "gpu_span_us").frames, 3000 - disturbed)
      << "no timestamps: the span is on the poll clock";
  const VerdictRow& moved = row_of(*v, "unmanaged", "poll_disturbed");
  EXPECT_EQ(moved.tests, EndpointTests::tail);
  EXPECT_EQ(moved.frames, 3000u);
  EXPECT_FALSE(moved.ratio_p50) << "a share of 0/1 frames has no median ratio";
  EXPECT_NEAR(*moved.tail_rate, 1.0 / 3, 0.01);
  EXPECT_EQ(moved.decision, Decision::diagnostic_worse);
  EXPECT_EQ(row_of(*v, "managed", "poll_disturbed").decision, Decision::diagnostic_within);
  EXPECT_EQ(row_of(*v, "managed", "submit_to_start_us").frames, 3000u);
  EXPECT_EQ(v->tests, 4u) << "a diagnostic is no test";
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
            "note,tail_rate,baseline_tail_rate,tail_excess,tail_ci_low,tail_ci_high,units,"
            "detectable_ratio,detectable_tail,pairing,role,tests,effect_us,effect_share");
  // 3 primary endpoints, 4 frame diagnostics and 1 workload, one condition.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 8);
}

// A study of neighbours (run --concurrency-rounds): "alone" is the baseline, though neither
// condition has background work, and every frame is evidence. A device 30 % slower with its
// neighbours busy is disturbed; one 1 % slower is not.
std::vector<ScenarioOutcome> neighbour_rounds(const std::string& condition,
                                              const std::vector<double>& level, double factor,
                                              std::uint64_t seed) {
  auto out = rounds_of(condition, std::nullopt, level, factor, seed);
  for (ScenarioOutcome& o : out) o.scenario.neighbours_study = true;
  return out;
}

TEST(Verdict, AStudyOfNeighboursJudgesTogetherAgainstAlone) {
  const std::vector<double> drift = {900, 1000, 1100, 1000};
  auto alone = neighbour_rounds("alone", drift, 1.0, 500);
  auto slowed = neighbour_rounds("together", drift, 1.3, 600);
  auto v = judge_study(all_of({&slowed, &alone}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->baseline, "alone");
  ASSERT_EQ(v->conditions.size(), 1u);
  EXPECT_EQ(v->conditions[0].condition, "together");
  EXPECT_EQ(v->conditions[0].decision, Decision::intrusive);
  EXPECT_EQ(v->conditions[0].active_frames, v->conditions[0].frames);
  EXPECT_FALSE(v->has_control);
  EXPECT_NE(v->summary.find("disturbed by the other devices"), std::string::npos) << v->summary;

  auto calm = neighbour_rounds("together", drift, 1.01, 700);
  auto w = judge_study(all_of({&alone, &calm}), VerdictSettings{});
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->conditions[0].decision, Decision::non_intrusive);
  EXPECT_FALSE(w->conditions[0].starved);  // no background work to starve
  EXPECT_NE(w->summary.find("not disturbed by the other devices"), std::string::npos);

  // Never extended: the plan fixed every device's rounds.
  std::vector<const ScenarioOutcome*> outcomes = all_of({&alone, &calm});
  EXPECT_FALSE(study_progress(outcomes, *w).stop.empty());

  // Without the device alone there is no baseline; mixed with background work, no study.
  EXPECT_FALSE(judge_study(all_of({&calm}), VerdictSettings{}).ok());
  auto background = rounds_of("managed", managed_spec(), drift, 1.0, 800);
  EXPECT_FALSE(judge_study(all_of({&alone, &background}), VerdictSettings{}).ok());
}

}  // namespace
}  // namespace gpuoverlap::verdict_tests
