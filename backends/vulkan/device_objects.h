// Owning handles for the Vulkan objects of one scenario's device (one RAII type per object
// kind), and the device itself. The hazard they encode: a frame past its deadline may leave
// work running on the GPU, and freeing memory the GPU still uses is worse than leaking it in a
// process that is about to report and exit. So every handle frees its object when destroyed
// only while its OwnedDevice says the GPU may not be busy; once gpu_may_be_busy is set,
// nothing of that device is freed, now or later.
//
// Contract: an OwnedDevice outlives every handle made from it (declare it first in the
// owner), and the owner waits for the device to be idle before its handles are destroyed.
#pragma once

#include <vulkan/vulkan.h>

#include <cassert>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace gpuoverlap::vk {

class OwnedDevice {
 public:
  OwnedDevice() = default;
  OwnedDevice(const OwnedDevice&) = delete;
  OwnedDevice& operator=(const OwnedDevice&) = delete;
  ~OwnedDevice() {
    if (handle_ == VK_NULL_HANDLE || gpu_may_be_busy) return;
    if (release)
      release(handle_);
    else
      vkDestroyDevice(handle_, nullptr);
  }
  operator VkDevice() const { return handle_; }
  // For vkCreateDevice; only while no device was created.
  VkDevice* receive() { return &handle_; }
  // For a device an earlier owner left idle (device_pool.h); only while none is held.
  void adopt(VkDevice handle) {
    assert(handle_ == VK_NULL_HANDLE);
    handle_ = handle;
  }

  // Set when work of this device may still run: from then on nothing of it is freed.
  bool gpu_may_be_busy = false;
  // What becomes of the device instead of vkDestroyDevice once every object made from it is
  // destroyed and the GPU is not busy (a DevicePool keeps it for the next scenario). The owner
  // clears it when the device must not be reused (it was not idle when asked).
  std::function<void(VkDevice)> release;

 private:
  VkDevice handle_ = VK_NULL_HANDLE;
};

// A Vulkan object of `device`, freed with `Destroy(device, handle, nullptr)` (vkDestroy* or
// vkFreeMemory). Move-only; converts to the raw handle for Vulkan calls.
template <class Handle, auto Destroy>
class Owned {
 public:
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& other) noexcept
      : device_(other.device_), handle_(std::exchange(other.handle_, VK_NULL_HANDLE)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      handle_ = std::exchange(other.handle_, VK_NULL_HANDLE);
    }
    return *this;
  }
  ~Owned() { reset(); }

  // For vkCreate*/vkAllocateMemory: frees what this held, then receives the new object.
  Handle* receive(const OwnedDevice& device) {
    reset();
    device_ = &device;
    return &handle_;
  }
  operator Handle() const { return handle_; }
  // For create infos that take an array of one handle.
  const Handle* address() const { return &handle_; }

  void reset() {
    if (handle_ != VK_NULL_HANDLE && device_ && !device_->gpu_may_be_busy)
      Destroy(*device_, handle_, nullptr);
    handle_ = VK_NULL_HANDLE;
  }

 private:
  const OwnedDevice* device_ = nullptr;
  Handle handle_ = VK_NULL_HANDLE;
};

using OwnedMemory = Owned<VkDeviceMemory, vkFreeMemory>;
using OwnedBuffer = Owned<VkBuffer, vkDestroyBuffer>;
using OwnedImage = Owned<VkImage, vkDestroyImage>;
using OwnedImageView = Owned<VkImageView, vkDestroyImageView>;
using OwnedSemaphore = Owned<VkSemaphore, vkDestroySemaphore>;
using OwnedFence = Owned<VkFence, vkDestroyFence>;
using OwnedEvent = Owned<VkEvent, vkDestroyEvent>;
using OwnedQueryPool = Owned<VkQueryPool, vkDestroyQueryPool>;
using OwnedCommandPool = Owned<VkCommandPool, vkDestroyCommandPool>;
using OwnedShaderModule = Owned<VkShaderModule, vkDestroyShaderModule>;
using OwnedPipeline = Owned<VkPipeline, vkDestroyPipeline>;
using OwnedPipelineLayout = Owned<VkPipelineLayout, vkDestroyPipelineLayout>;
using OwnedSetLayout = Owned<VkDescriptorSetLayout, vkDestroyDescriptorSetLayout>;
using OwnedDescriptorPool = Owned<VkDescriptorPool, vkDestroyDescriptorPool>;

// A buffer and its memory (the memory declared first: freed after the buffer).
struct Buffer {
  OwnedMemory memory;
  OwnedBuffer buffer;
  void* mapped = nullptr;  // where the memory is host visible; unmapped when it is freed
  VkDeviceSize size = 0;
  std::uint32_t memory_type = 0;
};

// A render target, its memory and its view.
struct Image {
  OwnedMemory memory;
  OwnedImage image;
  OwnedImageView view;
  std::uint32_t width = 0, height = 0;
};

// A declared texture ([[texture]]): its memory, and a 2-D view of each subresource (in
// subresource_index order), which a draw renders into and a consumer samples.
struct TextureImage {
  OwnedMemory memory;
  OwnedImage image;
  std::vector<OwnedImageView> views;
  VkFormat format = VK_FORMAT_UNDEFINED;
};

}  // namespace gpuoverlap::vk
