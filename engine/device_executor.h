// The engine's ScenarioExecutor, the same for every backend: a frame scenario through the
// frame loop, a preemption scenario through the preemption loop in this process or with its
// load in a second gpuoverlap process (--load-process), and the load process's own side.
// What it needs of a backend, per physical device, is DeviceBackend: open one scenario's
// device objects, the ping-pong probe, and the device and validation facts of a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/executor.h"
#include "engine/scenario_backend.h"

namespace gpuoverlap {

// The API's validation counts when a run began, so that its meta reports only its own.
struct ValidationMark {
  std::uint32_t errors = 0, hazards = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // One scenario's device objects: a device per scenario, because a queue's global priority
  // is fixed when its device is created. An Error says why not (e.g. a refused priority).
  // Contract: the scenario's frame plan is attached and free of errors (the executor checks);
  // the backend records that plan and computes none.
  virtual Result<std::unique_ptr<ScenarioBackend>> open_scenario(const Scenario& scenario,
                                                                 const RunSettings& settings) = 0;
  virtual Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory,
                                           std::uint32_t timeout_ms) = 0;
  // This device's index among the API's devices (the load process opens the same one).
  virtual std::size_t device_index() const = 0;
  virtual ValidationMark validation_mark() const = 0;
  // Adds meta.json's "device" and "validation" (counted since `since`) to a run's timeline.
  virtual void describe_run(ScenarioTimeline& timeline, const ValidationMark& since) const = 0;
  // A device was abandoned outside a scenario's loops (a failed setup or probe that may have
  // left work on the GPU).
  virtual bool abandoned_device() const = 0;
};

class DeviceExecutor final : public ScenarioExecutor {
 public:
  explicit DeviceExecutor(std::unique_ptr<DeviceBackend> device) : device_(std::move(device)) {}

  Result<ScenarioTimeline> run(const Scenario& scenario, const RunSettings& settings,
                               const ProgressCallback& progress) override;
  Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory,
                                   std::uint32_t timeout_ms) override {
    return device_->ping_pong(rounds, memory, timeout_ms);
  }
  Result<ScenarioTimeline> run_load_process(const Scenario& load_only, const RunSettings& settings,
                                            preemption::ParentLink& parent) override;
  bool abandoned_device() const override {
    return abandoned_device_ || device_->abandoned_device();
  }

 private:
  // A preemption scenario: in this process, or with the load in a child (--load-process).
  Result<ScenarioTimeline> run_preemption(const Scenario& scenario, const RunSettings& settings,
                                          const ProgressCallback& progress);
  // Notes a scenario whose GPU work may still run: its backend then frees nothing.
  void settle(ScenarioBackend& backend, bool gpu_may_be_busy);

  std::unique_ptr<DeviceBackend> device_;
  bool abandoned_device_ = false;
};

}  // namespace gpuoverlap
