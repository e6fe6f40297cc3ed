#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "core/kept_memory.h"
#include "scenario_test_texts.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::scenario_tests {
namespace {

constexpr const char* kStudy = R"(name = "st"
description = "a study"
foreground = "three-dispatches"
frames = 7
warmup_frames = 1
[[condition]]
name = "baseline"
[[condition]]
name = "managed"
[condition.background]
tasks = 3
[[condition]]
name = "control"
[condition.background]
unmanaged_threads = 2
)";

TEST(Study, ExpandsIntoOneScenarioPerConditionWithTheForegroundUnchanged) {
  ASSERT_TRUE(is_study(kStudy));
  EXPECT_FALSE(is_study(two_queues()));
  auto study = parse_study(kStudy, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  auto foreground = resolve_scenario("three-dispatches");
  ASSERT_TRUE(foreground.ok());
  const auto scenarios = expand_study(*study, *foreground);
  ASSERT_EQ(scenarios.size(), 3u);
  EXPECT_EQ(scenarios[0].name, "st/baseline");
  EXPECT_EQ(scenarios[1].name, "st/managed");
  EXPECT_EQ(scenarios[2].condition, "control");
  for (const Scenario& s : scenarios) {
    EXPECT_EQ(s.study, "st");
    EXPECT_EQ(s.frames, 7u);
    EXPECT_EQ(s.warmup_frames, 1u);
    ASSERT_EQ(s.workloads.size(), foreground->workloads.size());
    for (std::size_t w = 0; w < s.workloads.size(); ++w) {
      EXPECT_EQ(s.workloads[w].name, foreground->workloads[w].name);
      EXPECT_EQ(s.workloads[w].iterations, foreground->workloads[w].iterations);
      EXPECT_EQ(s.workloads[w].depends_on.size(), foreground->workloads[w].depends_on.size());
    }
  }
  EXPECT_FALSE(scenarios[0].background.has_value());
  EXPECT_EQ(scenarios[1].background->tasks, 3u);
  EXPECT_EQ(scenarios[2].background->unmanaged_threads, 2u);
}

// A condition this host cannot give what it asks (the other OS's policy, more CPUs reserved
// than it has) is valid in a study, left out of its rounds and named with why; the same keys
// in a scenario's [background] are refused (above).
TEST(Study, AConditionThisHostCannotRunIsNamedAsNotRunAndLeftOut) {
#if defined(_WIN32)
  const std::string other_os = "batch-nice19";
#else
  const std::string other_os = "eco";
#endif
  const std::string text = std::string(kStudy) + "[[condition]]\nname = \"other-os\"\n" +
                           "[condition.background]\npolicy = \"" + other_os + "\"\n" +
                           "[[condition]]\nname = \"too-many\"\n[condition.background]\n" +
                           "cpus = \"reserved:4096\"\nin_run_all = false\n";
  // in_run_all belongs to the study, not a condition's table.
  const auto misplaced = parse_study(text, "st.toml");
  ASSERT_FALSE(misplaced.ok());
  EXPECT_NE(misplaced.error().message.find("in_run_all"), std::string::npos)
      << misplaced.error().message;
  std::string fixed = text;
  fixed.erase(fixed.find("in_run_all = false\n"));
  fixed = "in_run_all = false\n" + fixed;
  auto study = parse_study(fixed, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  EXPECT_FALSE(study->in_run_all);
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  ASSERT_EQ(scenarios.size(), 3u) << "only the three conditions this host can run";
  for (const Scenario& s : scenarios) {
    EXPECT_NE(s.condition, "other-os");
    EXPECT_NE(s.condition, "too-many");
    ASSERT_EQ(s.study_not_run.size(), 2u);
    EXPECT_EQ(s.study_not_run[0].first, "other-os");
    EXPECT_NE(s.study_not_run[0].second.find("is not a policy of this OS"), std::string::npos)
        << s.study_not_run[0].second;
    EXPECT_EQ(s.study_not_run[1].first, "too-many");
    EXPECT_NE(s.study_not_run[1].second.find("fewer than two"), std::string::npos)
        << s.study_not_run[1].second;
  }
}

// The policy study and the engine-styles studies are presets of their own: `run --all` names
// them instead of running them.
TEST(Study, ThePolicyStudyIsListedButNotRunByRunAll) {
  auto suite = suite_scenarios();
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  for (const Scenario& s : suite->scenarios) {
    EXPECT_NE(s.study, "background-policies") << s.name;
    EXPECT_FALSE(s.study.starts_with("engine-styles")) << s.name;
  }
  ASSERT_EQ(suite->not_in_run_all.size(), 4u);
  std::string named;
  for (const std::string& line : suite->not_in_run_all) named += line + "\n";
  for (const char* study : {"background-policies", "engine-styles-block", "engine-styles-spin",
                            "engine-styles-yield"})
    EXPECT_NE(named.find(std::string("gpuoverlap run ") + study), std::string::npos) << named;
  // Each engine-styles study runs its foreground's frame loop in its style, in every condition.
  for (const auto& [study, style] : std::vector<std::pair<std::string, jobs::LoopWait>>{
           {"engine-styles-block", jobs::LoopWait::block},
           {"engine-styles-spin", jobs::LoopWait::spin},
           {"engine-styles-yield", jobs::LoopWait::yield}}) {
    auto expanded = resolve_scenarios(study);
    ASSERT_TRUE(expanded.ok()) << expanded.error().message;
    for (const Scenario& s : *expanded) {
      ASSERT_TRUE(s.cpu) << s.name;
      EXPECT_EQ(s.cpu->loop_wait, style) << s.name;
    }
  }
  // A style asks for a frame loop that waits for jobs: a foreground without [cpu] has none.
  const auto no_cpu = resolve_scenarios("engine-styles-yield", "three-dispatches");
  ASSERT_FALSE(no_cpu.ok());
  EXPECT_NE(no_cpu.error().message.find("foreground_loop_wait: the foreground 'three-dispatches' "
                                        "has no [cpu] table"),
            std::string::npos)
      << no_cpu.error().message;
  auto policies = resolve_scenarios("background-policies");
  ASSERT_TRUE(policies.ok()) << policies.error().message;
  std::set<std::string> conditions;
  for (const Scenario& s : *policies) conditions.insert(s.condition);
  for (const char* always :
       {"baseline", "null", "idle", "normal", "idle-gaps", "unmanaged-4", "unmanaged"})
    EXPECT_TRUE(conditions.contains(always)) << always;
  // Memory is kept where this build's malloc is glibc's (not under a sanitizer).
  EXPECT_EQ(conditions.contains("idle-keep-memory"), kept_memory_unsupported_reason().empty());
}

TEST(Study, RoundsInterleaveTheConditionsAndShareTheFrames) {
  std::string text = kStudy;
  text.replace(text.find("frames = 7"), 10, "frames = 7\nrounds = 3");
  auto study = parse_study(text, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  ASSERT_EQ(scenarios.size(), 9u);
  std::vector<std::string> order;
  for (const Scenario& s : scenarios) {
    order.push_back(s.name);
    EXPECT_EQ(s.frames, 3u) << "ceil(7 / 3)";
    EXPECT_EQ(s.rounds, 3u);
  }
  EXPECT_EQ(order, (std::vector<std::string>{
                       "st/baseline/round-1", "st/managed/round-1", "st/control/round-1",
                       "st/control/round-2", "st/managed/round-2", "st/baseline/round-2",
                       "st/baseline/round-3", "st/managed/round-3", "st/control/round-3"}));
  EXPECT_EQ(frames_per_round(30, 6), 5u);
  EXPECT_EQ(frames_per_round(5, 6), 1u);
  EXPECT_EQ(frames_per_round(5, 1), 5u);
  text.replace(text.find("rounds = 3"), 10, "rounds = 0");
  EXPECT_FALSE(parse_study(text, "st.toml").ok());
}

TEST(Study, ABudgetAddsRoundsThatContinueTheInterleaving) {
  std::string text = kStudy;
  text.replace(text.find("frames = 7"), 10,
               "frames = 7\nrounds = 3\nbudget_s = 90\nmax_rounds = 5");
  auto study = parse_study(text, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  EXPECT_EQ(study->budget_s, 90.0);
  EXPECT_EQ(study->max_rounds, 5u);
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  for (const Scenario& s : scenarios) {
    EXPECT_EQ(s.study_budget_s, 90.0);
    EXPECT_EQ(s.study_max_rounds, 5u);
  }
  // Round 3 ran baseline, managed, control; round 4 runs them the other way round.
  const std::vector<Scenario> third(scenarios.end() - 3, scenarios.end());
  const auto fourth = next_study_round(third);
  ASSERT_EQ(fourth.size(), 3u);
  EXPECT_EQ(fourth[0].name, "st/control/round-4");
  EXPECT_EQ(fourth[2].name, "st/baseline/round-4");
  EXPECT_EQ(fourth[0].round, 4u);
  EXPECT_EQ(fourth[0].rounds, 3u) << "the planned rounds stay what the file said";
  EXPECT_EQ(fourth[0].frames, third[2].frames);
  EXPECT_EQ(fourth[1].background->tasks, 3u);
  // Defaults: 600 s and 100 rounds; a study of one round is never extended.
  auto plain = parse_study(kStudy, "st.toml");
  EXPECT_EQ(plain->budget_s, kDefaultStudyBudgetS);
  EXPECT_EQ(plain->max_rounds, kDefaultStudyMaxRounds);
  EXPECT_EQ(expand_study(*plain, *resolve_scenario("three-dispatches"))[0].study_budget_s, 0.0);
  // Fewer max_rounds than planned rounds, or a negative budget, is an error at its line.
  std::string fewer = text;
  fewer.replace(fewer.find("max_rounds = 5"), 14, "max_rounds = 2");
  auto refused = parse_study(fewer, "st.toml");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("st.toml:"), std::string::npos);
  EXPECT_NE(refused.error().message.find("max_rounds"), std::string::npos);
  std::string negative = text;
  negative.replace(negative.find("budget_s = 90"), 13, "budget_s = -1");
  EXPECT_FALSE(parse_study(negative, "st.toml").ok());
}

// round_ms: every condition's round, added rounds included, carries the time limit; a negative
// or out-of-range one is refused at its line.
TEST(Study, ARoundTimeLimitReachesEveryRoundAndIsChecked) {
  std::string text = kStudy;
  text.replace(text.find("frames = 7"), 10, "frames = 7\nrounds = 2\nround_ms = 750");
  auto study = parse_study(text, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  EXPECT_EQ(study->round_ms, 750u);
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  for (const Scenario& s : scenarios) EXPECT_EQ(s.study_round_ms, 750u) << s.name;
  const std::vector<Scenario> second(scenarios.end() - 3, scenarios.end());
  for (const Scenario& s : next_study_round(second)) EXPECT_EQ(s.study_round_ms, 750u);
  EXPECT_EQ(parse_study(kStudy, "st.toml")->round_ms, 0u);  // no limit by default
  for (const char* bad : {"round_ms = -1", "round_ms = 3600001", "round_ms = 1.5"}) {
    std::string refused_text = text;
    refused_text.replace(refused_text.find("round_ms = 750"), 14, bad);
    auto refused = parse_study(refused_text, "st.toml");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("st.toml:"), std::string::npos) << bad;
    EXPECT_NE(refused.error().message.find("round_ms"), std::string::npos) << bad;
  }
}

TEST(Study, RejectsStudiesWithoutExactlyOneBaselineOrWithDuplicateNames) {
  auto no_baseline = parse_study(R"(name = "st"
foreground = "default"
[[condition]]
name = "a"
[condition.background]
tasks = 1
)",
                                 "st.toml");
  ASSERT_FALSE(no_baseline.ok());
  EXPECT_NE(no_baseline.error().message.find("exactly one condition without [background]"),
            std::string::npos);
  auto twice = parse_study(R"(name = "st"
foreground = "default"
[[condition]]
name = "a"
[[condition]]
name = "a"
)",
                           "st.toml");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("st.toml:6: two conditions are named 'a'"),
            std::string::npos)
      << twice.error().message;
  auto none = parse_study("name = \"st\"\nforeground = \"default\"\n", "st.toml");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("needs [[condition]]"), std::string::npos);
  // A study is not a scenario, and says so.
  const std::string e = error_of(kStudy);
  EXPECT_NE(e.find("this is a study"), std::string::npos) << e;
}

// A null control runs the baseline's settings as a condition: it needs no [background], is
// not a second baseline, and its key takes one value.
TEST(Study, ANullControlIsAConditionOfItsOwnAndNotASecondBaseline) {
  const std::string head = "name = \"st\"\nforeground = \"default\"\n[[condition]]\nname = \"b\"\n";
  auto ok = parse_study(head + "[[condition]]\nname = \"aa\"\ncontrol = \"null\"\n", "st.toml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->conditions.size(), 2u);
  EXPECT_TRUE(ok->conditions[1].null_control);
  EXPECT_FALSE(ok->conditions[1].background);
  EXPECT_FALSE(ok->conditions[0].null_control);
  auto positive =
      parse_study(head + "[[condition]]\nname = \"aa\"\ncontrol = \"positive\"\n", "st.toml");
  ASSERT_FALSE(positive.ok());
  EXPECT_NE(positive.error().message.find("control must be \"null\""), std::string::npos)
      << positive.error().message;
  auto with_work = parse_study(
      head +
          "[[condition]]\nname = \"aa\"\ncontrol = \"null\"\n[condition.background]\ntasks = 1\n",
      "st.toml");
  ASSERT_FALSE(with_work.ok());
  EXPECT_NE(with_work.error().message.find("a null control has no [condition.background]"),
            std::string::npos)
      << with_work.error().message;
  auto only_null = parse_study(
      "name = \"st\"\nforeground = \"default\"\n[[condition]]\nname = \"aa\"\ncontrol = \"null\"\n",
      "st.toml");
  ASSERT_FALSE(only_null.ok()) << "a null control is no baseline";
  EXPECT_NE(only_null.error().message.find("exactly one condition without [background]"),
            std::string::npos);
}

TEST(Study, ResolvingTheNonIntrusivenessPresetGivesItsConditionsAndTheControlsDoses) {
  auto scenarios = resolve_scenarios("non-intrusiveness");
  ASSERT_TRUE(scenarios.ok()) << scenarios.error().message;
  ASSERT_EQ(scenarios->size(), 7u * 3u) << "seven conditions, three rounds";
  EXPECT_EQ((*scenarios)[0].name, "non-intrusiveness/baseline/round-1");
  EXPECT_EQ((*scenarios)[0].frames, 120u) << "360 frames per condition over 3 rounds";
  EXPECT_EQ((*scenarios)[0].study_round_ms, 1000u) << "or 1 s of them";
  EXPECT_EQ((*scenarios)[0].workloads.size(), 8u) << "the default preset's workloads";
  ASSERT_TRUE((*scenarios)[0].cpu) << "the foreground is the game frame";
  EXPECT_EQ((*scenarios)[0].cpu->wait, jobs::WaitMode::spin);
  EXPECT_EQ((*scenarios)[1].condition, "null");
  EXPECT_TRUE((*scenarios)[1].null_control) << "the A/A test: the baseline's settings again";
  EXPECT_FALSE((*scenarios)[1].background);
  EXPECT_FALSE((*scenarios)[0].null_control);
  EXPECT_EQ((*scenarios)[2].condition, "idle-spinners");
  EXPECT_TRUE((*scenarios)[2].negative_control) << "idle-priority threads on every CPU";
  ASSERT_TRUE((*scenarios)[2].background);
  EXPECT_TRUE((*scenarios)[2].background->idle_spinners);
  EXPECT_TRUE((*scenarios)[2].background->outside_processor()) << "no compile is queued";
  EXPECT_FALSE((*scenarios)[3].negative_control);
  EXPECT_EQ((*scenarios)[3].background->mode, background::ProcessingMode::allowed);
  EXPECT_EQ((*scenarios)[3].background->max_concurrent, 2u);
  EXPECT_EQ((*scenarios)[4].background->action,
            background::MeasurementsAction::commit_results_high_priority);
  EXPECT_EQ((*scenarios)[5].background->unmanaged_threads, 4u);
  EXPECT_EQ((*scenarios)[6].background->unmanaged_threads,
            std::max(1u, std::thread::hardware_concurrency()))
      << "one per hardware thread: the dose that must intrude";
  EXPECT_EQ((*scenarios)[0].study_budget_s, 33.0);
  auto other = resolve_scenarios("non-intrusiveness", "three-dispatches");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ((*other)[0].workloads.size(), 3u) << "--foreground replaces the foreground";
  EXPECT_FALSE(resolve_scenarios("default", "three-dispatches").ok())
      << "--foreground applies to studies only";
  EXPECT_FALSE(resolve_scenarios("non-intrusiveness", "no-such-thing").ok());
  EXPECT_FALSE(resolve_scenarios("non-intrusiveness", "non-intrusiveness").ok())
      << "a study cannot be a foreground";
}

}  // namespace
}  // namespace gpuoverlap::scenario_tests
