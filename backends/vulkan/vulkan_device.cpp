#include "backends/vulkan/vulkan_device.h"

#include "backends/vulkan/scenario_device.h"
#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::vk {

Result<PingPongResult> VulkanDevice::ping_pong(std::uint32_t rounds, StampMemory memory,
                                               RoundTripPath path, std::uint32_t timeout_ms) {
  const PhysicalDeviceInfo& info = instance_.devices().at(device_index_);
  // The smallest scenario: one queue that runs compute, one workload (never run).
  Scenario probe;
  probe.name = "ping-pong";
  probe.queues.push_back({"direct", QueueType::direct, QueuePriority::normal});
  probe.workloads.push_back({"probe", 0, WorkloadKind::compute, 1, 1, {}, std::nullopt});
  attach_frame_plan(probe);
  RunSettings settings;
  settings.stamp_memory = memory;
  settings.shader_clock = false;
  ScenarioDevice device(instance_, info, probe, settings);
  Status created = device.create();
  Result<PingPongResult> result = !created ? Result<PingPongResult>(created.error())
                                  : path == RoundTripPath::semaphore
                                      ? device.semaphore_round_trip(rounds, timeout_ms)
                                      : device.ping_pong(rounds, timeout_ms);
  abandoned_device_ = abandoned_device_ || device.gpu_may_be_busy();
  return result;
}

Result<std::unique_ptr<ScenarioBackend>> VulkanDevice::open_scenario(const Scenario& scenario,
                                                                     const RunSettings& settings,
                                                                     DeviceReuse reuse) {
  if (reuse == DeviceReuse::fresh) pool_->clear();
  auto device =
      std::make_unique<ScenarioDevice>(instance_, instance_.devices().at(device_index_), scenario,
                                       settings, reuse == DeviceReuse::idle_ok ? pool_ : nullptr);
  if (Status s = device->create(); !s) {
    abandoned_device_ = abandoned_device_ || device->gpu_may_be_busy();
    return s.error();
  }
  return std::unique_ptr<ScenarioBackend>(std::move(device));
}

ValidationMark VulkanDevice::validation_mark() const {
  return {instance_.validation_errors(), instance_.sync_hazards()};
}

void VulkanDevice::describe_run(ScenarioTimeline& timeline, const ValidationMark& since) const {
  timeline.meta["device"] = instance_.devices().at(device_index_).describe();
  timeline.meta["device"]["index"] = device_index_;
  timeline.meta["validation"] = {{"enabled", instance_.validation_enabled()},
                                 {"synchronization", instance_.sync_validation_enabled()},
                                 {"errors", instance_.validation_errors() - since.errors},
                                 {"sync_hazards", instance_.sync_hazards() - since.hazards}};
}

}  // namespace gpuoverlap::vk
