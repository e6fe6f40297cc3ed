// Idle VkDevices kept between scenarios. Creating a device is most of what opening a scenario
// costs on NVIDIA (about 0.1 s of vkCreateDevice against under 0.01 s for its buffers and
// pipelines on an H200, and about 0.03 s more to destroy it): a main job of 70 scenarios spent
// 6.7 s creating devices. A scenario that asks for a device with the same queues, priorities
// and features as an idle one takes it instead of creating its own.
//
// Contract: a device is put here only idle (vkDeviceWaitIdle returned VK_SUCCESS) and with
// every object made from it destroyed, so the next scenario finds nothing of the last one on
// it but the queues. The pool destroys what it still holds when destroyed or cleared; it must
// be destroyed before the VkInstance. One thread at a time (the executor's); the mutex only
// keeps a mistake from corrupting it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "queues/queue_mapping.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::vk {

// A created device and what creating it decided, all a scenario needs instead of creating one.
struct PooledDevice {
  VkDevice handle = VK_NULL_HANDLE;
  std::string key;          // what it was created with (ScenarioDevice::device_key)
  std::string created_for;  // the scenario it was created for
  std::uint32_t uses = 0;   // scenarios that ran on it so far
  std::vector<MappedQueue> mapping;
  std::vector<QueuePriority> granted_priority;  // per scenario queue
  std::vector<std::string> priority_notes;
  bool global_priority_requested = false;
};

class DevicePool {
 public:
  // At most `max_idle` devices are kept; putting one more destroys the one idle longest.
  explicit DevicePool(std::size_t max_idle) : max_idle_(max_idle) {}
  ~DevicePool() { clear(); }
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // An idle device created with `key`, now the caller's; none: create one.
  std::optional<PooledDevice> take(const std::string& key);
  void put(PooledDevice device);
  // Destroys every idle device (a scenario that must run with no other device open).
  void clear();
  std::size_t idle() const;

 private:
  const std::size_t max_idle_;
  mutable std::mutex mutex_;
  std::vector<PooledDevice> idle_;  // oldest first
};

}  // namespace gpuoverlap::vk
