// `run --concurrent`: the same scenarios on several devices at once, a thread per device, held
// in step (core/step_gate.h) so that each scenario starts on every device once every device has
// finished the one before: what a device measures is measured with its neighbours busy with
// the same work.
//
// With concurrency rounds (`--concurrency-rounds R`), a frame scenario X becomes a study of
// neighbours (Scenario::neighbours_study) on every device: R rounds, each with X run on all
// devices together ("X/together/round-r") and on each device alone while the others wait
// ("X/alone/round-r"), the order reversed every other round as a study's conditions are (a
// drift over the run then falls on both sides). Each device's verdict, together against alone
// with the study's statistics, is written by analysis/verdict.h as any study's. Studies and
// preemption scenarios run together once, outside the question.
//
// API neutral: the threads and the executors are the caller's; this plans the steps and holds
// the devices in them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/step_gate.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {

inline constexpr std::uint32_t kMinConcurrencyRounds = 3;  // the verdict's units are rounds
inline constexpr std::uint32_t kMaxConcurrencyRounds = 100;

// Where one scenario of a device's list stands in the run.
struct PlannedStep {
  std::uint64_t step = 0;  // rising along each device's list; equal steps run together
  bool alone = false;      // the other devices wait while it runs
};

struct ConcurrencyPlan {
  std::size_t devices = 0;
  std::uint32_t rounds = 0;  // 0: every scenario once, on all devices together
  // Per device, in run order: the scenarios (every device has the same names; an alone round
  // of another device is absent from a device's list) and their steps.
  std::vector<std::vector<Scenario>> scenarios;
  std::vector<std::vector<PlannedStep>> steps;
  std::vector<std::string> studied;        // the studies of neighbours, one per frame scenario
  std::vector<std::string> together_only;  // with rounds: the studies and preemption scenarios
};

// The plan for `scenarios` (validated, their frames set) on `devices` devices with `rounds`
// concurrency rounds (0, or kMinConcurrencyRounds to kMaxConcurrencyRounds: an input Error
// otherwise). A study of neighbours is named after its scenario with '/' as '-' (a matrix's
// cell is one study folder); a name that another scenario already has is an input Error.
Result<ConcurrencyPlan> plan_concurrent(const std::vector<Scenario>& scenarios, std::size_t devices,
                                        std::uint32_t rounds);

// `run --concurrent --split-cpus`: `cpus` (the CPUs left beside the pollers) split into `parts`
// shares of consecutive CPUs, their sizes at most one apart, one per device, so that a CPU-bound
// scenario on one device does not compete with another's. An input Error where a share would
// have fewer than two CPUs (a game frame's workers and its frame loop).
Result<std::vector<std::vector<int>>> split_cpus(const std::vector<int>& cpus, std::size_t parts);

// Holds a plan's devices in step. Each device's thread gives its run_suite the hook
// `before_scenario(device)` and calls `done(device)` when its run_suite returns (a device that
// failed stops its own scenarios; the others no longer wait for it).
class DeviceLockstep {
 public:
  // A device waits for its neighbours at most `neighbour_wait_limit` per scenario (a safety
  // net: a hung neighbour ends at its frame deadline), then goes on out of step and says so
  // in the scenario's meta.json; it stops waiting when `should_stop` says so.
  DeviceLockstep(const ConcurrencyPlan& plan, std::chrono::milliseconds neighbour_wait_limit,
                 std::function<bool()> should_stop);

  // SuiteOptions::before_scenario of device `device`: waits for the scenario's step and returns
  // meta.json's "concurrent": the step, the devices running beside it, the wait. A scenario past
  // the plan (a study's added round) takes the next step after the plan's last.
  std::function<nlohmann::json(std::size_t index, const Scenario&)> before_scenario(
      std::size_t device);
  void done(std::size_t device);

 private:
  const ConcurrencyPlan& plan_;
  std::chrono::milliseconds wait_limit_;
  std::function<bool()> should_stop_;
  std::uint64_t last_step_ = 0;
  std::unique_ptr<StepGate> gate_;
};

}  // namespace gpuoverlap
