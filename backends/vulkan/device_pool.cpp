#include "backends/vulkan/device_pool.h"

#include <utility>

namespace gpuoverlap::vk {

std::optional<PooledDevice> DevicePool::take(const std::string& key) {
  std::lock_guard lock(mutex_);
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    if (it->key != key) continue;
    PooledDevice device = std::move(*it);
    idle_.erase(it);
    return device;
  }
  return std::nullopt;
}

void DevicePool::put(PooledDevice device) {
  std::vector<VkDevice> evicted;
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(device));
    while (idle_.size() > max_idle_) {
      evicted.push_back(idle_.front().handle);
      idle_.erase(idle_.begin());
    }
  }
  for (VkDevice handle : evicted) destroy_(handle);
}

void DevicePool::clear() {
  std::vector<PooledDevice> idle;
  {
    std::lock_guard lock(mutex_);
    idle.swap(idle_);
  }
  for (const PooledDevice& device : idle) destroy_(device.handle);
}

std::size_t DevicePool::idle() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

}  // namespace gpuoverlap::vk
