#include "engine/concurrent_suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuoverlap {

Result<ConcurrencyPlan> plan_concurrent(const std::vector<Scenario>& scenarios, std::size_t devices,
                                        std::uint32_t rounds) {
  if (devices == 0) return make_error("a concurrent run needs at least one device");
  if (rounds != 0 && (rounds < kMinConcurrencyRounds || rounds > kMaxConcurrencyRounds))
    return make_error(fmt::format(
        "--concurrency-rounds {}: give {} to {} (each round is one unit of the verdict)", rounds,
        kMinConcurrencyRounds, kMaxConcurrencyRounds));
  ConcurrencyPlan plan;
  plan.devices = devices;
  plan.rounds = rounds;
  plan.scenarios.resize(devices);
  plan.steps.resize(devices);
  std::uint64_t step = 0;
  auto on_every_device = [&](const Scenario& s) {
    ++step;
    for (std::size_t d = 0; d < devices; ++d) {
      plan.scenarios[d].push_back(s);
      plan.steps[d].push_back({step, false});
    }
  };
  for (const Scenario& s : scenarios) {
    if (rounds == 0 || !s.study.empty() || s.preemption) {
      on_every_device(s);
      if (rounds != 0) plan.together_only.push_back(s.name);
      continue;
    }
    std::string study = s.name;
    std::replace(study.begin(), study.end(), '/', '-');
    for (const Scenario& other : scenarios)
      if (&other != &s && (other.name == study || other.name.starts_with(study + "/")))
        return make_error(fmt::format(
            "--concurrency-rounds: the study of '{}' would be written to '{}', which scenario "
            "'{}' uses too; run them apart",
            s.name, study, other.name));
    const std::uint32_t frames = frames_per_round(s.frames, rounds);
    for (std::uint32_t round = 1; round <= rounds; ++round) {
      // -1: together; d: device d alone. Reversed every other round.
      std::vector<int> slots{-1};
      for (std::size_t d = 0; d < devices; ++d) slots.push_back(static_cast<int>(d));
      if (round % 2 == 0) std::reverse(slots.begin(), slots.end());
      for (const int slot : slots) {
        Scenario c = s;
        c.study = study;
        c.neighbours_study = true;
        c.condition = slot < 0 ? "together" : "alone";
        c.round = round;
        c.rounds = rounds;
        c.frames = frames;
        // The plan fixes every device's steps: no round is added to a study of neighbours.
        c.study_budget_s = 0;
        c.study_max_rounds = rounds;
        c.name = fmt::format("{}/{}/round-{}", study, c.condition, round);
        if (slot < 0) {
          on_every_device(c);
          continue;
        }
        ++step;
        plan.scenarios[static_cast<std::size_t>(slot)].push_back(std::move(c));
        plan.steps[static_cast<std::size_t>(slot)].push_back({step, true});
      }
    }
    plan.studied.push_back(study);
  }
  return plan;
}

Result<std::vector<std::vector<int>>> split_cpus(const std::vector<int>& cpus,
                                                 std::size_t parts) {
  if (parts == 0 || cpus.size() < 2 * parts)
    return make_error(fmt::format(
        "--split-cpus: {} CPUs beside the pollers for {} devices; each device needs two or more",
        cpus.size(), parts));
  std::vector<std::vector<int>> shares(parts);
  std::size_t next = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t size = cpus.size() / parts + (p < cpus.size() % parts ? 1 : 0);
    shares[p].assign(cpus.begin() + static_cast<std::ptrdiff_t>(next),
                     cpus.begin() + static_cast<std::ptrdiff_t>(next + size));
    next += size;
  }
  return shares;
}

DeviceLockstep::DeviceLockstep(const ConcurrencyPlan& plan,
                               std::chrono::milliseconds neighbour_wait_limit,
                               std::function<bool()> should_stop)
    : plan_(plan),
      wait_limit_(neighbour_wait_limit),
      should_stop_(std::move(should_stop)),
      gate_(std::make_unique<StepGate>(plan.devices)) {
  for (const auto& steps : plan.steps)
    if (!steps.empty()) last_step_ = std::max(last_step_, steps.back().step);
}

std::function<nlohmann::json(std::size_t, const Scenario&)> DeviceLockstep::before_scenario(
    std::size_t device) {
  return [this, device](std::size_t index, const Scenario&) -> nlohmann::json {
    const std::vector<PlannedStep>& steps = plan_.steps[device];
    const PlannedStep planned =
        index < steps.size() ? steps[index] : PlannedStep{last_step_ + 1 + (index - steps.size())};
    const auto start = std::chrono::steady_clock::now();
    const StepGate::Arrival arrival =
        gate_->arrive(device, planned.step, start + wait_limit_, should_stop_);
    const double waited_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return {{"concurrent",
             {{"devices", plan_.devices},
              {"step", planned.step},
              {"alone", planned.alone},
              {"waited_ms", std::round(waited_ms * 10) / 10},
              // false: a neighbour was not done with the step before within the limit (or the
              // run was stopped), so this scenario may have overlapped other work.
              {"in_step", arrival == StepGate::Arrival::in_step}}}};
  };
}

void DeviceLockstep::done(std::size_t device) { gate_->leave(device); }

}  // namespace gpuoverlap
