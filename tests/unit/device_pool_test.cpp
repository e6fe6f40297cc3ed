// The Vulkan backend's idle devices (backends/vulkan/device_pool.h), on made-up handles: a
// device is taken only by the key it was created with, at most once, the one idle longest is
// let go when the pool is full, and everything still held is let go when cleared or destroyed.
#include "backends/vulkan/device_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gpuoverlap::vk {
namespace {

VkDevice handle(std::uintptr_t n) { return reinterpret_cast<VkDevice>(n); }

PooledDevice idle_device(std::uintptr_t n, const std::string& key) {
  return {
      .handle = handle(n), .key = key, .created_for = "scenario " + std::to_string(n), .uses = 1};
}

TEST(DevicePool, ADeviceIsTakenOnceAndOnlyByItsKey) {
  std::vector<VkDevice> destroyed;
  DevicePool pool(4, [&](VkDevice d) { destroyed.push_back(d); });
  pool.put(idle_device(1, "direct"));
  pool.put(idle_device(2, "direct+compute"));
  EXPECT_FALSE(pool.take("direct+compute high"));
  auto taken = pool.take("direct");
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->handle, handle(1));
  EXPECT_EQ(taken->created_for, "scenario 1");
  EXPECT_FALSE(pool.take("direct")) << "taken already";
  EXPECT_EQ(pool.idle(), 1u);
  EXPECT_TRUE(destroyed.empty());
}

TEST(DevicePool, AFullPoolLetsGoOfTheDeviceIdleLongest) {
  std::vector<VkDevice> destroyed;
  DevicePool pool(2, [&](VkDevice d) { destroyed.push_back(d); });
  pool.put(idle_device(1, "a"));
  pool.put(idle_device(2, "b"));
  pool.put(idle_device(3, "c"));
  EXPECT_EQ(destroyed, std::vector<VkDevice>{handle(1)});
  EXPECT_FALSE(pool.take("a"));
  EXPECT_TRUE(pool.take("b"));
  EXPECT_TRUE(pool.take("c"));
}

TEST(DevicePool, ClearingOrDestroyingLetsGoOfEveryIdleDevice) {
  std::vector<VkDevice> destroyed;
  {
    DevicePool pool(4, [&](VkDevice d) { destroyed.push_back(d); });
    pool.put(idle_device(1, "a"));
    pool.put(idle_device(2, "a"));
    pool.clear();
    EXPECT_EQ(destroyed, (std::vector<VkDevice>{handle(1), handle(2)}));
    EXPECT_EQ(pool.idle(), 0u);
    pool.put(idle_device(3, "b"));
  }
  EXPECT_EQ(destroyed, (std::vector<VkDevice>{handle(1), handle(2), handle(3)}));
}

}  // namespace
}  // namespace gpuoverlap::vk
