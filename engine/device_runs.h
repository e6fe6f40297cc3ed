// `run` on the devices chosen: each device's scenarios in a results folder of its own (OUT, or
// OUT/gpu<index> on several devices), one device after another, or every device at once, a
// thread each, held in step by a concurrency plan (concurrent_suite.h), each thread kept to its
// device's share of the CPUs (cpu_plan.h) before its device is opened.
//
// What one device's run does (its options, its suite, its tables and verdicts) is the
// caller's `RunOnDevice`; its status is the caller's number, and so is the run's: this keeps
// each device's, in order. A device that failed stops its own scenarios only; the others run.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "core/result.h"
#include "engine/concurrent_suite.h"
#include "engine/executor.h"
#include "engine/gpu_api.h"
#include "engine/suite_runner.h"
#include "queues/device_selection.h"

namespace gpuoverlap {

// What one device runs: which device, where its results go, its executor, the hook that holds
// it in step with the others (empty one device after another) and where its text goes.
struct DeviceJob {
  const DeviceChoice& chosen;
  std::size_t slot = 0;  // its place among the devices chosen
  std::filesystem::path out;
  ScenarioExecutor& executor;
  std::function<nlohmann::json(std::size_t, const Scenario&)> before_scenario;
  std::ostream& text;  // the tables and verdicts: `out` of run_devices, or its device's part
  std::ostream& log;   // progress and notes: `log`, or its lines prefixed with the device
};
// One device's run into `outcome`; returns its exit status.
using RunOnDevice = std::function<int(const DeviceJob& job, SuiteOutcome& outcome)>;

struct DeviceRunsRequest {
  GpuApi& api;
  const DeviceChoices& choices;  // `several`: each device in OUT/gpu<index>
  std::filesystem::path out;     // OUT, made and checked
  // Every device at once as planned; null: one device after another.
  const ConcurrencyPlan* plan = nullptr;
  // Each device's CPUs (CpuPlan::cpu_shares), its thread kept to them; empty: all of them.
  std::vector<std::vector<int>> cpu_shares;
  // Asked before each device of a run one after another: true leaves the rest unrun. Also how
  // long a device at once waits for its neighbours (DeviceLockstep).
  std::function<bool()> should_stop;
  // The status of a device whose run escaped with an exception (a bug, std::bad_alloc), from
  // an environment Error naming the device: at once, one device's thread must not end them all.
  std::function<int(const Error&)> status_of_error;
};

struct DeviceRuns {
  std::vector<DeviceRun> runs;  // each device's folder, description and outcome, as run
  std::vector<int> statuses;    // each device's status, in the same order
  // Every device's executor, kept until the process ends (an abandoned device's instance is
  // not torn down: commands' finish).
  std::vector<std::unique_ptr<ScenarioExecutor>> executors;
};

// An environment Error where a device's folder cannot be made. Devices at once write their
// text to `out` after the last has ended, each after a "--- device gpu<index>" line.
Result<DeviceRuns> run_devices(const DeviceRunsRequest& request, const RunOnDevice& run_on,
                               std::ostream& out, std::ostream& log);

}  // namespace gpuoverlap
