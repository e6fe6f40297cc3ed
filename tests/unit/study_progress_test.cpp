// Sequential stopping (study_progress, next_study_rounds): the rounds a study adds while it is
// undecided and its budget lasts, and what its undecided rows could have seen.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "analysis/verdict.h"
#include "verdict_test_data.h"

namespace gpuoverlap::verdict_tests {
namespace {

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

// A condition's round `r` of 3 in a study of budget `budget_s`, its scenario taking 10 s.
ScenarioOutcome round_of(const std::string& name, std::optional<background::BackgroundSpec> bg,
                         const std::vector<double>& frames, std::uint32_t r, double budget_s) {
  ScenarioOutcome c = condition(name, std::move(bg), frames, true, r, 3);
  c.scenario.name = "study/" + name + "/round-" + std::to_string(r);
  c.scenario.study_budget_s = budget_s;
  c.scenario.study_max_rounds = 100;
  c.seconds = 10;
  return c;
}

std::vector<const ScenarioOutcome*> pointers(const std::vector<ScenarioOutcome>& outcomes) {
  std::vector<const ScenarioOutcome*> out;
  for (const ScenarioOutcome& o : outcomes) out.push_back(&o);
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
  EXPECT_NE(log.str().find("adding round 4 for 1 condition (1 stopped"), std::string::npos)
      << log.str();

  // The next round's cost is what it repeats: baseline and managed, 20 s, not the control's
  // 10 s besides: with 90 s spent, a budget of 115 s has room for it.
  std::vector<ScenarioOutcome> again = study_so_far({1.03, 1.12, 1.03}, 115, 100);
  for (std::uint32_t r = 1; r <= 3; ++r)
    again.push_back(
        round_of("unmanaged", unmanaged_spec(), normal_sample(2000, 10, 200, 50 + r), r, 115));
  const std::vector<const ScenarioOutcome*> all = pointers(again);
  const auto verdict = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(verdict.ok());
  const StudyProgress progress = study_progress(all, *verdict);
  EXPECT_EQ(progress.seconds, 90.0);
  EXPECT_EQ(progress.last_round_seconds, 20.0);
  EXPECT_TRUE(progress.stop.empty()) << progress.stop;  // 90 + 20 <= 115
}

// While a condition is undecided, the next round is its and the baseline's alone: the null
// control (undecided or not) and a control dose below the smallest one detected wait, so the
// budget buys the undecided condition rounds.
TEST(StudyRounds, WhileAConditionIsUndecidedTheControlsWait) {
  std::vector<ScenarioOutcome> so_far = study_so_far({1.03, 1.12, 1.03}, 600, 100);
  for (std::uint32_t r = 1; r <= 3; ++r)
    for (const auto& [name, threads, factor] :
         {std::tuple{"unmanaged-4", 4u, 2.0}, std::tuple{"unmanaged-1", 1u, r == 2 ? 1.12 : 1.03},
          std::tuple{"null", 0u, r == 2 ? 1.12 : 1.03}}) {
      background::BackgroundSpec spec;
      spec.unmanaged_threads = threads;
      std::vector<double> frames = normal_sample(1000, 10, 200, 70 + r);
      for (double& v : frames) v *= factor;
      ScenarioOutcome c =
          round_of(name, threads ? std::optional(spec) : std::nullopt, frames, r, 600);
      c.scenario.null_control = threads == 0;
      so_far.push_back(std::move(c));
    }
  const std::vector<const ScenarioOutcome*> all = pointers(so_far);
  const auto verdict = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(verdict.ok());
  ASSERT_EQ(verdict->detected_from_threads, 4u);
  const StudyProgress progress = study_progress(all, *verdict);
  EXPECT_FALSE(progress.decided);
  EXPECT_EQ(progress.last_round_seconds, 20.0) << "baseline and managed";
  std::ostringstream log;
  const auto next = next_study_rounds(suite_of(std::move(so_far)), VerdictSettings{}, log);
  ASSERT_EQ(next.size(), 2u) << log.str();
  for (const Scenario& s : next)
    EXPECT_TRUE(s.condition == "baseline" || s.condition == "managed") << s.condition;
  EXPECT_NE(log.str().find("adding round 4 for 1 condition (3 stopped"), std::string::npos)
      << log.str();
  // The waiting dose's line says why its call rests on its first rounds.
  const std::size_t dose = verdict->summary.find("unmanaged-1 (positive control)");
  ASSERT_NE(dose, std::string::npos) << verdict->summary;
  const std::string line = verdict->summary.substr(dose, verdict->summary.find('\n', dose) - dose);
  EXPECT_NE(line.find("a dose below the one detected (4 threads): it takes more rounds only once "
                      "every condition is decided"),
            std::string::npos)
      << line;
}

// A dose that waited while a condition was undecided takes rounds again once it is decided,
// numbered on from the study's last round (here: the baseline and managed ran round 4, the
// doses only 1 to 3; managed, the baseline's twin, is decided).
TEST(StudyRounds, ADoseThatWaitedTakesTheNextRoundOnceTheRestIsDecided) {
  std::vector<ScenarioOutcome> so_far = study_so_far({1.0, 1.0, 1.0, 1.0}, 600, 100);
  for (std::uint32_t r = 1; r <= 3; ++r)
    for (const auto& [name, threads, factor] :
         {std::tuple{"unmanaged-4", 4u, 2.0},
          std::tuple{"unmanaged-1", 1u, r == 2 ? 1.12 : 1.03}}) {
      background::BackgroundSpec spec;
      spec.unmanaged_threads = threads;
      std::vector<double> frames = normal_sample(1000, 10, 200, 90 + r);
      for (double& v : frames) v *= factor;
      so_far.push_back(round_of(name, spec, frames, r, 600));
    }
  const std::vector<const ScenarioOutcome*> all = pointers(so_far);
  const auto verdict = judge_study(all, VerdictSettings{});
  ASSERT_TRUE(verdict.ok());
  ASSERT_EQ(verdict->rounds, 4u);
  ASSERT_EQ(verdict->detected_from_threads, 4u);
  const StudyProgress progress = study_progress(all, *verdict);
  EXPECT_TRUE(progress.decided);
  EXPECT_EQ(progress.control_pending, 1u);
  EXPECT_EQ(progress.last_round_seconds, 20.0) << "the baseline's round 4 and the dose's round 3";
  std::ostringstream log;
  const auto next = next_study_rounds(suite_of(std::move(so_far)), VerdictSettings{}, log);
  ASSERT_EQ(next.size(), 2u) << log.str();
  std::set<std::string> names;
  for (const Scenario& s : next) names.insert(s.name);
  EXPECT_EQ(names, (std::set<std::string>{"study/baseline/round-5", "study/unmanaged-1/round-5"}))
      << log.str();
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
        so_far.push_back(round_of(name, spec, frames, r, budget_s));
      }
    return so_far;
  };
  std::vector<ScenarioOutcome> so_far = make(600);
  const std::vector<const ScenarioOutcome*> all = pointers(so_far);
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

}  // namespace
}  // namespace gpuoverlap::verdict_tests
