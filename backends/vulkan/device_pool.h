// Idle VkDevices kept between scenarios. Creating a device is most of what opening a scenario
// costs on NVIDIA: on an H200 a main job's 70 scenarios spent 6.7 s in vkCreateDevice (about
// 0.1 s each) against 1.2 s for their buffers, uploads and pipelines together, and 2.7 s more
// closing them (about 0.04 s each). A scenario that asks for a device with the same queues,
// priorities and features as an idle one takes it instead of creating its own.
//
// Contract: a device is put here only idle (vkDeviceWaitIdle returned VK_SUCCESS), after a run
// that did not fail, and with every object made from it destroyed, so the next scenario finds
// nothing of the last one on it but the queues. The pool destroys what it still holds when
// destroyed or cleared; it must be destroyed before the VkInstance. Thread-safe (a scenario
// may close on another thread than the next one opens on).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <functional>
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
  // `destroy` frees a device the pool lets go (vkDestroyDevice; a test records it instead).
  explicit DevicePool(
      std::size_t max_idle, std::function<void(VkDevice)> destroy =
                                [](VkDevice device) { vkDestroyDevice(device, nullptr); })
      : max_idle_(max_idle), destroy_(std::move(destroy)) {}
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
  const std::function<void(VkDevice)> destroy_;
  mutable std::mutex mutex_;
  std::vector<PooledDevice> idle_;  // oldest first
};

}  // namespace gpuoverlap::vk
