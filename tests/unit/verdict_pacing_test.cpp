// A paced game frame's verdict: its pacing decides (the frame interval's median, late frames,
// stutters), the late line, the 1 % low, the null control's false alarms, and the work asked.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "analysis/study_files.h"
#include "analysis/verdict.h"
#include "verdict_test_data.h"

namespace gpuoverlap::verdict_tests {
namespace {

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

// The negative control (idle-priority threads on every foreground CPU): every frame is its
// evidence, no power rule or compile count applies to it, and an intrusive call on it is the
// harness's fault, said in the summary and verdict.json; a quiet one says the harness left
// the frame alone.
TEST(Verdict, AnIntrusiveNegativeControlIsAHarnessFault) {
  background::BackgroundSpec spinners;
  spinners.idle_spinners = true;
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.01, 0.005, 0, 3, 120, 8);
  auto quiet = paced_rounds("idle-spinners", spinners, false, 1.0, 0.01, 0.005, 0, 3, 120, 9);
  for (ScenarioOutcome& o : quiet) {
    o.scenario.negative_control = true;
    for (FrameRecord& f : o.timeline->frames) f.bg_managed = 0;  // no compile marks a frame
  }
  auto v = judge_study(all_of({&baseline, &quiet}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->conditions.size(), 1u);
  EXPECT_TRUE(v->conditions[0].negative_control);
  EXPECT_EQ(v->conditions[0].active_frames, v->conditions[0].frames) << "every frame is evidence";
  EXPECT_TRUE(v->conditions[0].scheduling.empty()) << "it has no compile threads to describe";
  EXPECT_TRUE(v->has_negative);
  EXPECT_NE(v->conditions[0].decision, Decision::intrusive);
  EXPECT_FALSE(v->harness_fault);
  EXPECT_NE(v->summary.find("negative control not called intrusive"), std::string::npos)
      << v->summary;

  // The same control with 60 % of its frames late: the measurement disturbs the frame.
  auto disturbed = paced_rounds("idle-spinners", spinners, false, 1.0, 0.6, 0.005, 0, 3, 120, 10);
  for (ScenarioOutcome& o : disturbed) {
    o.scenario.negative_control = true;
    for (FrameRecord& f : o.timeline->frames) f.bg_managed = 0;
  }
  auto faulty = judge_study(all_of({&baseline, &disturbed}), VerdictSettings{});
  ASSERT_TRUE(faulty.ok()) << faulty.error().message;
  EXPECT_EQ(faulty->conditions[0].decision, Decision::intrusive);
  EXPECT_TRUE(faulty->harness_fault);
  EXPECT_NE(faulty->summary.find("HARNESS FAULT"), std::string::npos) << faulty->summary;
  const nlohmann::json json = verdict_json(*faulty, VerdictSettings{});
  EXPECT_TRUE(json["harness_fault"].get<bool>());
  EXPECT_TRUE(json["conditions"][0]["negative_control"].get<bool>());
}

// Spinners as a condition of their own (`idle_spinners = true` without the control, as the
// yielding engine's study has them): every frame is evidence, an intrusive call is the
// condition's, never a harness fault, and no compiles done is not starving.
TEST(Verdict, SpinnersThatAreNotTheNegativeControlAreAConditionOfTheirOwn) {
  background::BackgroundSpec spinners;
  spinners.idle_spinners = true;
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.01, 0.005, 0, 3, 120, 8);
  auto taken = paced_rounds("idle-spinners", spinners, false, 1.0, 0.6, 0.005, 0, 3, 120, 10);
  for (ScenarioOutcome& o : taken)
    for (FrameRecord& f : o.timeline->frames) f.bg_managed = 0;  // no compile marks a frame
  auto v = judge_study(all_of({&baseline, &taken}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->conditions.size(), 1u);
  const ConditionVerdict& c = v->conditions[0];
  EXPECT_FALSE(c.negative_control);
  EXPECT_TRUE(c.spinners);
  EXPECT_EQ(c.active_frames, c.frames) << "every frame is evidence";
  EXPECT_EQ(c.scheduling, "idle-priority spinners");
  EXPECT_EQ(c.decision, Decision::intrusive);
  EXPECT_FALSE(v->harness_fault);
  EXPECT_FALSE(v->has_negative);
  EXPECT_EQ(v->summary.find("HARNESS FAULT"), std::string::npos) << v->summary;
  EXPECT_NE(v->summary.find("idle-spinners (idle-priority threads on every foreground CPU, no "
                            "compiles): intrusive"),
            std::string::npos)
      << v->summary;
  // Quiet spinners are non-intrusive, not starved (they did no compiles, as they never do).
  auto long_baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.0, 0.001, 0, 6, 300, 8);
  auto quiet = paced_rounds("idle-spinners", spinners, false, 1.0, 0.0, 0.001, 0, 6, 300, 9);
  for (ScenarioOutcome& o : quiet)
    for (FrameRecord& f : o.timeline->frames) f.bg_managed = 0;
  auto calm = judge_study(all_of({&long_baseline, &quiet}), VerdictSettings{});
  ASSERT_TRUE(calm.ok()) << calm.error().message;
  ASSERT_EQ(calm->conditions[0].decision, Decision::non_intrusive) << calm->summary;
  EXPECT_EQ(calm->conditions[0].progress.compiles, 0u);
  EXPECT_FALSE(calm->conditions[0].starved);
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_TRUE(json["conditions"][0]["spinners"].get<bool>());
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

// The dose that must intrude: a paced frame whose workers need more than half a period each is
// late at half of every CPU, so one normal-priority thread per CPU it uses must be detected;
// the study says whether it was, and what an undecided condition's rounds could have resolved.
TEST(Verdict, TheDoseThatMustIntrudeIsNamedAndAnUndecidedCallSaysWhatItCouldResolve) {
  Scenario frame;
  frame.cpu = jobs::CpuFrameSpec{};
  frame.cpu->workers = 15;
  frame.cpu->cpu_ms_per_frame = 75;  // 5 ms a worker
  frame.cpu->frame_period_ms = 8;
  const auto must = must_intrude_dose(frame);
  ASSERT_TRUE(must.has_value());
  EXPECT_EQ(must->threads, 16u) << "the workers' CPUs and the poller's";
  EXPECT_NE(must->why.find("5.0 ms of work per frame takes 10.0 ms, past the 8.0 ms period"),
            std::string::npos)
      << must->why;
  Scenario slack = frame;
  slack.cpu->cpu_ms_per_frame = 45;  // 3 ms a worker: 6 ms at half a CPU fits the period
  EXPECT_FALSE(must_intrude_dose(slack).has_value());
  Scenario unpaced = frame;
  unpaced.cpu->frame_period_ms = 0;
  EXPECT_FALSE(must_intrude_dose(unpaced).has_value());

  background::BackgroundSpec one, every_cpu;
  one.unmanaged_threads = 1;
  every_cpu.unmanaged_threads = 16;
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0.01, 0.005, 0, 3, 120, 30);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0.03, 0.005, 0, 3, 120, 31);
  auto dose_1 = paced_rounds("unmanaged-1", one, false, 1.0, 0.01, 0.005, 0, 3, 120, 32);
  auto dose_16 = paced_rounds("unmanaged", every_cpu, false, 1.0, 0.95, 0.005, 0, 3, 120, 33);
  for (auto* rounds : {&baseline, &managed, &dose_1, &dose_16})
    for (ScenarioOutcome& o : *rounds) o.scenario.cpu->cpu_ms_per_frame = 75;
  auto v = judge_study(all_of({&baseline, &managed, &dose_1, &dose_16}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->must_intrude_threads, 16u);
  EXPECT_TRUE(v->must_intrude_detected);
  EXPECT_NE(v->summary.find("the dose that must intrude is 16 threads (one normal-priority "
                            "thread on each of the frame's 16 CPUs"),
            std::string::npos)
      << v->summary;
  EXPECT_NE(v->summary.find("period): detected"), std::string::npos) << v->summary;
  const ConditionVerdict& m = v->conditions[0];
  ASSERT_EQ(m.condition, "managed");
  ASSERT_TRUE(is_inconclusive(m.decision)) << to_string(m.decision);
  ASSERT_TRUE(m.resolvable_tail.has_value());
  EXPECT_GT(*m.resolvable_tail, VerdictSettings{}.tail_margin) << "above the margin it tests";
  EXPECT_EQ(m.units, 3u);
  EXPECT_NE(v->summary.find("its 3 rounds could resolve a median x"), std::string::npos)
      << v->summary;

  // verdict.json keeps both, and reads them back.
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_EQ(json["must_intrude"]["threads"], 16);
  EXPECT_TRUE(json["must_intrude"]["detected"].get<bool>());
  EXPECT_EQ(json["conditions"][0]["resolvable"]["units"], 3);
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "gpuoverlap-must-intrude-verdict.json";
  { std::ofstream(file) << json.dump(); }
  const auto loaded = load_verdict_json(file);
  std::filesystem::remove(file);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->verdict.must_intrude_threads, 16u);
  EXPECT_TRUE(loaded->verdict.must_intrude_detected);
  EXPECT_EQ(loaded->verdict.must_intrude_why, v->must_intrude_why);
  EXPECT_EQ(loaded->verdict.conditions[0].resolvable_tail, m.resolvable_tail);
  EXPECT_EQ(loaded->verdict.conditions[0].units, 3u);
  EXPECT_EQ(describe_resolvable(loaded->verdict.conditions[0]), describe_resolvable(m));
}

}  // namespace
}  // namespace gpuoverlap::verdict_tests
