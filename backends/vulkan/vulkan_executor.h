// The Vulkan executor: runs a validated scenario on one physical device with the measurement
// protocol of DESIGN.md section 3 and the D3D12 -> Vulkan translation of section 4.
// A device (with the scenario's queues and priorities) is created per scenario, because the
// global priority of a queue is fixed when its device is created.
#pragma once

#include <cstddef>
#include <memory>

#include "backends/vulkan/vulkan_instance.h"
#include "engine/executor.h"
#include "preemption/load_process.h"

namespace gpuoverlap::vk {

class ScenarioDevice;  // backends/vulkan/scenario_device.h

class VulkanExecutor final : public ScenarioExecutor {
 public:
  // Contract: `instance` outlives the executor; device_index < instance.devices().size().
  VulkanExecutor(const Instance& instance, std::size_t device_index)
      : instance_(instance), device_index_(device_index) {}

  Result<ScenarioTimeline> run(const Scenario& scenario, const RunSettings& settings,
                               const ProgressCallback& progress) override;
  Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory,
                                   std::uint32_t timeout_ms) override;

  Result<ScenarioTimeline> run_load_process(const Scenario& load_only, const RunSettings& settings,
                                            preemption::ParentLink& parent) override;
  bool abandoned_device() const override { return abandoned_device_; }

 private:
  // A preemption scenario: in this process, or with the load in a child (--load-process).
  Result<ScenarioTimeline> run_preemption(const Scenario& scenario, const RunSettings& settings,
                                          const ProgressCallback& progress);
  // The validation layers' counts when a run began, so that its meta reports only its own.
  struct ValidationMark {
    std::uint32_t errors = 0, hazards = 0;
  };
  ValidationMark validation_mark() const;
  void describe_run(ScenarioTimeline& timeline, const ValidationMark& since) const;
  // A created device for `scenario` on this executor's physical device, or why not (a device
  // that may still be busy on the GPU marks this executor abandoned). The device keeps
  // references to both arguments.
  Result<std::unique_ptr<ScenarioDevice>> open_device(const Scenario& scenario,
                                                      const RunSettings& settings);

  const Instance& instance_;
  std::size_t device_index_;
  bool abandoned_device_ = false;
};

}  // namespace gpuoverlap::vk
