// run --concurrent without a GPU: the step gate that holds devices in step (threads, so also
// under ThreadSanitizer), the plan of together and alone rounds, the pollers' CPUs.
#include "engine/concurrent_suite.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "core/cpu_affinity.h"
#include "jobs/cpu_spec.h"
#include "queues/poller_placement.h"
#include "scenarios/presets.h"

namespace gpuoverlap {
namespace {

using namespace std::chrono_literals;

std::chrono::steady_clock::time_point far_deadline() {
  return std::chrono::steady_clock::now() + 10min;
}

// Every party's steps in turn, each "running" its step while recording who else was running:
// equal steps run together, and a step no other party takes runs alone.
TEST(StepGate, PartiesTakeEqualStepsTogetherAndOthersAlone) {
  // Party 0 takes steps 1, 2, 4; party 1 takes 1, 3, 4; party 2 takes 1, 4 (it idles at 2, 3).
  const std::vector<std::vector<std::uint64_t>> steps = {{1, 2, 4}, {1, 3, 4}, {1, 4}};
  StepGate gate(steps.size());
  std::mutex mutex;
  std::vector<std::set<std::uint64_t>> running(steps.size());  // per party, the step it runs
  std::vector<std::vector<std::set<std::size_t>>> seen(steps.size());  // others seen per step
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < steps.size(); ++p)
    threads.emplace_back([&, p] {
      for (const std::uint64_t step : steps[p]) {
        ASSERT_EQ(gate.arrive(p, step, far_deadline()), StepGate::Arrival::in_step);
        std::set<std::size_t> others;
        {
          std::lock_guard lock(mutex);
          running[p] = {step};
          for (std::size_t q = 0; q < steps.size(); ++q)
            if (q != p && !running[q].empty() && *running[q].begin() != step) others.insert(q);
        }
        std::this_thread::yield();
        {
          std::lock_guard lock(mutex);
          running[p].clear();
          seen[p].push_back(others);
        }
      }
      gate.leave(p);
    });
  for (std::thread& t : threads) t.join();
  // No party ever saw another running a different step.
  for (std::size_t p = 0; p < steps.size(); ++p)
    for (const auto& others : seen[p]) EXPECT_TRUE(others.empty()) << "party " << p;
}

TEST(StepGate, ALeftPartyIsNotWaitedForAndADeadlineEndsTheWait) {
  StepGate gate(2);
  gate.leave(1);
  EXPECT_EQ(gate.arrive(0, 5, far_deadline()), StepGate::Arrival::in_step);
  StepGate stuck(2);
  // Party 1 never arrives: the wait ends at its deadline, or when asked to stop.
  EXPECT_EQ(stuck.arrive(0, 1, std::chrono::steady_clock::now()), StepGate::Arrival::waited_out);
  EXPECT_EQ(stuck.arrive(
                0, 2, far_deadline(), [] { return true; }, 1ms),
            StepGate::Arrival::stopped);
}

TEST(StepGate, AWaitingPartyIsReleasedWhenTheOtherArrivesOrLeaves) {
  StepGate gate(2);
  std::atomic<bool> released{false};
  std::thread waiter([&] {
    EXPECT_EQ(gate.arrive(0, 3, far_deadline()), StepGate::Arrival::in_step);
    released = true;
  });
  // Party 1 arriving at an earlier step does not release step 3; leaving does.
  EXPECT_EQ(gate.arrive(1, 2, far_deadline()), StepGate::Arrival::in_step);
  EXPECT_FALSE(released.load());
  gate.leave(1);
  waiter.join();
  EXPECT_TRUE(released.load());
}

std::vector<Scenario> named_presets(std::initializer_list<const char*> names) {
  std::vector<Scenario> out;
  for (const char* n : names) {
    auto resolved = resolve_scenarios(n, "");
    EXPECT_TRUE(resolved.ok()) << n;
    if (resolved) out.insert(out.end(), resolved->begin(), resolved->end());
  }
  return out;
}

TEST(ConcurrencyPlan, WithoutRoundsEveryScenarioRunsOnEveryDeviceInOneStep) {
  auto plan = plan_concurrent(named_presets({"default", "no-barriers"}), 3, 0);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->scenarios.size(), 3u);
  for (std::size_t d = 0; d < 3; ++d) {
    ASSERT_EQ(plan->scenarios[d].size(), 2u);
    EXPECT_EQ(plan->scenarios[d][1].name, "no-barriers");
    EXPECT_EQ(plan->steps[d][0].step, 1u);
    EXPECT_EQ(plan->steps[d][1].step, 2u);
    EXPECT_FALSE(plan->steps[d][1].alone);
  }
  EXPECT_TRUE(plan->studied.empty());
}

TEST(ConcurrencyPlan, RoundsRunTogetherAndEachDeviceAloneInAlternatingOrder) {
  auto given = named_presets({"default"});
  given[0].frames = 300;
  auto plan = plan_concurrent(given, 2, 3);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->studied, std::vector<std::string>{"default"});
  // Round 1: together, gpu0 alone, gpu1 alone; round 2 reversed; round 3 as round 1.
  std::vector<std::string> order0, order1;
  for (const Scenario& s : plan->scenarios[0]) order0.push_back(s.name);
  for (const Scenario& s : plan->scenarios[1]) order1.push_back(s.name);
  EXPECT_EQ(order0,
            (std::vector<std::string>{"default/together/round-1", "default/alone/round-1",
                                      "default/alone/round-2", "default/together/round-2",
                                      "default/together/round-3", "default/alone/round-3"}));
  EXPECT_EQ(order1[0], "default/together/round-1");
  // The steps: equal steps of the two devices are the together rounds; every alone step is
  // one device's only.
  std::set<std::uint64_t> steps0, steps1;
  for (const PlannedStep& p : plan->steps[0]) steps0.insert(p.step);
  for (const PlannedStep& p : plan->steps[1]) steps1.insert(p.step);
  for (std::size_t i = 0; i < plan->scenarios[0].size(); ++i) {
    const bool shared = steps1.count(plan->steps[0][i].step) > 0;
    EXPECT_EQ(shared, !plan->steps[0][i].alone) << order0[i];
    EXPECT_EQ(plan->scenarios[0][i].condition, shared ? "together" : "alone") << order0[i];
  }
  // Each device's alone round 1 comes before the other's (device order), round 2's after.
  const auto step_of = [&](std::size_t d, const std::string& name) {
    for (std::size_t i = 0; i < plan->scenarios[d].size(); ++i)
      if (plan->scenarios[d][i].name == name) return plan->steps[d][i].step;
    return std::uint64_t{0};
  };
  EXPECT_LT(step_of(0, "default/alone/round-1"), step_of(1, "default/alone/round-1"));
  EXPECT_GT(step_of(0, "default/alone/round-2"), step_of(1, "default/alone/round-2"));
  // The study's frames are split over its rounds; it is never extended.
  for (const Scenario& s : plan->scenarios[0]) {
    EXPECT_TRUE(s.neighbours_study);
    EXPECT_EQ(s.study, "default");
    EXPECT_EQ(s.frames, 100u);
    EXPECT_EQ(s.rounds, 3u);
    EXPECT_EQ(s.study_budget_s, 0);
  }
}

TEST(ConcurrencyPlan, StudiesAndPreemptionRunTogetherOnceAndBadRoundsAreRefused) {
  auto plan = plan_concurrent(
      named_presets({"non-intrusiveness", "preemption-many-draws-high", "default"}), 2, 3);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->studied, std::vector<std::string>{"default"});
  EXPECT_FALSE(plan->together_only.empty());
  for (const std::string& name : plan->together_only) EXPECT_NE(name, "default");
  for (const std::uint32_t rounds : {1u, 2u, kMaxConcurrencyRounds + 1}) {
    auto refused = plan_concurrent(named_presets({"default"}), 2, rounds);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("--concurrency-rounds"), std::string::npos);
  }
  // A matrix cell's study is one folder; a scenario already named so is refused.
  auto cell = named_presets({"default"});
  cell[0].name = "matrix/cell";
  cell.push_back(cell[0]);
  cell[1].name = "matrix-cell";
  auto clash = plan_concurrent(cell, 2, 3);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.error().message.find("matrix-cell"), std::string::npos);
}

TEST(PollerPlacements, OneCpuPerPollerListedOrChosenAndRefusedWhenShort) {
  const std::vector<int> cpus = usable_cpu_ids();
  auto none = poller_placements("none", PollerPriority::normal, 2);
  ASSERT_TRUE(none.ok());
  ASSERT_EQ(none->size(), 2u);
  EXPECT_FALSE((*none)[0].cpu || (*none)[1].cpu);
  auto automatic = poller_placements("auto", PollerPriority::high, 2);
  ASSERT_TRUE(automatic.ok());
  ASSERT_EQ(automatic->size(), 2u);
  EXPECT_EQ((*automatic)[1].priority, PollerPriority::high);
  if (cpus.size() >= 2 + kMinCpusForOwnPollerCore - 1) {
    ASSERT_TRUE((*automatic)[0].cpu && (*automatic)[1].cpu);
    EXPECT_NE(*(*automatic)[0].cpu, *(*automatic)[1].cpu);
  } else {
    EXPECT_FALSE((*automatic)[0].cpu || (*automatic)[1].cpu);  // too few CPUs to spare two
  }
  if (cpus.size() >= 2) {
    const std::string list = std::to_string(cpus[1]) + "," + std::to_string(cpus[0]);
    auto listed = poller_placements(list, PollerPriority::normal, 2);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    EXPECT_EQ(*(*listed)[0].cpu, cpus[1]);
    EXPECT_EQ(*(*listed)[1].cpu, cpus[0]);
    const std::string twice = std::to_string(cpus[0]) + "," + std::to_string(cpus[0]);
    auto repeated = poller_placements(twice, PollerPriority::normal, 2);
    ASSERT_FALSE(repeated.ok());
    EXPECT_NE(repeated.error().message.find("twice"), std::string::npos);
  }
  for (const char* bad : {"0", "0,1,2", "auto,1", "x,y", "", "0,"}) {
    auto refused = poller_placements(bad, PollerPriority::normal, 2);
    EXPECT_FALSE(refused.ok()) << bad;
  }
}

TEST(SplitCpus, ConsecutiveSharesAtMostOneApartAndTwoOrMoreEach) {
  auto shares = split_cpus({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13}, 2);
  ASSERT_TRUE(shares.ok()) << shares.error().message;
  EXPECT_EQ((*shares)[0], (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ((*shares)[1], (std::vector<int>{7, 8, 9, 10, 12, 13}));
  auto four = split_cpus({2, 3, 4, 5, 6, 7, 8, 9, 10}, 4);
  ASSERT_TRUE(four.ok());
  std::set<int> seen;
  for (const auto& share : *four) {
    EXPECT_GE(share.size(), 2u);
    EXPECT_LE(share.size(), 3u);
    for (int cpu : share) EXPECT_TRUE(seen.insert(cpu).second) << cpu << " in two shares";
  }
  EXPECT_EQ(seen.size(), 9u);
  auto short_of_cpus = split_cpus({0, 1, 2}, 2);
  ASSERT_FALSE(short_of_cpus.ok());
  EXPECT_NE(short_of_cpus.error().message.find("--split-cpus"), std::string::npos);
}

// A game frame's "cores" resolved for a device's share: its workers follow, and totals given
// per worker scale with them; a count of workers stays.
TEST(SplitCpus, AGameFramesCoresAreItsShare) {
  jobs::CpuFrameSpec from_cores;
  from_cores.workers_from_cores = true;
  from_cores.workers = 31;
  from_cores.jobs_per_worker = 4;
  from_cores.cpu_ms_per_worker = 0.5;
  jobs::resolve_cores(from_cores, 15);
  EXPECT_EQ(from_cores.workers, 14u);
  EXPECT_EQ(from_cores.jobs_per_frame, 56u);
  EXPECT_DOUBLE_EQ(from_cores.cpu_ms_per_frame, 7.0);
  jobs::CpuFrameSpec totals;
  totals.workers_from_cores = true;
  jobs::resolve_cores(totals, 2);
  EXPECT_EQ(totals.workers, 1u);
  EXPECT_EQ(totals.jobs_per_frame, 60u) << "a total given per frame stays";
  jobs::CpuFrameSpec counted;
  counted.workers = 8;
  jobs::resolve_cores(counted, 3);
  EXPECT_EQ(counted.workers, 8u);
}

}  // namespace
}  // namespace gpuoverlap
