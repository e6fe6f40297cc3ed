// The non-intrusiveness verdict (analysis/verdict.h) on hand-built timelines, the statistics
// under it, and the per-frame and background exports it reads.
#include "analysis/verdict.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <tuple>

#include "analysis/csv_table.h"
#include "analysis/student_t.h"
#include "analysis/study_files.h"
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

TEST(StudentT, QuantilesAndTailsMatchTheTables) {
  // Textbook values: t(0.975; 5) = 2.5706, t(0.95; 10) = 1.8125, t(0.995; 2) = 9.9248.
  EXPECT_NEAR(student_t_quantile_upper(0.025, 5), 2.5706, 1e-4);
  EXPECT_NEAR(student_t_quantile_upper(0.05, 10), 1.8125, 1e-4);
  EXPECT_NEAR(student_t_quantile_upper(0.005, 2), 9.9248, 1e-4);
  // Many degrees of freedom: the normal's 1.96.
  EXPECT_NEAR(student_t_quantile_upper(0.025, 1e6), 1.95996, 1e-4);
  EXPECT_DOUBLE_EQ(student_t_quantile_upper(0.5, 3), 0.0);
  EXPECT_NEAR(student_t_quantile_upper(0.975, 5), -2.5706, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(2.5706, 5), 0.025, 1e-5);
  EXPECT_NEAR(student_t_upper_tail(-2.5706, 5), 0.975, 1e-5);
  EXPECT_NEAR(student_t_upper_tail(0, 7), 0.5, 1e-12);
  // A tiny tail with few degrees of freedom (a Bonferroni bound over 6 rounds) stays finite.
  const double far = student_t_quantile_upper(0.05 / 24, 5);
  EXPECT_GT(far, 4.0);
  EXPECT_LT(far, 6.0);
}

TEST(SampleSpread, MeanVarianceAndStandardErrorOfTheMean) {
  const SampleSpread s = sample_spread({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_NEAR(s.variance, 32.0 / 7.0, 1e-12);  // squares sum to 32, over n - 1
  EXPECT_NEAR(s.standard_error, std::sqrt(32.0 / 7.0 / 8.0), 1e-12);
  const SampleSpread one = sample_spread({3});
  EXPECT_DOUBLE_EQ(one.mean, 3.0);
  EXPECT_DOUBLE_EQ(one.standard_error, 0.0);
  EXPECT_EQ(sample_spread({}).n, 0u);
}

// One condition of a study: `frames` frames with the given CPU frame times, one workload of
// 50 µs on the poll clock, background compiles overlapping every frame unless `idle`.
ScenarioOutcome condition(const std::string& name, std::optional<background::BackgroundSpec> bg,
                          const std::vector<double>& cpu_frame_us, bool overlapped,
                          std::uint32_t round = 0, std::uint32_t rounds = 0) {
  ScenarioOutcome out;
  out.scenario.name = "study/" + name;
  out.scenario.round = round;
  out.scenario.rounds = rounds;
  out.scenario.study = "study";
  out.scenario.condition = name;
  out.scenario.queues.push_back({"direct", QueueType::direct, QueuePriority::normal});
  out.scenario.workloads.push_back({"A", 0, WorkloadKind::compute, 8, 64, {}, std::nullopt});
  out.scenario.background = bg;
  ScenarioTimeline t;
  for (std::uint32_t f = 0; f < cpu_frame_us.size(); ++f) {
    FrameRecord fr;
    fr.frame = f;
    fr.cpu_frame_us = cpu_frame_us[f];
    // Unpaced and one workload: the frame interval is the frame, the GPU span the workload.
    fr.frame_interval_us = cpu_frame_us[f];
    fr.gpu_span_us = 50;
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

// 3000 frames, as the non-intrusiveness preset measures: six blocks of 500 bound a 1 % tail
// (300 frames could not).
TEST(Verdict, CommitWaitsAreSummedUpWithTheRoundsNeverSignalledAndThoseAskedAtTheEnd) {
  BackgroundProgress none;
  EXPECT_EQ(describe_commit_waits(none), "");
  BackgroundProgress one;
  one.commit_to_event_ms = {412.4};
  EXPECT_EQ(describe_commit_waits(one), "a commit waited for: 412 ms median over 1 round");
  BackgroundProgress three;
  three.commit_to_event_ms = {530, 412, 300};
  three.commits_not_signalled = 1;
  three.commits_asked_at_end = 2;
  EXPECT_EQ(describe_commit_waits(three),
            "a commit waited for: 412 ms median over 3 rounds (max 530), 1 of 4 rounds never "
            "signalled within commit_timeout_ms, 2 of 4 asked after the frames (every CPU free)");
  BackgroundProgress never;
  never.commits_not_signalled = 2;
  EXPECT_EQ(describe_commit_waits(never),
            "a commit waited for: 2 of 2 rounds never signalled within commit_timeout_ms");
}

TEST(Verdict, DetectedControlIsIntrusiveAndAnUndisturbedConditionIsNot) {
  const auto baseline =
      condition("baseline", std::nullopt, normal_sample(1000, 20, 3000, 7), false);
  const auto managed = condition("managed", managed_spec(), normal_sample(1000, 20, 3000, 8), true);
  const auto control =
      condition("unmanaged", unmanaged_spec(), normal_sample(1500, 30, 3000, 9), true);
  auto v = judge_study({&baseline, &managed, &control}, VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->baseline, "baseline");
  EXPECT_EQ(v->gpu_clock, "poll") << "no timestamps in the baseline";
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

// Rounds of a study, each condition's round r next to the baseline's round r: CPU frame
// times of round r are `level[r]` plus noise in both, i.e. the machine drifted between rounds.
std::vector<ScenarioOutcome> rounds_of(const std::string& name,
                                       std::optional<background::BackgroundSpec> bg,
                                       const std::vector<double>& level, double factor,
                                       std::uint64_t seed) {
  std::vector<ScenarioOutcome> out;
  for (std::uint32_t r = 0; r < level.size(); ++r)
    out.push_back(condition(name, bg, normal_sample(level[r] * factor, 10, 200, seed + r), true,
                            r + 1, static_cast<std::uint32_t>(level.size())));
  return out;
}

std::vector<const ScenarioOutcome*> all_of(const std::vector<std::vector<ScenarioOutcome>*>& sets) {
  std::vector<const ScenarioOutcome*> out;
  for (const auto* set : sets)
    for (const ScenarioOutcome& o : *set) out.push_back(&o);
  return out;
}

// The round is the unit: drift between rounds that hits baseline and condition alike cancels
// in the per-round ratio, and a condition 3 % slower in every round is bounded below the 5 %
// margin (non-intrusive), although the pooled frames of both spread over ±20 %.
TEST(Verdict, RoundsArePairedWithTheBaselinesSoDriftCancels) {
  const std::vector<double> drift = {800, 1000, 1200, 900, 1100, 1000};
  auto baseline = rounds_of("baseline", std::nullopt, drift, 1.0, 100);
  auto managed = rounds_of("managed", managed_spec(), drift, 1.03, 200);
  auto control = rounds_of("unmanaged", unmanaged_spec(), drift, 1.3, 300);
  auto v = judge_study(all_of({&baseline, &managed, &control}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->unit, "round");
  const VerdictRow& calm = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(calm.units, 6u);
  EXPECT_NEAR(*calm.ratio_p50, 1.03, 0.01);
  EXPECT_EQ(calm.decision, Decision::non_intrusive) << *calm.ci_low << " " << *calm.ci_high;
  EXPECT_EQ(row_of(*v, "unmanaged", "cpu_frame_us").decision, Decision::intrusive);
  EXPECT_TRUE(v->control_detected);

  // The same condition when the drift is not shared (its rounds ran on a machine that the
  // baseline's did not see): the spread of the per-round ratios widens the bounds past the
  // margin, so the verdict cannot be non-intrusive.
  auto unlucky = rounds_of("managed", managed_spec(), {1000, 800, 1000, 1200, 1000, 900}, 1.0, 400);
  auto w = judge_study(all_of({&baseline, &unlucky, &control}), VerdictSettings{});
  ASSERT_TRUE(w.ok());
  const VerdictRow& wide = row_of(*w, "managed", "cpu_frame_us");
  EXPECT_EQ(wide.decision, Decision::inconclusive) << *wide.ci_low << " " << *wide.ci_high;
  EXPECT_GT(*wide.ci_high, 1.05);
}

// The tail is the share of frames beyond the baseline's p99: a condition whose median is the
// baseline's but whose every tenth frame is 3x longer is intrusive on the tail alone.
TEST(Verdict, ATailOfSlowFramesIsIntrusiveEvenWithTheSameMedian) {
  const std::vector<double> level(6, 1000.0);
  auto baseline = rounds_of("baseline", std::nullopt, level, 1.0, 10);
  auto managed = rounds_of("managed", managed_spec(), level, 1.0, 20);
  for (ScenarioOutcome& round : managed)
    for (FrameRecord& f : round.timeline->frames)
      if (f.frame % 10 == 0) f.cpu_frame_us *= 3;
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok());
  const VerdictRow& r = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(r.decision, Decision::intrusive);
  EXPECT_EQ(r.note, "more frames beyond the baseline's p99");
  EXPECT_NEAR(*r.ratio_p50, 1.0, 0.02);
  EXPECT_NEAR(*r.tail_rate, 0.1, 0.01);
  EXPECT_LT(*r.baseline_tail_rate, 0.02);
  EXPECT_GT(*r.tail_ci_low, 0.01);
  // Its other metrics are untouched and bounded.
  EXPECT_EQ(row_of(*v, "managed", "cpu_submit_us").decision, Decision::diagnostic_within);
  // With the tail margin at 20 frames in 100, the same tail is allowed.
  VerdictSettings lenient;
  lenient.tail_margin = 0.2;
  EXPECT_EQ(row_of(*judge_study(all_of({&baseline, &managed}), lenient), "managed", "cpu_frame_us")
                .decision,
            Decision::non_intrusive);
}

// An A/A test whose rounds do not share their state: the condition changes nothing, but each
// of its rounds ran in another state of the machine than the baseline's round beside it (the
// levels of the baseline's rounds, in another order). The tail must not call that intrusive:
// against the baseline's own p99 a condition round in a slower state than its baseline round
// has every frame beyond it, while the baseline never has more than 1 %, which the verdict's
// tail once took for +50 points of intrusion.
TEST(Verdict, RoundsInDifferentStatesAreNoTailWhenNothingDiffers) {
  const std::vector<double> states = {800, 1000, 1200, 900, 1100, 1000, 1150, 850};
  std::vector<double> baseline_levels, condition_levels;
  for (std::size_t r = 0; r < 40; ++r) {
    baseline_levels.push_back(states[r % states.size()]);
    condition_levels.push_back(states[(r + 3) % states.size()]);
  }
  auto baseline = rounds_of("baseline", std::nullopt, baseline_levels, 1.0, 1000);
  auto managed = rounds_of("managed", managed_spec(), condition_levels, 1.0, 2000);
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const VerdictRow& r = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(r.units, 40u);
  EXPECT_NE(r.decision, Decision::intrusive) << r.note;
  EXPECT_NEAR(*r.tail_excess, 0.0, 0.005);
  EXPECT_LE(*r.tail_ci_high, 0.01) << "the tail is bounded within its margin";
}

// An alternating condition (alternate_frames = 50): `rounds` runs of 600 frames whose host state
// differs by round (±20 %) and drifts inside each run (±10 % over 1200 frames). Its running
// blocks take `factor` times as long; the first `contaminated` frames of each held block are
// still overlapped by a compile from the block before and run like the running blocks.
std::vector<ScenarioOutcome> alternating_rounds(double factor, std::uint32_t contaminated,
                                                std::uint64_t seed) {
  const std::vector<double> levels = {800, 1000, 1200, 900, 1100, 1000};
  background::BackgroundSpec spec;
  spec.alternate_frames = 50;
  std::vector<ScenarioOutcome> out;
  for (std::uint32_t r = 0; r < levels.size(); ++r) {
    const auto noise = normal_sample(0, 5, 600, seed + r);
    std::vector<double> cpu(600);
    for (std::uint32_t f = 0; f < 600; ++f)
      cpu[f] = levels[r] * (1 + 0.1 * std::sin(2 * 3.14159265 * f / 1200.0)) + noise[f];
    ScenarioOutcome o = condition("managed", spec, cpu, true, r + 1, 6);
    for (FrameRecord& f : o.timeline->frames) {
      f.bg_held = background::held_in_block(50, f.frame);
      const bool overlapped = !f.bg_held || f.frame % 50 < contaminated;
      f.bg_managed = overlapped ? 1 : 0;
      if (overlapped) f.cpu_frame_us *= factor;
    }
    out.push_back(std::move(o));
  }
  return out;
}

TEST(BackgroundSpec, AlternatingBlocksRunOnOffOffOnSoEveryPairHasOneOfEach) {
  std::string pattern;
  for (std::uint32_t frame = 0; frame < 16; frame += 2)
    pattern += background::held_in_block(2, frame) ? "-" : "+";
  EXPECT_EQ(pattern, "+--++--+");
  EXPECT_FALSE(background::held_in_block(0, 3)) << "0: no alternation";
}

// Within-run pairs cancel host state that rounds cannot: the condition's own held blocks,
// a fraction of a second from its running ones, are its baseline. A 10 % effect is found
// and no effect is bounded, though the rounds differ by ±20 % and each drifts by ±10 %.
TEST(Verdict, AnAlternatingConditionIsJudgedAgainstItsOwnHeldBlocks) {
  auto baseline = rounds_of("baseline", std::nullopt, {1000, 1000, 1000, 1000, 1000, 1000}, 1.0, 1);
  auto slower = alternating_rounds(1.10, 0, 50);
  auto v = judge_study(all_of({&baseline, &slower}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const VerdictRow& hit = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(hit.pairing, "alternating:50");
  EXPECT_EQ(hit.units, 36u) << "6 pairs of blocks in each of 6 runs";
  EXPECT_EQ(hit.frames, 6u * 300) << "the running blocks' frames";
  EXPECT_EQ(hit.baseline_frames, 6u * 300) << "the held blocks' frames, not the baseline's";
  EXPECT_NEAR(*hit.ratio_p50, 1.10, 0.01);
  EXPECT_EQ(hit.decision, Decision::intrusive) << hit.note;
  EXPECT_EQ(row_of(*v, "managed", "cpu_submit_us").decision, Decision::diagnostic_within);
  EXPECT_NE(v->summary.find("against its own held blocks of 50 frames"), std::string::npos)
      << v->summary;

  auto same = alternating_rounds(1.0, 0, 60);
  auto w = judge_study(all_of({&baseline, &same}), VerdictSettings{});
  ASSERT_TRUE(w.ok());
  const VerdictRow& calm = row_of(*w, "managed", "cpu_frame_us");
  EXPECT_EQ(calm.decision, Decision::non_intrusive) << *calm.ci_low << " " << *calm.ci_high;
  EXPECT_EQ(verdict_json(*w, VerdictSettings{})["conditions"][0]["pairing"], "alternating:50");
}

// A held block's first frames, still overlapped by a compile that started before the hold,
// carry the condition's load: counted as its baseline, they would hide the effect.
TEST(Verdict, HeldFramesThatACompileStillOverlappedAreNotTheBaseline) {
  auto baseline = rounds_of("baseline", std::nullopt, {1000, 1000, 1000, 1000, 1000, 1000}, 1.0, 1);
  auto managed = alternating_rounds(1.10, 40, 70);
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const VerdictRow& r = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(r.baseline_frames, 6u * 6 * 10) << "10 quiet frames of each held block";
  EXPECT_NEAR(*r.ratio_p50, 1.10, 0.02);
  EXPECT_EQ(r.decision, Decision::intrusive) << r.note;
}

// Too few rounds to bound anything: two rounds of 200 frames are inconclusive however clear.
TEST(Verdict, FewerUnitsThanTheMinimumAreInconclusive) {
  auto baseline = rounds_of("baseline", std::nullopt, {1000, 1000}, 1.0, 1);
  auto managed = rounds_of("managed", managed_spec(), {1000, 1000}, 1.0, 2);
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok());
  const VerdictRow& r = row_of(*v, "managed", "cpu_frame_us");
  EXPECT_EQ(r.decision, Decision::inconclusive);
  EXPECT_EQ(r.units, 2u);
  EXPECT_NE(r.note.find("at least 3 are needed"), std::string::npos) << r.note;
}

// A study's rounds 1..3 of a baseline and a managed condition, each scenario taking 10 s, with
// a budget of `budget_s` and at most `max_rounds`; managed has `factors[r]` times the
// baseline's CPU frame time in round r.
std::vector<ScenarioOutcome> study_so_far(const std::vector<double>& factors, double budget_s,
                                          std::uint32_t max_rounds) {
  std::vector<ScenarioOutcome> out;
  const auto rounds = static_cast<std::uint32_t>(factors.size());
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    const auto base = normal_sample(1000, 10, 200, r);
    std::vector<double> managed = base;
    for (double& v : managed) v *= factors[r - 1];
    out.push_back(condition("baseline", std::nullopt, base, false, r, rounds));
    out.push_back(condition("managed", managed_spec(), managed, true, r, rounds));
  }
  for (ScenarioOutcome& o : out) {
    o.scenario.name =
        "study/" + o.scenario.condition + "/round-" + std::to_string(o.scenario.round);
    o.scenario.study_budget_s = budget_s;
    o.scenario.study_max_rounds = max_rounds;
    o.seconds = 10;
  }
  return out;
}

SuiteOutcome suite_of(std::vector<ScenarioOutcome> scenarios) {
  SuiteOutcome s;
  s.scenarios = std::move(scenarios);
  return s;
}

TEST(StudyRounds, AnUndecidedStudyGetsItsNextRoundWhileTheBudgetLasts) {
  // Managed is 3 % and 12 % slower in alternate rounds: three rounds cannot decide that.
  const SuiteOutcome undecided = suite_of(study_so_far({1.03, 1.12, 1.03}, 600, 100));
  std::ostringstream log;
  const auto next = next_study_rounds(undecided, VerdictSettings{}, log);
  ASSERT_EQ(next.size(), 2u) << log.str();
  EXPECT_EQ(next[0].name, "study/managed/round-4") << "round 3 ran baseline first";
  EXPECT_EQ(next[1].name, "study/baseline/round-4");
  EXPECT_NE(log.str().find("after 3 rounds (60 s of 600 s); adding round 4"), std::string::npos)
      << log.str();

  // The same study when another round (20 s) would pass the budget, or max_rounds is reached.
  for (const auto& [budget_s, max_rounds, stop] :
       {std::tuple{70.0, 100u, "budget spent (60 s of 70 s, the next round would take 20 s)"},
        std::tuple{600.0, 3u, "undecided after max_rounds = 3 rounds"},
        std::tuple{0.0, 100u, "no budget for more rounds (budget_s = 0)"}}) {
    const SuiteOutcome limited = suite_of(study_so_far({1.03, 1.12, 1.03}, budget_s, max_rounds));
    EXPECT_TRUE(next_study_rounds(limited, VerdictSettings{}, log).empty()) << stop;
    std::vector<const ScenarioOutcome*> all;
    for (const ScenarioOutcome& o : limited.scenarios) all.push_back(&o);
    const auto verdict = judge_study(all, VerdictSettings{});
    ASSERT_TRUE(verdict.ok());
    const StudyProgress progress = study_progress(all, *verdict);
    EXPECT_FALSE(progress.decided);
    EXPECT_EQ(progress.rounds, 3u);
    EXPECT_EQ(progress.seconds, 60.0);
    EXPECT_NE(progress.stop.find(stop), std::string::npos) << progress.stop;
  }

  // Decided (managed identical to the baseline in every round): no more rounds.
  const SuiteOutcome decided = suite_of(study_so_far({1.0, 1.0, 1.0}, 600, 100));
  EXPECT_TRUE(next_study_rounds(decided, VerdictSettings{}, log).empty());
  std::vector<const ScenarioOutcome*> all;
  for (const ScenarioOutcome& o : decided.scenarios) all.push_back(&o);
  const auto verdict = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->rounds, 3u);
  EXPECT_EQ(row_of(*verdict, "managed", "cpu_frame_us").decision, Decision::non_intrusive);
  EXPECT_EQ(study_progress(all, *verdict).stop, "decided");

  // A failed scenario stops the suite: nothing is added.
  SuiteOutcome failed = suite_of(study_so_far({1.03, 1.12, 1.03}, 600, 100));
  failed.failure = make_error("device lost");
  EXPECT_TRUE(next_study_rounds(failed, VerdictSettings{}, log).empty());
}

// A game frame ([cpu]): the frame-level endpoints of its CPU phase decide, the components are
// diagnostics, and a paced frame's tail is its stutter rate.
ScenarioOutcome game_condition(const std::string& name,
                               std::optional<background::BackgroundSpec> bg, double phase_factor,
                               double submit_factor, std::uint32_t stutter_every,
                               std::uint32_t round, std::uint64_t seed) {
  const auto phase = normal_sample(5000 * phase_factor, 50, 300, seed);
  ScenarioOutcome o =
      condition(name, bg, normal_sample(6000, 50, 300, seed + 1), bg.has_value(), round, 6);
  jobs::CpuFrameSpec cpu;
  cpu.workers = 15;
  cpu.critical_jobs = 3;
  cpu.frame_period_ms = 8;
  o.scenario.cpu = cpu;
  for (FrameRecord& f : o.timeline->frames) {
    f.cpu_phase_us = phase[f.frame];
    f.critical_path_us = phase[f.frame] * 0.5;
    f.wake_max_us = 20;
    f.frame_interval_us = stutter_every && f.frame % stutter_every == 0 ? 20'000.0 : 8000.0;
    f.cpu_submit_us *= submit_factor;
  }
  return o;
}

std::vector<ScenarioOutcome> game_rounds(const std::string& name,
                                         std::optional<background::BackgroundSpec> bg,
                                         double phase_factor, double submit_factor,
                                         std::uint32_t stutter_every, std::uint64_t seed) {
  std::vector<ScenarioOutcome> out;
  for (std::uint32_t r = 1; r <= 6; ++r)
    out.push_back(
        game_condition(name, bg, phase_factor, submit_factor, stutter_every, r, seed + 10 * r));
  return out;
}

TEST(Verdict, APacedFrameIsJudgedOnItsPacingAndItsComponentsAreDiagnostics) {
  auto baseline = game_rounds("baseline", std::nullopt, 1.0, 1.0, 0, 100);
  // Managed: its submit time doubles and its CPU phase is 15 % longer, yet every frame keeps
  // its 8 ms pace: nothing a player sees moved.
  auto managed = game_rounds("managed", managed_spec(), 1.15, 2.0, 0, 200);
  // The control: one frame in ten past the stutter line.
  auto control = game_rounds("unmanaged", unmanaged_spec(), 1.0, 1.0, 10, 300);
  auto v = judge_study(all_of({&baseline, &managed, &control}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  // frame_interval_us: median; late_frames and stutters: tail.
  EXPECT_EQ(v->tests, 3u);
  EXPECT_EQ(v->rows.front().metric, "frame_interval_us");
  EXPECT_EQ(v->rows.front().tests, EndpointTests::median);
  const VerdictRow& phase = row_of(*v, "managed", "cpu_phase_us");
  EXPECT_EQ(phase.role, EndpointRole::diagnostic)
      << "a paced frame's CPU phase says where time went";
  EXPECT_EQ(phase.decision, Decision::diagnostic_worse);
  EXPECT_NEAR(*phase.effect_us, 750.0, 30.0);
  const VerdictRow& submit = row_of(*v, "managed", "cpu_submit_us");
  EXPECT_EQ(submit.decision, Decision::diagnostic_worse);
  EXPECT_NEAR(*submit.effect_us, 20.0, 1.0) << "20 µs more, in µs";
  EXPECT_NEAR(*submit.effect_share, 20.0 / 8000.0, 1e-3) << "as a share of the 8 ms period";
  EXPECT_NE(submit.note.find("does not decide"), std::string::npos) << submit.note;
  EXPECT_EQ(row_of(*v, "managed", "cpu_frame_us").role, EndpointRole::diagnostic);
  EXPECT_EQ(v->conditions[0].decision, Decision::non_intrusive) << "diagnostics alone never decide";
  const VerdictRow& hit = row_of(*v, "unmanaged", "stutters");
  EXPECT_EQ(hit.decision, Decision::intrusive);
  EXPECT_EQ(hit.note, "more frames past the stutter line (beyond 12000 µs)");
  EXPECT_NEAR(*hit.tail_rate, 0.1, 0.001);
  EXPECT_EQ(*hit.baseline_tail_rate, 0.0);
  EXPECT_EQ(row_of(*v, "unmanaged", "late_frames").decision, Decision::intrusive);
  EXPECT_TRUE(v->control_detected);
  EXPECT_EQ(*v->period_us, 8000.0);
  EXPECT_EQ(*v->late_line_us, 8400.0) << "a steady baseline: 5 % of the period";
  EXPECT_EQ(*v->stutter_line_us, 12000.0);
  ASSERT_TRUE(v->conditions[1].pacing && v->baseline_pacing);
  EXPECT_EQ(v->conditions[1].pacing->stutters, 180u) << "one in ten of 6 x 300 frames";
  EXPECT_EQ(v->baseline_pacing->late, 0u);
  EXPECT_NE(v->summary.find("180 of 1800 frames late (beyond 8.40 ms; baseline 0 of 1800), "
                            "180 stutters (0)"),
            std::string::npos)
      << v->summary;
}

// Synthetic rounds of a paced 8 ms frame: `rounds` rounds of `frames` frames, each round with
// a host state of its own (a shift of every frame by N(0, `round_sd`)), frames N(8000 *
// `factor`, 60) µs, a share `late_share` of them 9 ms (late, short of a stutter), and, with
// probability `burst_chance` per round, a burst of 6 frames of 16-40 ms (a host stall).
std::vector<ScenarioOutcome> paced_rounds(const std::string& name,
                                          std::optional<background::BackgroundSpec> bg,
                                          bool null_control, double factor, double late_share,
                                          double round_sd, double burst_chance,
                                          std::uint32_t rounds, std::uint32_t frames,
                                          std::uint64_t seed) {
  std::vector<ScenarioOutcome> out;
  std::mt19937_64 random(seed);
  std::normal_distribution<double> round_shift(0, round_sd), jitter(0, 60);
  std::uniform_real_distribution<double> unit(0, 1), burst_us(16'000, 40'000);
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    ScenarioOutcome o =
        condition(name, bg, std::vector<double>(frames, 6000.0), bg.has_value(), r, rounds);
    o.scenario.null_control = null_control;
    jobs::CpuFrameSpec cpu;
    cpu.workers = 15;
    cpu.critical_jobs = 3;
    cpu.frame_period_ms = 8;
    o.scenario.cpu = cpu;
    const double shift = round_shift(random);
    const bool burst = unit(random) < burst_chance;
    for (FrameRecord& f : o.timeline->frames) {
      f.cpu_phase_us = 5000 + jitter(random);
      f.critical_path_us = 2500;
      f.wake_max_us = 20;
      f.frame_interval_us = unit(random) < late_share
                                ? 9000.0 + jitter(random)
                                : 8000.0 * factor * (1 + shift) + jitter(random);
      if (burst && f.frame >= 40 && f.frame < 46) {  // the jobs stalled, and the frame with them
        f.frame_interval_us = burst_us(random);
        f.cpu_phase_us = *f.frame_interval_us - 3000;
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

// The frame loop's phases of every frame, adding up to its interval: the jobs 5 ms, the GPU
// 1.5 ms, the rest small, the pace what is left of 8 ms, and `woke_late_us` after it.
void set_loop_phases(std::vector<ScenarioOutcome>& rounds, double woke_late_us,
                     double run_delay_us) {
  for (ScenarioOutcome& o : rounds)
    for (FrameRecord& f : o.timeline->frames) {
      f.loop_jobs_us = 5000, f.loop_submit_us = 200, f.loop_tool_us = 100;
      f.loop_gpu_wait_us = 1500, f.loop_pace_us = 1150;
      f.loop_woke_late_us = woke_late_us + (f.frame % 3) * 10.0 + o.scenario.round;
      f.frame_interval_us = 7950 + *f.loop_woke_late_us;
      f.loop_run_delay_us = run_delay_us + (f.frame % 2) * 5.0;
    }
}

TEST(TimeAccount, ThePhaseThatMovedIsWhereTheTimeWentAndTheLateFramesItOverlapped) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.005, 0, 3, 120, 1);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.005, 0, 3, 120, 2);
  set_loop_phases(baseline, 50, 20);
  set_loop_phases(managed, 1350, 1200);
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_TRUE(v->conditions[0].time_account);
  const TimeAccount& a = *v->conditions[0].time_account;
  EXPECT_NEAR(a.interval.shift_us, 1300, 0.01);
  ASSERT_EQ(a.phases.size(), 6u);
  double phase_shifts_us = 0;
  for (const PhaseShift& p : a.phases) phase_shifts_us += p.shift_us;
  EXPECT_NEAR(phase_shifts_us, a.interval.shift_us, 0.01) << "the shifts add up";
  const PhaseShift& woke = a.phases[5];
  EXPECT_EQ(woke.phase, "woke_late");
  EXPECT_NEAR(woke.shift_us, 1300, 0.01);
  ASSERT_TRUE(woke.low_us && woke.high_us) << "three round pairs";
  EXPECT_LE(*woke.low_us, 1300.01);
  EXPECT_GE(*woke.high_us, 1299.99);
  ASSERT_TRUE(a.run_delay);
  EXPECT_NEAR(a.run_delay->shift_us, 1180, 0.01);
  EXPECT_EQ(a.frames, 360u);
  EXPECT_EQ(a.late_frames, 360u) << "every frame past 8.4 ms";
  EXPECT_EQ(a.late_overlapping_background, 360u);
  EXPECT_EQ(a.line,
            "frame interval +1.30 ms (mean): the frame loop waited +1.18 ms for a CPU (runnable "
            "but not running); the phase that grew most: waking late after the pacing sleep, "
            "+1.30 ms [1.30, 1.30]; 100 % of late frames (360 of 360) overlapped a background "
            "task");
  // A wait for a CPU under half the change is not the cause: the phase leads.
  TimeAccount scheduled_promptly = a;
  scheduled_promptly.run_delay->shift_us = 30;
  EXPECT_EQ(describe_time_account(scheduled_promptly),
            "frame interval +1.30 ms (mean): most of it waking late after the pacing sleep, "
            "+1.30 ms [1.30, 1.30]; runnable but not running +0.03 ms; 100 % of late frames "
            "(360 of 360) overlapped a background task");
  EXPECT_NE(v->summary.find(a.line), std::string::npos) << v->summary;
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_EQ(json["conditions"][0]["time_account"]["line"], a.line);
  EXPECT_EQ(json["conditions"][0]["time_account"]["phases"][5]["phase"], "woke_late");
  // Frames without the loop's phases (results of an older version, or none measured) have no
  // account, and the verdict stands as before.
  auto plain_baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.005, 0, 3, 120, 1);
  auto plain = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.005, 0, 3, 120, 2);
  auto without = judge_study(all_of({&plain_baseline, &plain}), VerdictSettings{});
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->conditions[0].time_account);
  EXPECT_TRUE(verdict_json(*without, VerdictSettings{})["conditions"][0]["time_account"].is_null());
}

TEST(Verdict, AFifteenPercentSlowerPaceIsIntrusiveAtThreeRounds) {
  // Every frame 15 % later, none past the stutter line: the median decides, at the preset's
  // three rounds.
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.01, 0.005, 0, 3, 120, 1);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.15, 0.01, 0.005, 0, 3, 120, 2);
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const VerdictRow& median = row_of(*v, "managed", "frame_interval_us");
  EXPECT_EQ(median.decision, Decision::intrusive);
  EXPECT_EQ(median.note, "median worse");
  EXPECT_NEAR(*median.ratio_p50, 1.15, 0.01);
  EXPECT_EQ(row_of(*v, "managed", "stutters").decision, Decision::non_intrusive);
  EXPECT_EQ(v->conditions[0].decision, Decision::intrusive);
}

TEST(Verdict, SixtyPercentLateFramesAgainstOnePercentIsIntrusive) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.01, 0.005, 0, 3, 120, 3);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0.6, 0.005, 0, 3, 120, 4);
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const VerdictRow& late = row_of(*v, "managed", "late_frames");
  EXPECT_EQ(late.decision, Decision::intrusive);
  EXPECT_NEAR(*late.tail_rate, 0.6, 0.08);
  EXPECT_LT(*late.baseline_tail_rate, 0.04);
  EXPECT_NE(late.note.find("more frames late (beyond 8400 µs)"), std::string::npos) << late.note;
  EXPECT_EQ(row_of(*v, "managed", "stutters").decision, Decision::non_intrusive)
      << "9 ms is no stutter";
  ASSERT_TRUE(v->conditions[0].pacing);
  EXPECT_GT(v->conditions[0].pacing->late, 150u);
}

// The null control: the baseline's settings again. Over many seeded studies whose rounds
// differ in host state, and some of whose rounds hold a host burst, it is called intrusive in
// at most 5 % of them, and only it and the baseline are without background work.
TEST(Verdict, TheNullControlIsAlmostNeverCalledIntrusive) {
  std::size_t intrusive = 0;
  constexpr std::size_t kStudies = 300;
  for (std::size_t study = 0; study < kStudies; ++study) {
    const std::uint32_t rounds = 3 + static_cast<std::uint32_t>(study % 4);
    auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.03, 0.01, 0.1, rounds, 120,
                                 1000 + 2 * study);
    auto null = paced_rounds("null", std::nullopt, true, 1.0, 0.03, 0.01, 0.1, rounds, 120,
                             1001 + 2 * study);
    auto v = judge_study(all_of({&baseline, &null}), VerdictSettings{});
    ASSERT_TRUE(v.ok()) << v.error().message;
    ASSERT_EQ(v->baseline, "baseline") << "a null control is not a second baseline";
    ASSERT_EQ(v->conditions.size(), 1u);
    EXPECT_TRUE(v->conditions[0].null_control);
    EXPECT_TRUE(v->has_null);
    intrusive += v->conditions[0].decision == Decision::intrusive ? 1 : 0;
    EXPECT_EQ(v->null_false_alarm, v->conditions[0].decision == Decision::intrusive);
  }
  EXPECT_LE(static_cast<double>(intrusive) / kStudies, 0.05) << intrusive << " of " << kStudies;
}

// The same studies with a condition whose every frame is 10 % later, or with 30 % of its
// frames late: three rounds call it intrusive nearly every time (the power the null control
// must not buy with false alarms).
TEST(Verdict, ThreeRoundsSeeATenPercentSlowerPaceOrAThirdOfFramesLate) {
  std::size_t slower_seen = 0, late_seen = 0;
  constexpr std::size_t kStudies = 100;
  for (std::size_t study = 0; study < kStudies; ++study) {
    auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.03, 0.01, 0.1, 3, 120,
                                 5000 + 3 * study);
    auto slower = paced_rounds("slower", managed_spec(), false, 1.10, 0.03, 0.01, 0.1, 3, 120,
                               5001 + 3 * study);
    auto late =
        paced_rounds("late", managed_spec(), false, 1.0, 0.3, 0.01, 0.1, 3, 120, 5002 + 3 * study);
    auto v = judge_study(all_of({&baseline, &slower, &late}), VerdictSettings{});
    ASSERT_TRUE(v.ok()) << v.error().message;
    slower_seen += v->conditions[0].decision == Decision::intrusive ? 1 : 0;
    late_seen += v->conditions[1].decision == Decision::intrusive ? 1 : 0;
  }
  EXPECT_GE(slower_seen, 90u);
  EXPECT_GE(late_seen, 90u);
}

TEST(Verdict, ANullControlInStudyProgressNeitherHoldsTheStudyNorLosesItsCallToNoPower) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.01, 0.005, 0, 3, 120, 5);
  // A null control whose rounds disagree (one with a 30 % late share): undecided.
  auto null = paced_rounds("null", std::nullopt, true, 1.0, 0.01, 0.005, 0, 3, 120, 6);
  for (FrameRecord& f : null[1].timeline->frames)
    if (f.frame % 3 == 0) f.frame_interval_us = 9000;
  // A control that nothing tells apart: no power.
  auto control = paced_rounds("unmanaged", unmanaged_spec(), false, 1.0, 0.01, 0.005, 0, 3, 120, 7);
  std::vector<const ScenarioOutcome*> all = all_of({&baseline, &null, &control});
  auto v = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_FALSE(v->control_detected);
  EXPECT_EQ(v->conditions[0].condition, "null");
  EXPECT_EQ(v->conditions[0].decision, Decision::inconclusive) << "its own call, not '(no power)'";
  EXPECT_EQ(study_progress(all, *v).undecided, 0u) << "the null's rows hold nothing back";
  EXPECT_NE(v->summary.find("null (null control, the baseline's settings again): inconclusive"),
            std::string::npos)
      << v->summary;
  EXPECT_NE(v->summary.find("null control not called intrusive"), std::string::npos);
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_TRUE(json["has_null"].get<bool>());
  EXPECT_TRUE(json["conditions"][0]["null_control"].get<bool>());
  EXPECT_EQ(json["late_line_us"], 8400.0);
}

// The frame loop's CPU against the compile threads': a compile thread on the frame loop's CPU
// in one round of three is named in the sentence, and frames no compile ran in are not counted.
TEST(TimeAccount, SaysInHowManyIntervalsTheFrameLoopSharedItsCpuWithACompileThread) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.005, 0, 3, 120, 1);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.005, 0, 3, 120, 2);
  set_loop_phases(baseline, 50, 20);
  set_loop_phases(managed, 1350, 1200);
  constexpr std::int64_t kOriginNs = 1'000'000'000'000;
  for (ScenarioOutcome& o : managed) {
    o.timeline->time_origin_ns = kOriginNs;
    for (FrameRecord& f : o.timeline->frames) {
      f.cpu_start_us = 8000.0 * f.frame;
      f.loop_cpu = 3;
    }
    // One compile from before the first frame to just before frame 60's start: on CPU 3 in
    // round 1, CPU 5 in the others. Frame 61's interval (from frame 60's start less a little)
    // still holds its end; the intervals after it have no compile running.
    background::BackgroundTaskRecord task;
    task.start_ns = kOriginNs - 1'000'000;
    task.finish_ns = kOriginNs + 8000LL * 60 * 1000 - 1000;
    task.thread.cpu_start = task.thread.cpu_end = o.scenario.round == 1 ? 3 : 5;
    o.timeline->background_tasks.push_back(task);
  }
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const TimeAccount& a = *v->conditions[0].time_account;
  EXPECT_EQ(a.intervals_with_compiles, 3u * 62) << "frames 0 to 61 of each round";
  EXPECT_EQ(a.intervals_sharing_cpu, 62u) << "round 1's";
  EXPECT_TRUE(
      a.line.ends_with("; in 62 of 186 intervals the frame loop ran on a CPU a compile "
                       "thread ran on"))
      << a.line;
  // The workers' CPUs: one on the frame loop's in every 4th managed frame, never in the
  // baseline's.
  for (ScenarioOutcome& o : baseline)
    for (FrameRecord& f : o.timeline->frames) f.workers_on_loop_cpu = 0;
  for (ScenarioOutcome& o : managed)
    for (FrameRecord& f : o.timeline->frames) f.workers_on_loop_cpu = f.frame % 4 == 0 ? 1 : 0;
  auto with_workers = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(with_workers.ok());
  const TimeAccount& w = *with_workers->conditions[0].time_account;
  EXPECT_EQ(w.frames_with_worker_cpus, 360u);
  EXPECT_EQ(w.frames_worker_on_loop_cpu, 90u);
  EXPECT_EQ(w.baseline_frames_with_worker_cpus, 360u);
  EXPECT_EQ(w.baseline_frames_worker_on_loop_cpu, 0u);
  EXPECT_TRUE(
      w.line.ends_with("; a worker ran on the frame loop's CPU in 25 % of frames "
                       "(baseline 0 %)"))
      << w.line;
}

// Four rounds; in round 4 the host stalls the baseline's jobs (6 frames whose CPU phase takes
// 30 ms for 5, their workers waiting for a CPU), and the managed condition has a share of late
// frames per round that decides it intrusive over four rounds but not over the other three.
TEST(HostBursts, AreNamedCountedAndMayNotDecideAVerdictAlone) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.0, 0, 4, 120, 7);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.0, 0, 4, 120, 8);
  for (auto* rounds : {&baseline, &managed})
    for (ScenarioOutcome& o : *rounds)
      for (FrameRecord& f : o.timeline->frames) {
        f.workers_on_cpu_us = 15 * 5000.0;
        f.workers_run_delay_us = 150.0, f.workers_run_delay_max_us = 10.0;
      }
  // The workers' figures of a frame's jobs are in the next frame's record (its interval).
  for (FrameRecord& f : baseline[3].timeline->frames) {
    if (f.frame >= 40 && f.frame < 46) f.cpu_phase_us = 30'000, f.frame_interval_us = 30'000;
    if (f.frame >= 41 && f.frame < 47) f.workers_run_delay_max_us = 24'000;
  }
  FrameRecord& paused = baseline[3].timeline->frames[60];  // neither waiting nor running
  paused.cpu_phase_us = 20'000;
  // The machine's steal per round: only the burst round's is summed.
  for (std::size_t r = 0; r < baseline.size(); ++r) baseline[r].host_steal_ms = 10.0 * (r + 1);
  const double late_share[] = {0.30, 0.10, 0.20, 0.35};
  for (std::size_t r = 0; r < managed.size(); ++r)
    for (FrameRecord& f : managed[r].timeline->frames)
      if (f.frame < late_share[r] * 120) f.frame_interval_us = 9000;

  VerdictSettings unguarded;
  unguarded.guard_host_bursts = false;
  auto all_rounds = judge_study(all_of({&baseline, &managed}), unguarded);
  ASSERT_TRUE(all_rounds.ok()) << all_rounds.error().message;
  ASSERT_EQ(all_rounds->conditions[0].decision, Decision::intrusive) << all_rounds->summary;
  std::vector<const ScenarioOutcome*> first_three;
  for (auto* rounds : {&baseline, &managed})
    for (std::size_t r = 0; r < 3; ++r) first_three.push_back(&(*rounds)[r]);
  auto calm = judge_study(first_three, unguarded);
  ASSERT_TRUE(calm.ok());
  ASSERT_EQ(calm->conditions[0].decision, Decision::inconclusive) << "the premise: round 4 decides";

  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_TRUE(v->burst_reference);
  EXPECT_NEAR(v->burst_reference->line_us(), 15'000, 100) << "3 x the baseline's 5 ms median";
  EXPECT_EQ(v->baseline_bursts.frames, 7u);
  EXPECT_EQ(v->baseline_bursts.rounds, (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(v->baseline_bursts.waited_for_cpu, 6u);
  EXPECT_EQ(v->baseline_bursts.off_cpu, 1u);
  EXPECT_EQ(v->conditions[0].bursts.frames, 0u);
  EXPECT_EQ(v->conditions[0].decision, Decision::inconclusive);
  EXPECT_EQ(v->conditions[0].burst_note,
            "intrusive only with round 4, where the host burst with nothing else running; "
            "without it: inconclusive");
  EXPECT_EQ(v->baseline_bursts.steal_ms_in_burst_rounds, 40.0);
  EXPECT_FALSE(v->conditions[0].bursts.steal_ms_in_burst_rounds) << "no bursts, no figure";
  EXPECT_NE(v->summary.find("baseline: 7 host bursts (CPU phase past 15.0 ms) in round 4: 6 "
                            "waited for a CPU, 1 off a CPU; hypervisor steal in that round: 40 ms"),
            std::string::npos)
      << v->summary;
  for (const VerdictRow& row : v->rows) {
    if (row.condition == "managed" && row.role == EndpointRole::primary) {
      EXPECT_NE(row.decision, Decision::intrusive) << row.metric;
    }
  }
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_EQ(json["baseline_host_bursts"]["frames"], 7);
  EXPECT_EQ(json["baseline_host_bursts"]["waited_for_cpu"], 6);
  EXPECT_EQ(json["baseline_host_bursts"]["steal_ms_in_burst_rounds"], 40.0);
  EXPECT_EQ(json["conditions"][0]["burst_note"], v->conditions[0].burst_note);
  EXPECT_EQ(json["burst_line_us"], v->burst_reference->line_us());
}

// A game frame whose baseline CPU phase is well below the busy work asked of each worker did
// less work than asked (a busy-work calibration that ran slow): the summary and verdict.json
// say so; the same frame at the work asked says nothing.
TEST(Verdict, AFrameThatDidLessWorkThanAskedIsNamed) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.0, 0, 3, 120, 7);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.0, 0, 3, 120, 8);
  auto ask = [&](double cpu_ms_per_worker) {
    for (auto* rounds : {&baseline, &managed})
      for (ScenarioOutcome& o : *rounds) o.scenario.cpu->cpu_ms_per_frame = 15 * cpu_ms_per_worker;
    auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
    EXPECT_TRUE(v.ok());
    return *v;
  };
  const StudyVerdict lighter = ask(10.0);  // 5 ms measured for 10 ms asked
  ASSERT_TRUE(lighter.cpu_phase_of_asked.has_value());
  EXPECT_NEAR(*lighter.cpu_phase_of_asked, 0.5, 0.02);
  EXPECT_NE(lighter.summary.find("the game frame did less work than asked: the baseline's CPU "
                                 "phase p50 5.0"),
            std::string::npos)
      << lighter.summary;
  EXPECT_NEAR(verdict_json(lighter, VerdictSettings{})["cpu_phase_of_asked"].get<double>(), 0.5,
              0.02);
  const StudyVerdict as_asked = ask(5.0);
  EXPECT_NEAR(*as_asked.cpu_phase_of_asked, 1.0, 0.02);
  EXPECT_EQ(as_asked.summary.find("less work than asked"), std::string::npos) << as_asked.summary;
}

TEST(Verdict, TheLateToleranceFollowsTheBaselinesJitterUpToHalfAPeriod) {
  std::vector<double> steady(100, 8000.0), wandering, hopeless(100, 30'000.0);
  for (int i = 0; i < 100; ++i) wandering.push_back(8000.0 + 10.0 * i);  // p95 ~ 8950
  using Rounds = std::vector<std::vector<double>>;
  EXPECT_DOUBLE_EQ(late_tolerance_us(8000, Rounds{steady}, std::nullopt), 400.0)
      << "5 % of the period";
  EXPECT_NEAR(late_tolerance_us(8000, Rounds{wandering}, std::nullopt), 940.5, 1.0);
  EXPECT_DOUBLE_EQ(late_tolerance_us(8000, Rounds{hopeless}, std::nullopt), 4000.0)
      << "never past the stutter line";
  EXPECT_DOUBLE_EQ(late_tolerance_us(8000, Rounds{wandering}, 250.0), 250.0) << "the setting wins";
  // A burst in one round of four (a tenth of its frames at 12 ms) leaves the line where the
  // steady rounds put it: the median of the rounds' p95s, not the p95 of them all.
  std::vector<double> burst(steady);
  std::fill(burst.begin(), burst.begin() + 10, 12'000.0);
  EXPECT_DOUBLE_EQ(late_tolerance_us(8000, Rounds{steady, burst, steady, steady}, std::nullopt),
                   400.0);
}

TEST(Verdict, OnePercentLowIsTimeWeighted) {
  // 990 frames of 8 ms and 10 of 100 ms: the slowest frames reach 1 % of the 8.92 s at the
  // first 100 ms frame, so the 1 % low is 10 fps; 1000 frames of 8 ms give 125.
  std::vector<double> intervals(990, 8000.0);
  intervals.insert(intervals.end(), 10, 100'000.0);
  const PacingSummary hitchy = pacing_summary(intervals, 8400, 12000);
  EXPECT_NEAR(hitchy.one_percent_low_fps, 10.0, 1e-9);
  EXPECT_EQ(hitchy.late, 10u);
  EXPECT_EQ(hitchy.stutters, 10u);
  EXPECT_EQ(hitchy.frames, 1000u);
  EXPECT_NEAR(pacing_summary(std::vector<double>(1000, 8000.0), 8400, 12000).one_percent_low_fps,
              125.0, 1e-9);
  EXPECT_EQ(pacing_summary({}, 8400, 12000).frames, 0u);
}

TEST(Verdict, ProgressCountsCompletedCompilesAndCallsAnIdleSchedulerStarved) {
  auto baseline = game_rounds("baseline", std::nullopt, 1.0, 1.0, 0, 100);
  auto managed = game_rounds("managed", managed_spec(), 1.0, 1.0, 0, 200);
  // The control: a frame in five past the stutter line (a paced frame's pacing decides).
  auto control = game_rounds("unmanaged", unmanaged_spec(), 1.3, 1.0, 5, 300);
  // Each control round compiles 100 times over its frames; managed: once in all, or 50 times.
  auto add_compiles = [](std::vector<ScenarioOutcome>& rounds, std::size_t per_round,
                         bool managed) {
    for (ScenarioOutcome& o : rounds) {
      ScenarioTimeline& t = *o.timeline;
      t.time_origin_ns = 1'000'000'000;
      for (FrameRecord& f : t.frames) f.cpu_start_us = f.frame * 8000.0;
      for (std::size_t i = 0; i < per_round; ++i) {
        background::BackgroundTaskRecord task;
        task.managed = managed;
        task.queued_ns = t.time_origin_ns + static_cast<std::int64_t>(i) * 10'000'000;
        task.start_ns = task.queued_ns + 1'000'000;
        task.finish_ns = task.queued_ns + 5'000'000;
        task.outcome = "delivered";
        t.background_tasks.push_back(task);
      }
      background::BackgroundTaskRecord cancelled;
      cancelled.outcome = "cancelled";
      t.background_tasks.push_back(cancelled);
    }
  };
  add_compiles(control, 100, false);
  add_compiles(managed, 50, true);
  auto v = judge_study(all_of({&baseline, &managed, &control}), VerdictSettings{});
  ASSERT_TRUE(v.ok());
  const ConditionVerdict& m = v->conditions[0];
  EXPECT_EQ(m.progress.compiles, 6u * 50) << "completed only; the cancelled ones are not";
  EXPECT_NEAR(*m.progress.queue_to_done_p50_ms, 5.0, 1e-9);
  EXPECT_GT(m.progress.compiles_per_s, 0);
  // The same frames (their last one differs a little), twice the compiles.
  EXPECT_NEAR(v->conditions[1].progress.compiles_per_s / m.progress.compiles_per_s, 2.0, 1e-3);
  EXPECT_FALSE(m.starved);
  EXPECT_NE(v->summary.find("managed: non-intrusive, "), std::string::npos) << v->summary;
  EXPECT_NE(v->summary.find("(unmanaged, 4 threads: "), std::string::npos) << v->summary;

  auto idle = game_rounds("managed", managed_spec(), 1.0, 1.0, 0, 200);
  add_compiles(idle, 0, true);
  auto w = judge_study(all_of({&baseline, &idle, &control}), VerdictSettings{});
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->conditions[0].starved);
  EXPECT_EQ(w->conditions[0].decision, Decision::non_intrusive);
  EXPECT_NE(w->summary.find("managed: non-intrusive but starved"), std::string::npos) << w->summary;
  EXPECT_EQ(verdict_json(*w, VerdictSettings{})["conditions"][0]["starved"], true);
}

TEST(StudyRounds, ADecidedConditionStopsTakingRoundsWhileTheOthersGoOn) {
  // Three rounds: managed undecided (3 % and 12 % in turn), the control decided (x2).
  std::vector<ScenarioOutcome> so_far = study_so_far({1.03, 1.12, 1.03}, 600, 100);
  for (std::uint32_t r = 1; r <= 3; ++r) {
    std::vector<double> doubled = normal_sample(2000, 10, 200, 50 + r);
    ScenarioOutcome c = condition("unmanaged", unmanaged_spec(), doubled, true, r, 3);
    c.scenario.name = "study/unmanaged/round-" + std::to_string(r);
    c.scenario.study_budget_s = 600;
    c.scenario.study_max_rounds = 100;
    c.seconds = 10;
    so_far.push_back(std::move(c));
  }
  std::ostringstream log;
  const auto next = next_study_rounds(suite_of(std::move(so_far)), VerdictSettings{}, log);
  ASSERT_EQ(next.size(), 2u) << log.str();
  for (const Scenario& s : next) EXPECT_NE(s.condition, "unmanaged") << "decided: it stops";
  EXPECT_NE(log.str().find("adding round 4 for 1 condition (1 decided)"), std::string::npos)
      << log.str();

  // The next round's cost is what it repeats: baseline and managed, 20 s, not the control's
  // 10 s besides: with 90 s spent, a budget of 115 s has room for it.
  std::vector<ScenarioOutcome> again = study_so_far({1.03, 1.12, 1.03}, 115, 100);
  for (std::uint32_t r = 1; r <= 3; ++r) {
    ScenarioOutcome c =
        condition("unmanaged", unmanaged_spec(), normal_sample(2000, 10, 200, 50 + r), true, r, 3);
    c.scenario.name = "study/unmanaged/round-" + std::to_string(r);
    c.scenario.study_budget_s = 115;
    c.scenario.study_max_rounds = 100;
    c.seconds = 10;
    again.push_back(std::move(c));
  }
  std::vector<const ScenarioOutcome*> all;
  for (const ScenarioOutcome& o : again) all.push_back(&o);
  const auto verdict = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(verdict.ok());
  const StudyProgress progress = study_progress(all, *verdict);
  EXPECT_EQ(progress.seconds, 90.0);
  EXPECT_EQ(progress.last_round_seconds, 20.0);
  EXPECT_TRUE(progress.stop.empty()) << progress.stop;  // 90 + 20 <= 115
}

// With every other condition decided, a control dose below the smallest one detected still
// takes rounds (it may lower what the study can see), within the budget; the stop then reads
// as decided.
TEST(StudyRounds, TheControlsSmallerDosesTakeRoundsAfterTheRestIsDecided) {
  // Managed twice as slow (decided: intrusive); the control at 4 threads x2 (detected), at 1
  // thread 3 % and 12 % slower in turn (undecided).
  auto make = [](double budget_s) {
    std::vector<ScenarioOutcome> so_far = study_so_far({2.0, 2.0, 2.0}, budget_s, 100);
    for (std::uint32_t r = 1; r <= 3; ++r)
      for (const auto& [name, threads, factor] :
           {std::tuple{"unmanaged-4", 4u, 2.0},
            std::tuple{"unmanaged-1", 1u, r == 2 ? 1.12 : 1.03}}) {
        background::BackgroundSpec spec;
        spec.unmanaged_threads = threads;
        std::vector<double> frames = normal_sample(1000, 10, 200, r);
        for (double& v : frames) v *= factor;
        ScenarioOutcome c = condition(name, spec, frames, true, r, 3);
        c.scenario.name = std::string("study/") + name + "/round-" + std::to_string(r);
        c.scenario.study_budget_s = budget_s;
        c.scenario.study_max_rounds = 100;
        c.seconds = 10;
        so_far.push_back(std::move(c));
      }
    return so_far;
  };
  std::vector<ScenarioOutcome> so_far = make(600);
  std::vector<const ScenarioOutcome*> all;
  for (const ScenarioOutcome& o : so_far) all.push_back(&o);
  const auto verdict = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(verdict.ok());
  ASSERT_EQ(verdict->detected_from_threads, 4u);
  const StudyProgress progress = study_progress(all, *verdict);
  EXPECT_TRUE(progress.decided);
  EXPECT_EQ(progress.control_pending, 1u);
  EXPECT_TRUE(progress.stop.empty()) << progress.stop;
  std::ostringstream log;
  const auto next = next_study_rounds(suite_of(std::move(so_far)), VerdictSettings{}, log);
  ASSERT_EQ(next.size(), 2u) << log.str();
  EXPECT_EQ(next[0].condition, "unmanaged-1");
  EXPECT_EQ(next[1].condition, "baseline");

  // Out of budget (40 s spent a round, 20 s for the next): decided, and why it stopped there.
  std::vector<ScenarioOutcome> spent = make(125);
  std::vector<const ScenarioOutcome*> spent_all;
  for (const ScenarioOutcome& o : spent) spent_all.push_back(&o);
  const StudyProgress stopped =
      study_progress(spent_all, *judge_study(spent_all, VerdictSettings{}));
  EXPECT_EQ(stopped.stop,
            "decided (1 smaller control dose undecided); budget spent (120 s of 125 s, the next "
            "round would take 20 s)");
}

TEST(StudyRounds, AConditionIntrusiveOnOneEndpointIsDecidedWhateverItsOtherRows) {
  // Managed twice as slow in every round: intrusive on cpu_frame_us, while its frame interval
  // (unpaced: the same frames) is intrusive too and the GPU span untouched; no round is added.
  std::vector<ScenarioOutcome> so_far = study_so_far({2.0, 2.0, 2.0}, 600, 100);
  for (ScenarioOutcome& o : so_far)
    if (o.scenario.condition == "managed")
      for (std::size_t i = 0; i < o.timeline->frames.size(); i += 2)
        o.timeline->frames[i].gpu_span_us = 40 + 20.0 * (i % 4);  // a spread GPU span
  std::vector<const ScenarioOutcome*> all;
  for (const ScenarioOutcome& o : so_far) all.push_back(&o);
  const auto verdict = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->conditions[0].decision, Decision::intrusive);
  const StudyProgress progress = study_progress(all, *verdict);
  EXPECT_EQ(progress.undecided, 0u);
  EXPECT_EQ(progress.stop, "decided");
  std::ostringstream log;
  EXPECT_TRUE(next_study_rounds(suite_of(std::move(so_far)), VerdictSettings{}, log).empty());
}

// The smallest effect the rounds could have seen grows with their spread.
TEST(Verdict, UndecidedRowsSayWhatTheyCouldHaveDetected) {
  auto tight = study_so_far({1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, 0, 100);
  auto loose = study_so_far({0.95, 1.05, 0.97, 1.06, 0.94, 1.03}, 0, 100);
  auto judge = [](const std::vector<ScenarioOutcome>& outcomes) {
    std::vector<const ScenarioOutcome*> all;
    for (const ScenarioOutcome& o : outcomes) all.push_back(&o);
    return row_of(*judge_study(all, VerdictSettings{}), "managed", "cpu_frame_us");
  };
  const VerdictRow a = judge(tight), b = judge(loose);
  ASSERT_TRUE(a.detectable_ratio && b.detectable_ratio);
  EXPECT_NEAR(*a.detectable_ratio, 1.05, 1e-9) << "no spread: exactly the margin";
  EXPECT_GT(*b.detectable_ratio, 1.08);
  EXPECT_EQ(b.decision, Decision::inconclusive);
  EXPECT_GE(*b.detectable_tail, 0.01);
}

// The positive control at 1, 2 and 4 threads: the study says which dose it detects, and
// what that dose did.
TEST(Verdict, TheControlsDoseResponseNamesTheSmallestDoseDetected) {
  const std::vector<double> level(6, 1000.0);
  auto baseline = rounds_of("baseline", std::nullopt, level, 1.0, 10);
  auto managed = rounds_of("managed", managed_spec(), level, 1.0, 20);
  std::vector<std::vector<ScenarioOutcome>> controls;
  for (const auto& [threads, factor] :
       {std::pair{4u, 1.5}, std::pair{1u, 1.0}, std::pair{2u, 1.2}}) {
    background::BackgroundSpec spec = unmanaged_spec();
    spec.unmanaged_threads = threads;
    controls.push_back(
        rounds_of("unmanaged-" + std::to_string(threads), spec, level, factor, 100 * threads));
  }
  auto v = judge_study(all_of({&baseline, &managed, &controls[0], &controls[1], &controls[2]}),
                       VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->doses.size(), 3u);
  EXPECT_EQ(v->doses[0].threads, 1u) << "fewest threads first";
  EXPECT_EQ(v->doses[0].decision, Decision::non_intrusive);
  EXPECT_TRUE(v->doses[0].metric.empty());
  EXPECT_EQ(v->doses[1].threads, 2u);
  EXPECT_EQ(v->doses[1].decision, Decision::intrusive);
  EXPECT_EQ(v->doses[1].metric, "cpu_frame_us");
  EXPECT_NEAR(*v->doses[1].ratio_p50, 1.2, 0.01);
  EXPECT_EQ(v->detected_from_threads, 2u);
  EXPECT_TRUE(v->control_detected);
  EXPECT_NE(v->summary.find("control dose-response: 1 thread: non-intrusive; 2 threads: intrusive "
                            "(cpu_frame_us x1.2"),
            std::string::npos)
      << v->summary;
  EXPECT_NE(v->summary.find("the smallest dose detected is 2 normal-priority compile threads"),
            std::string::npos);
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_EQ(json["detected_from_threads"], 2);
  EXPECT_EQ(json["control_doses"][2]["threads"], 4);
  EXPECT_EQ(row_of(*v, "managed", "cpu_frame_us").decision, Decision::non_intrusive);
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
            "poll_gap_max_us,bg_managed,bg_boosted,bg_unmanaged,status,bg_held,"
            "frame_interval_us,stutter,gpu_span_us,cpu_phase_us,critical_path_us,wake_max_us,"
            "workers_missed,worker_busy_min_us,worker_busy_max_us,poll_scans,poller_cpu,"
            "loop_jobs_us,loop_submit_us,loop_tool_us,loop_gpu_wait_us,loop_pace_us,"
            "loop_woke_late_us,loop_run_delay_us,loop_on_cpu_us,loop_switches_voluntary,"
            "loop_switches_involuntary,loop_cpu,workers_run_delay_us,workers_run_delay_max_us,"
            "workers_on_cpu_us,poller_run_delay_us,workers_on_loop_cpu");
  EXPECT_NE(frames.find("s,0,-3.000,100.000,20.000,,,0,0,0,ok,0,,0,,,,,,,,,,,,,,,,,,,,,,,,,\n"),
            std::string::npos)
      << frames;
  const std::string bg = background_csv(s, t);
  EXPECT_NE(bg.find("s,1,managed,\"compile #1 A, quoted\",0,0,1,-1000.000,-500.000,1000.000,"
                    "delivered,0.000,0.000,1"),
            std::string::npos)
      << bg;
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
}  // namespace gpuoverlap
