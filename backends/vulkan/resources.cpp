// The scenario's memory: buffers and render targets with their memory chosen by property
// flags, the stamp memory of --stamp-memory, and the input's one-time upload.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "backends/vulkan/scenario_device.h"
#include "backends/vulkan/vk_check.h"

namespace gpuoverlap::vk {

std::string memory_flags_text(VkMemoryPropertyFlags flags) {
  std::string text;
  auto add = [&](VkMemoryPropertyFlags bit, const char* name) {
    if (!(flags & bit)) return;
    if (!text.empty()) text += '|';
    text += name;
  };
  add(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL");
  add(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE");
  add(VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT");
  add(VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED");
  return text;
}

Status ScenarioDevice::allocate_memory(OwnedMemory& out, std::uint32_t& memory_type,
                                       const VkMemoryRequirements& requirements,
                                       VkMemoryPropertyFlags required, VkMemoryPropertyFlags wanted,
                                       VkMemoryPropertyFlags unwanted, const char* what) {
  int best_score = std::numeric_limits<int>::min();
  std::optional<std::uint32_t> best;
  for (std::uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory_properties_.memoryTypes[i].propertyFlags;
    if (!(requirements.memoryTypeBits & (1u << i)) || (flags & required) != required) continue;
    const int score =
        2 * __builtin_popcount(flags & wanted) - 2 * __builtin_popcount(flags & unwanted);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  if (!best) {
    std::string message = "no memory type";
    if (required) message.append(" with ").append(memory_flags_text(required));
    return make_error(message.append(" for the ").append(what));
  }
  memory_type = *best;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = requirements.size;
  ai.memoryTypeIndex = *best;
  GPUOVERLAP_VK(vkAllocateMemory(device_, &ai, nullptr, out.receive(device_)));
  return ok_status();
}

Status ScenarioDevice::create_buffer(Buffer& out, VkDeviceSize size, VkBufferUsageFlags usage,
                                     VkMemoryPropertyFlags required, VkMemoryPropertyFlags wanted,
                                     VkMemoryPropertyFlags unwanted, const char* what) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = usage;
  // Every resource may be used by every queue in use (a consumer on another queue reads its
  // producer's output; all workloads read the input), as vkd3d-proton creates them: CONCURRENT.
  if (families_in_use_.size() > 1) {
    bi.sharingMode = VK_SHARING_MODE_CONCURRENT;
    bi.queueFamilyIndexCount = static_cast<std::uint32_t>(families_in_use_.size());
    bi.pQueueFamilyIndices = families_in_use_.data();
  }
  GPUOVERLAP_VK(vkCreateBuffer(device_, &bi, nullptr, out.buffer.receive(device_)));
  out.size = size;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, out.buffer, &req);
  GPUOVERLAP_TRY(
      allocate_memory(out.memory, out.memory_type, req, required, wanted, unwanted, what));
  GPUOVERLAP_VK(vkBindBufferMemory(device_, out.buffer, out.memory, 0));
  if (memory_properties_.memoryTypes[out.memory_type].propertyFlags &
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
    GPUOVERLAP_VK(vkMapMemory(device_, out.memory, 0, VK_WHOLE_SIZE, 0, &out.mapped));
  return ok_status();
}

// Stamps (and the ping-pong mailbox): host-visible and coherent; per --stamp-memory either
// uncached (the D3D12 CUSTOM heap, L0 + WRITE_COMBINE: GPU writes land in system memory at
// once) or cached (the CPU spins in its cache, the GPU's write snoops it). Preferably not
// device-local, so the CPU's reads do not cross the bus into video memory.
Status ScenarioDevice::create_stamp_buffer(Buffer& out, VkDeviceSize size, const char* what) {
  const bool cached = settings_.stamp_memory == StampMemory::cached;
  const VkMemoryPropertyFlags required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                         VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                         (cached ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0);
  const VkMemoryPropertyFlags unwanted =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | (cached ? 0 : VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  GPUOVERLAP_TRY(create_buffer(
      out, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, required, 0,
      unwanted, what));
  std::memset(out.mapped, 0, size);
  return ok_status();
}

Status ScenarioDevice::create_2d_image(OwnedImage& image, OwnedMemory* memory, VkFormat format,
                                       std::uint32_t width, std::uint32_t height,
                                       std::uint32_t mips, std::uint32_t slices,
                                       VkImageUsageFlags extra_usage, const char* what) {
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = format;
  ii.extent = {width, height, 1};
  ii.mipLevels = mips;
  ii.arrayLayers = slices;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage =
      (aspect_of(format) == VK_IMAGE_ASPECT_DEPTH_BIT ? VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
                                                      : VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT) |
      VK_IMAGE_USAGE_SAMPLED_BIT | extra_usage;
  ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  if (families_in_use_.size() > 1) {
    ii.sharingMode = VK_SHARING_MODE_CONCURRENT;
    ii.queueFamilyIndexCount = static_cast<std::uint32_t>(families_in_use_.size());
    ii.pQueueFamilyIndices = families_in_use_.data();
  }
  GPUOVERLAP_VK(vkCreateImage(device_, &ii, nullptr, image.receive(device_)));
  if (!memory) return ok_status();
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(device_, image, &req);
  std::uint32_t memory_type = 0;
  GPUOVERLAP_TRY(
      allocate_memory(*memory, memory_type, req, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, what));
  GPUOVERLAP_VK(vkBindImageMemory(device_, image, *memory, 0));
  return ok_status();
}

Status ScenarioDevice::bind_heaps() {
  heaps_.clear();
  for (const std::string& name : heap_names(scenario_.textures)) {
    // Large enough and aligned for every texture, of a type each can live in.
    VkMemoryRequirements heap{0, 1, ~0u};
    for (std::size_t t = 0; t < textures_.size(); ++t) {
      if (scenario_.textures[t].heap != name) continue;
      VkMemoryRequirements req;
      vkGetImageMemoryRequirements(device_, textures_[t].image, &req);
      heap.size = std::max(heap.size, req.size);
      heap.alignment = std::max(heap.alignment, req.alignment);
      heap.memoryTypeBits &= req.memoryTypeBits;
    }
    const std::string what = "heap '" + name + "'";
    if (heap.memoryTypeBits == 0)
      return make_error("no memory type can hold every texture of " + what);
    std::uint32_t memory_type = 0;
    GPUOVERLAP_TRY(allocate_memory(heaps_.emplace_back(), memory_type, heap, 0,
                                   VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, what.c_str()));
    for (std::size_t t = 0; t < textures_.size(); ++t) {
      if (scenario_.textures[t].heap != name) continue;
      GPUOVERLAP_VK(vkBindImageMemory(device_, textures_[t].image, heaps_.back(), 0));
      GPUOVERLAP_TRY(create_texture_views(textures_[t], scenario_.textures[t]));
    }
  }
  return ok_status();
}

Status ScenarioDevice::create_subresource_view(OwnedImageView& out, VkImage image, VkFormat format,
                                               std::uint32_t mip, std::uint32_t slice) {
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = format;
  vi.subresourceRange = {aspect_of(format), mip, 1, slice, 1};
  GPUOVERLAP_VK(vkCreateImageView(device_, &vi, nullptr, out.receive(device_)));
  return ok_status();
}

Status ScenarioDevice::create_image(Image& out, std::uint32_t width, std::uint32_t height,
                                    VkImageUsageFlags extra_usage) {
  GPUOVERLAP_TRY(create_2d_image(out.image, &out.memory, VK_FORMAT_R32_SFLOAT, width, height, 1, 1,
                                 extra_usage, "render target"));
  out.width = width;
  out.height = height;
  return create_subresource_view(out.view, out.image, VK_FORMAT_R32_SFLOAT, 0, 0);
}

VkFormat vulkan_format(TextureFormat format) {
  switch (format) {
    case TextureFormat::rgba8:
      return VK_FORMAT_R8G8B8A8_UNORM;
    case TextureFormat::rgba16f:
      return VK_FORMAT_R16G16B16A16_SFLOAT;
    case TextureFormat::d32:
      return VK_FORMAT_D32_SFLOAT;
    case TextureFormat::r32f:
      break;
  }
  return VK_FORMAT_R32_SFLOAT;
}

Status ScenarioDevice::create_texture(TextureImage& out, const TextureSpec& spec,
                                      bool unordered_access, bool copy_destination,
                                      bool copy_source) {
  out.format = vulkan_format(spec.format);
  const VkImageUsageFlags usage = (unordered_access ? VK_IMAGE_USAGE_STORAGE_BIT : 0) |
                                  (copy_destination ? VK_IMAGE_USAGE_TRANSFER_DST_BIT : 0) |
                                  (copy_source ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
  GPUOVERLAP_TRY(create_2d_image(out.image, spec.heap.empty() ? &out.memory : nullptr, out.format,
                                 spec.width, spec.height, spec.mips, spec.slices, usage,
                                 "texture"));
  if (!spec.heap.empty()) return ok_status();  // its views come once bind_heaps bound it
  return create_texture_views(out, spec);
}

Status ScenarioDevice::create_texture_views(TextureImage& out, const TextureSpec& spec) {
  out.views.resize(spec.subresources());
  for (std::uint32_t slice = 0; slice < spec.slices; ++slice)
    for (std::uint32_t mip = 0; mip < spec.mips; ++mip)
      GPUOVERLAP_TRY(create_subresource_view(out.views[subresource_index(mip, slice, spec.mips)],
                                             out.image, out.format, mip, slice));
  return ok_status();
}

ScenarioDevice::DrawTarget ScenarioDevice::draw_target(std::size_t w) const {
  const WorkloadSpec& spec = scenario_.workloads[w];
  if (!spec.target)
    return {targets_[w].image, targets_[w].view, targets_[w].width, targets_[w].height,
            VK_FORMAT_R32_SFLOAT};
  const TextureSpec& texture = scenario_.textures[spec.target->texture];
  const TextureImage& image = textures_[spec.target->texture];
  return {image.image,
          image.views[subresource_index(spec.target->mip, spec.target->slice, texture.mips)],
          mip_size(texture.width, spec.target->mip), mip_size(texture.height, spec.target->mip),
          image.format};
}

// Fills the input buffer through a staging buffer, so the noise reads device memory.
Status ScenarioDevice::upload_input() {
  // Freed on every return path, except when the GPU may still read them.
  Buffer staging;
  OneTimeCommands commands(device_, queues_.front());
  const VkDeviceSize size = input_.size;
  GPUOVERLAP_TRY(
      create_buffer(staging, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                    0, "input staging buffer"));
  std::mt19937 random(12345);  // fixed seed: identical input every run
  std::uniform_real_distribution<float> coordinate(-64.0f, 64.0f);
  auto* values = static_cast<float*>(staging.mapped);
  for (VkDeviceSize i = 0; i < size / sizeof(float); ++i) values[i] = coordinate(random);

  GPUOVERLAP_TRY(commands.begin());
  const VkCommandBuffer cmd = commands.cmd();
  VkBufferCopy region{0, 0, size};
  vkCmdCopyBuffer(cmd, staging.buffer, input_.buffer, 1, &region);
  // The placeholders are never used by the work (a flag in the push constants says which
  // bindings are real): put them in the layouts their descriptors name, once.
  VkImageMemoryBarrier2 dummies[2];
  for (VkImageMemoryBarrier2& dummy : dummies) {
    dummy = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    dummy.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    dummy.dstAccessMask = VK_ACCESS_2_SHADER_READ_BIT;
    dummy.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    dummy.newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    dummy.srcQueueFamilyIndex = dummy.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    dummy.image = dummy_target_.image;
    dummy.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  }
  dummies[1].newLayout = VK_IMAGE_LAYOUT_GENERAL;
  dummies[1].image = placeholder_storage_.image;
  dummies[1].subresourceRange.layerCount = VK_REMAINING_ARRAY_LAYERS;
  VkDependencyInfo dummy_info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dummy_info.imageMemoryBarrierCount = 2;
  dummy_info.pImageMemoryBarriers = dummies;
  vkCmdPipelineBarrier2(cmd, &dummy_info);
  VkResult result = commands.submit();
  if (result == VK_SUCCESS) result = commands.wait(kSetupTimeoutNs);
  if (result == VK_TIMEOUT) device_.gpu_may_be_busy = true;
  if (result != VK_SUCCESS) return vk_error(result, "uploading the input buffer");
  return ok_status();
}

OneTimeCommands::~OneTimeCommands() {
  if (cmd_ != VK_NULL_HANDLE && !device_.gpu_may_be_busy)
    vkFreeCommandBuffers(device_, queue_.pool, 1, &cmd_);
}

Status OneTimeCommands::begin() {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = queue_.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, &cmd_));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  GPUOVERLAP_VK(vkBeginCommandBuffer(cmd_, &bi));
  return ok_status();
}

VkResult OneTimeCommands::submit() {
  if (VkResult r = vkEndCommandBuffer(cmd_); r != VK_SUCCESS) return r;
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(device_, &fi, nullptr, fence_.receive(device_)); r != VK_SUCCESS)
    return r;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  return vkQueueSubmit(queue_.queue, 1, &si, fence_);
}

VkResult OneTimeCommands::wait(std::uint64_t timeout_ns) const {
  return vkWaitForFences(device_, 1, fence_.address(), VK_TRUE, timeout_ns);
}

}  // namespace gpuoverlap::vk
