// One Vulkan physical device as the engine's DeviceBackend (engine/device_executor.h): opens
// a ScenarioDevice per scenario, on a VkDevice of its own or, where the executor allows it, an
// idle one an earlier scenario created with the same queues, priorities and features (the
// global priority of a queue is fixed when its device is created; device_pool.h), runs the
// ping-pong probe, and describes a run's device and validation counts. The scenario itself
// runs in the engine's loops.
#pragma once

#include <cstddef>
#include <memory>

#include "backends/vulkan/device_pool.h"
#include "backends/vulkan/vulkan_instance.h"
#include "engine/device_executor.h"

namespace gpuoverlap::vk {

class VulkanDevice final : public DeviceBackend {
 public:
  // Contract: `instance` outlives this; device_index < instance.devices().size().
  VulkanDevice(const Instance& instance, std::size_t device_index)
      : instance_(instance), device_index_(device_index) {}

  Result<std::unique_ptr<ScenarioBackend>> open_scenario(const Scenario& scenario,
                                                         const RunSettings& settings,
                                                         DeviceReuse reuse) override;
  Result<PingPongResult> ping_pong(std::uint32_t rounds, StampMemory memory, RoundTripPath path,
                                   std::uint32_t timeout_ms) override;
  std::size_t device_index() const override { return device_index_; }
  ValidationMark validation_mark() const override;
  void describe_run(ScenarioTimeline& timeline, const ValidationMark& since) const override;
  bool abandoned_device() const override { return abandoned_device_; }

 private:
  // Idle devices kept: the main job's frame scenarios outside the study use about eight
  // configurations (a DIRECT queue alone or with a COMPUTE one, at their priorities, with or
  // without textures); an idle device holds no scenario's memory.
  static constexpr std::size_t kMaxIdleDevices = 8;

  const Instance& instance_;
  std::size_t device_index_;
  bool abandoned_device_ = false;
  // Shared with the scenarios' devices, which give theirs back to it when they close.
  std::shared_ptr<DevicePool> pool_ = std::make_shared<DevicePool>(kMaxIdleDevices);
};

}  // namespace gpuoverlap::vk
