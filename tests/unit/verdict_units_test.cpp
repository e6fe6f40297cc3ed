// The units of a verdict's evidence: rounds paired with the baseline's, blocks of an alternating
// condition's own runs, the tail against the other units' p99; and the statistics over them.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/student_t.h"
#include "analysis/study_files.h"
#include "analysis/verdict.h"
#include "verdict_test_data.h"

namespace gpuoverlap::verdict_tests {
namespace {

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

}  // namespace
}  // namespace gpuoverlap::verdict_tests
