#include "backends/vulkan/scenario_device.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/vulkan/barrier_translation.h"
#include "backends/vulkan/vk_check.h"
#include "background/background_session.h"
#include "background/variant_slot.h"
#include "core/clock.h"
#include "core/scope_exit.h"
#include "engine/frame_loop.h"
#include "queues/priority_policy.h"
#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"
#include "timeline/clock_agreement.h"
#include "timeline/clock_conversion.h"
#include "workload_spirv.h"

namespace gpuoverlap::vk {

namespace {

VkQueueGlobalPriorityKHR to_global_priority(QueuePriority p) {
  switch (p) {
    case QueuePriority::normal:
      return VK_QUEUE_GLOBAL_PRIORITY_MEDIUM_KHR;
    case QueuePriority::high:
      return VK_QUEUE_GLOBAL_PRIORITY_HIGH_KHR;
    case QueuePriority::realtime:
      return VK_QUEUE_GLOBAL_PRIORITY_REALTIME_KHR;
  }
  return VK_QUEUE_GLOBAL_PRIORITY_MEDIUM_KHR;
}

std::string memory_flags_text(VkMemoryPropertyFlags flags) {
  std::string text;
  auto add = [&](VkMemoryPropertyFlags bit, const char* name) {
    if (flags & bit) text += (text.empty() ? "" : "|") + std::string(name);
  };
  add(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL");
  add(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE");
  add(VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT");
  add(VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED");
  return text;
}

}  // namespace

Status ScenarioDevice::check_features() {
  if (VK_API_VERSION_MINOR(info_.properties.apiVersion) < 3 &&
      VK_API_VERSION_MAJOR(info_.properties.apiVersion) == 1)
    return make_error(std::string("device '") + info_.properties.deviceName + "' supports Vulkan " +
                      std::to_string(VK_API_VERSION_MINOR(info_.properties.apiVersion)) +
                      ".x; gpuoverlap needs Vulkan 1.3 (synchronization2, timeline semaphores, "
                      "dynamic rendering)");
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  vkGetPhysicalDeviceFeatures2(info_.handle, &f);
  std::string missing;
  if (!f13.synchronization2) missing += " synchronization2";
  if (!f13.dynamicRendering) missing += " dynamicRendering";
  if (!f12.timelineSemaphore) missing += " timelineSemaphore";
  if (!f.features.fragmentStoresAndAtomics) missing += " fragmentStoresAndAtomics";
  if (!missing.empty())
    return make_error(std::string("device '") + info_.properties.deviceName +
                      "' lacks required features:" + missing);
  if (info_.shader_clock) {
    VkPhysicalDeviceShaderClockFeaturesKHR clock{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 clock_query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &clock};
    vkGetPhysicalDeviceFeatures2(info_.handle, &clock_query);
    facts_.shader_clock.device_scope = clock.shaderDeviceClock == VK_TRUE;
  }
  ShaderClockFacts& clock = facts_.shader_clock;
  clock.extension = info_.shader_clock;
  clock.recorded = clock.device_scope && settings_.shader_clock && settings_.stamping;
  if (!clock.recorded)
    clock.reason = !info_.shader_clock   ? "the device has no VK_KHR_shader_clock"
                   : !clock.device_scope ? "the device has no device-scope shader clock"
                   : !settings_.stamping ? "stamping is off"
                                         : "not requested";
  return ok_status();
}

Status ScenarioDevice::create_device() {
  std::vector<QueueType> types;
  for (const auto& q : scenario_.queues) types.push_back(q.type);
  auto mapped = map_queues(info_.family_descriptions(), types);
  if (!mapped) return mapped.error();
  mapping_ = *mapped;

  // The priority policy (queues/priority_policy.h) decides each family's global priority and
  // what a priority that cannot be granted does; this function only asks the driver.
  std::vector<PriorityAsk> asks;
  for (const QueueSpec& q : scenario_.queues) asks.push_back({q.name, q.priority});
  auto planned = plan_priorities(asks, mapping_, info_.families.size(), info_.global_priority,
                                 std::string("device '") + info_.properties.deviceName +
                                     "' has no VK_KHR/EXT_global_priority, so queue priorities "
                                     "above normal cannot be requested",
                                 settings_.priority_fallback);
  if (!planned) return planned.error();
  PriorityPlan& priorities = *planned;
  // Device queues per family: enough for the highest queue index mapped there.
  std::vector<std::uint32_t> queue_counts(info_.families.size(), 0);
  for (const MappedQueue& m : mapping_)
    if (m.shares_with < 0)
      queue_counts[m.family_index] = std::max(queue_counts[m.family_index], m.queue_index + 1);

  VkPhysicalDeviceShaderClockFeaturesKHR clock_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  clock_features.shaderDeviceClock = VK_TRUE;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                       facts_.shader_clock.recorded ? &clock_features : nullptr};
  f13.synchronization2 = VK_TRUE;
  f13.dynamicRendering = VK_TRUE;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  f12.timelineSemaphore = VK_TRUE;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  features.features.fragmentStoresAndAtomics = VK_TRUE;

  // A refused priority (VK_ERROR_NOT_PERMITTED_KHR: NVIDIA needs CAP_SYS_NICE for HIGH and
  // REALTIME) is lowered one step per attempt, only with --priority-fallback.
  for (;;) {
    const bool wants_priority = priorities.requests_priority();
    std::vector<const char*> extensions;
    facts_.global_priority_requested = wants_priority;
    if (wants_priority)
      extensions.push_back(info_.has_extension(VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME)
                               ? VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME
                               : VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME);
    if (info_.calibrated_timestamps)
      extensions.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    if (facts_.shader_clock.recorded) extensions.push_back(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);

    std::vector<VkDeviceQueueCreateInfo> queue_infos;
    std::vector<VkDeviceQueueGlobalPriorityCreateInfoKHR> priority_infos;
    std::vector<std::vector<float>> queue_priorities;
    priority_infos.reserve(queue_counts.size());
    queue_priorities.reserve(queue_counts.size());
    for (std::uint32_t family = 0; family < queue_counts.size(); ++family) {
      if (queue_counts[family] == 0) continue;
      // Within a family, a queue that asked for more than normal gets the higher local
      // priority (pQueuePriorities), as far as the driver honours it.
      queue_priorities.emplace_back(queue_counts[family], 0.5f);
      for (std::size_t q = 0; q < mapping_.size(); ++q)
        if (mapping_[q].shares_with < 0 && mapping_[q].family_index == family &&
            scenario_.queues[q].priority != QueuePriority::normal)
          queue_priorities.back()[mapping_[q].queue_index] = 1.0f;
      VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
      qi.queueFamilyIndex = family;
      qi.queueCount = queue_counts[family];
      qi.pQueuePriorities = queue_priorities.back().data();
      if (wants_priority) {
        priority_infos.push_back({VK_STRUCTURE_TYPE_DEVICE_QUEUE_GLOBAL_PRIORITY_CREATE_INFO_KHR,
                                  nullptr, to_global_priority(priorities.family_priority[family])});
        qi.pNext = &priority_infos.back();
      }
      queue_infos.push_back(qi);
    }
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    di.queueCreateInfoCount = static_cast<std::uint32_t>(queue_infos.size());
    di.pQueueCreateInfos = queue_infos.data();
    di.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    di.ppEnabledExtensionNames = extensions.data();
    const VkResult result = vkCreateDevice(info_.handle, &di, nullptr, &device_);
    if (result == VK_SUCCESS) break;
    const bool refused = result == VK_ERROR_NOT_PERMITTED_KHR ||
                         (wants_priority && result == VK_ERROR_INITIALIZATION_FAILED);
    if (!refused) return vk_error(result, "vkCreateDevice");
    GPUOVERLAP_TRY(
        lower_after_refusal(priorities,
                            Error{"NVIDIA grants HIGH and REALTIME only to root or CAP_SYS_NICE",
                                  result, result_name(result)},
                            settings_.priority_fallback));
  }

  granted_priority_ = priorities.granted(mapping_);
  facts_.priority_notes = priorities.notes;
  vkGetPhysicalDeviceMemoryProperties(info_.handle, &memory_properties_);
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
  GPUOVERLAP_VK(vkCreateBuffer(device_, &bi, nullptr, &out.buffer));
  out.size = size;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, out.buffer, &req);
  int best_score = std::numeric_limits<int>::min();
  std::optional<std::uint32_t> best;
  for (std::uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory_properties_.memoryTypes[i].propertyFlags;
    if (!(req.memoryTypeBits & (1u << i)) || (flags & required) != required) continue;
    const int score =
        2 * __builtin_popcount(flags & wanted) - 2 * __builtin_popcount(flags & unwanted);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  if (!best)
    return make_error(std::string("no memory type with ") + memory_flags_text(required) +
                      " for the " + what);
  out.memory_type = *best;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = *best;
  GPUOVERLAP_VK(vkAllocateMemory(device_, &ai, nullptr, &out.memory));
  GPUOVERLAP_VK(vkBindBufferMemory(device_, out.buffer, out.memory, 0));
  if (memory_properties_.memoryTypes[*best].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
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
  GPUOVERLAP_TRY(
      create_buffer(out, size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, required, 0, unwanted, what));
  std::memset(out.mapped, 0, size);
  return ok_status();
}

Status ScenarioDevice::create_image(Image& out, std::uint32_t width, std::uint32_t height) {
  VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ii.imageType = VK_IMAGE_TYPE_2D;
  ii.format = VK_FORMAT_R32_SFLOAT;
  ii.extent = {width, height, 1};
  ii.mipLevels = 1;
  ii.arrayLayers = 1;
  ii.samples = VK_SAMPLE_COUNT_1_BIT;
  ii.tiling = VK_IMAGE_TILING_OPTIMAL;
  ii.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
  ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  if (families_in_use_.size() > 1) {
    ii.sharingMode = VK_SHARING_MODE_CONCURRENT;
    ii.queueFamilyIndexCount = static_cast<std::uint32_t>(families_in_use_.size());
    ii.pQueueFamilyIndices = families_in_use_.data();
  }
  GPUOVERLAP_VK(vkCreateImage(device_, &ii, nullptr, &out.image));
  out.width = width;
  out.height = height;
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(device_, out.image, &req);
  std::optional<std::uint32_t> type;
  for (std::uint32_t i = 0; i < memory_properties_.memoryTypeCount && !type; ++i)
    if ((req.memoryTypeBits & (1u << i)) &&
        (memory_properties_.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      type = i;
  for (std::uint32_t i = 0; i < memory_properties_.memoryTypeCount && !type; ++i)
    if (req.memoryTypeBits & (1u << i)) type = i;
  if (!type) return make_error("no memory type for a render target");
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = *type;
  GPUOVERLAP_VK(vkAllocateMemory(device_, &ai, nullptr, &out.memory));
  GPUOVERLAP_VK(vkBindImageMemory(device_, out.image, out.memory, 0));
  VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vi.image = out.image;
  vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vi.format = VK_FORMAT_R32_SFLOAT;
  vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  GPUOVERLAP_VK(vkCreateImageView(device_, &vi, nullptr, &out.view));
  return ok_status();
}

// Fills the input buffer through a staging buffer, so the noise reads device memory.
Status ScenarioDevice::upload_input() {
  Buffer staging;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  const QueueState& q = queues_.front();
  // Frees the staging objects on every return path, except when the GPU may still read them.
  const ScopeExit cleanup([&] {
    if (gpu_may_be_busy_) return;
    if (fence) vkDestroyFence(device_, fence, nullptr);
    if (cmd) vkFreeCommandBuffers(device_, q.pool, 1, &cmd);
    if (staging.mapped) vkUnmapMemory(device_, staging.memory);
    if (staging.buffer) vkDestroyBuffer(device_, staging.buffer, nullptr);
    if (staging.memory) vkFreeMemory(device_, staging.memory, nullptr);
  });
  const VkDeviceSize size = input_.size;
  GPUOVERLAP_TRY(
      create_buffer(staging, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                    0, "input staging buffer"));
  std::mt19937 random(12345);  // fixed seed: identical input every run
  std::uniform_real_distribution<float> coordinate(-64.0f, 64.0f);
  auto* values = static_cast<float*>(staging.mapped);
  for (VkDeviceSize i = 0; i < size / sizeof(float); ++i) values[i] = coordinate(random);

  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = q.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, &cmd));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  GPUOVERLAP_VK(vkBeginCommandBuffer(cmd, &bi));
  VkBufferCopy region{0, 0, size};
  vkCmdCopyBuffer(cmd, staging.buffer, input_.buffer, 1, &region);
  // The placeholder render target is only ever sampled (never written): put it in the layout
  // its descriptors name, once.
  VkImageMemoryBarrier2 dummy{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
  dummy.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  dummy.dstAccessMask = VK_ACCESS_2_SHADER_READ_BIT;
  dummy.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  dummy.newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  dummy.srcQueueFamilyIndex = dummy.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  dummy.image = dummy_target_.image;
  dummy.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkDependencyInfo dummy_info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dummy_info.imageMemoryBarrierCount = 1;
  dummy_info.pImageMemoryBarriers = &dummy;
  vkCmdPipelineBarrier2(cmd, &dummy_info);
  GPUOVERLAP_VK(vkEndCommandBuffer(cmd));
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  GPUOVERLAP_VK(vkCreateFence(device_, &fi, nullptr, &fence));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  VkResult result = vkQueueSubmit(q.queue, 1, &si, fence);
  if (result == VK_SUCCESS) result = vkWaitForFences(device_, 1, &fence, VK_TRUE, kSetupTimeoutNs);
  if (result == VK_TIMEOUT) gpu_may_be_busy_ = true;
  if (result != VK_SUCCESS) return vk_error(result, "uploading the input buffer");
  return ok_status();
}

Status ScenarioDevice::create_pipelines() {
  auto module = [&](const std::uint32_t* code, std::size_t bytes, VkShaderModule& out) -> Status {
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = bytes;
    mi.pCode = code;
    GPUOVERLAP_VK(vkCreateShaderModule(device_, &mi, nullptr, &out));
    return ok_status();
  };
  if (facts_.shader_clock.recorded) {
    GPUOVERLAP_TRY(
        module(kPerlinComputeClockSpirv, sizeof(kPerlinComputeClockSpirv), compute_module_));
    GPUOVERLAP_TRY(
        module(kPerlinFragmentClockSpirv, sizeof(kPerlinFragmentClockSpirv), fragment_module_));
  } else {
    GPUOVERLAP_TRY(module(kPerlinComputeSpirv, sizeof(kPerlinComputeSpirv), compute_module_));
    GPUOVERLAP_TRY(module(kPerlinFragmentSpirv, sizeof(kPerlinFragmentSpirv), fragment_module_));
  }
  GPUOVERLAP_TRY(module(kPerlinVertexSpirv, sizeof(kPerlinVertexSpirv), vertex_module_));

  // perlin.hlsl: 0 input, 1 output, 2 counters, 3 stamps, 4-7 producer buffers (storage
  // buffers), 8-11 producer render targets (sampled images).
  std::array<VkDescriptorSetLayoutBinding, 4 + 2 * kMaxProducerBindings> bindings{};
  for (std::uint32_t b = 0; b < bindings.size(); ++b)
    bindings[b] = {b,
                   b < 4 + kMaxProducerBindings ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                : VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                   1, VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = bindings.size();
  li.pBindings = bindings.data();
  GPUOVERLAP_VK(vkCreateDescriptorSetLayout(device_, &li, nullptr, &set_layout_));
  VkPushConstantRange range{
      VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_VERTEX_BIT, 0,
      sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout_;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  GPUOVERLAP_VK(vkCreatePipelineLayout(device_, &pli, nullptr, &pipeline_layout_));

  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              nullptr,
              0,
              VK_SHADER_STAGE_COMPUTE_BIT,
              compute_module_,
              "cs_main",
              nullptr};
  ci.layout = pipeline_layout_;
  GPUOVERLAP_VK(
      vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &compute_pipeline_));

  bool any_graphics = false;
  for (const auto& w : scenario_.workloads)
    any_graphics = any_graphics || w.kind == WorkloadKind::graphics;
  if (!any_graphics) return ok_status();
  VkPipelineShaderStageCreateInfo stages[2] = {
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_VERTEX_BIT,
       vertex_module_, "vs_main", nullptr},
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0,
       VK_SHADER_STAGE_FRAGMENT_BIT, fragment_module_, "ps_main", nullptr}};
  VkPipelineVertexInputStateCreateInfo vertex_input{
      VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo assembly{
      VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo viewport{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  viewport.viewportCount = 1;
  viewport.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo raster{
      VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;
  raster.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo multisample{
      VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineColorBlendAttachmentState attachment{};
  attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT;
  VkPipelineColorBlendStateCreateInfo blend{
      VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  blend.attachmentCount = 1;
  blend.pAttachments = &attachment;
  const VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dynamic.dynamicStateCount = 2;
  dynamic.pDynamicStates = dynamic_states;
  const VkFormat format = VK_FORMAT_R32_SFLOAT;
  VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachmentFormats = &format;
  VkGraphicsPipelineCreateInfo gi{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, &rendering};
  gi.stageCount = 2;
  gi.pStages = stages;
  gi.pVertexInputState = &vertex_input;
  gi.pInputAssemblyState = &assembly;
  gi.pViewportState = &viewport;
  gi.pRasterizationState = &raster;
  gi.pMultisampleState = &multisample;
  gi.pColorBlendState = &blend;
  gi.pDynamicState = &dynamic;
  gi.layout = pipeline_layout_;
  GPUOVERLAP_VK(
      vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &gi, nullptr, &graphics_pipeline_));
  return ok_status();
}

Status ScenarioDevice::create_descriptors() {
  const std::uint32_t count = static_cast<std::uint32_t>(scenario_.workloads.size());
  const VkDescriptorPoolSize sizes[2] = {
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (4 + kMaxProducerBindings) * count},
      {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, kMaxProducerBindings * count}};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = count;
  pi.poolSizeCount = 2;
  pi.pPoolSizes = sizes;
  GPUOVERLAP_VK(vkCreateDescriptorPool(device_, &pi, nullptr, &descriptor_pool_));
  std::vector<VkDescriptorSetLayout> layouts(count, set_layout_);
  sets_.resize(count);
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = descriptor_pool_;
  ai.descriptorSetCount = count;
  ai.pSetLayouts = layouts.data();
  GPUOVERLAP_VK(vkAllocateDescriptorSets(device_, &ai, sets_.data()));
  for (std::uint32_t w = 0; w < count; ++w) {
    const Buffer& output = outputs_[w].buffer ? outputs_[w] : dummy_output_;
    std::array<VkDescriptorBufferInfo, 4 + kMaxProducerBindings> buffers{};
    buffers[0] = {input_.buffer, 0, VK_WHOLE_SIZE};
    buffers[1] = {output.buffer, 0, VK_WHOLE_SIZE};
    buffers[2] = {counters_.buffer, w * slot_stride_, kSlotBytes};
    buffers[3] = {stamps_.buffer, w * slot_stride_, kSlotBytes};
    std::array<VkDescriptorImageInfo, kMaxProducerBindings> images{};
    std::uint32_t producer_buffers = 0, producer_targets = 0;
    const auto& deps = scenario_.workloads[w].depends_on;
    for (std::size_t i = 0; i < deps.size(); ++i) {
      const DependencyPlan& d = plan_.dependency(w, i);
      if (!d.reads_output) continue;
      if (d.resource == ResourceKind::buffer)
        buffers[4 + producer_buffers++] = {outputs_[d.producer].buffer, 0, VK_WHOLE_SIZE};
      else
        images[producer_targets++] = {VK_NULL_HANDLE, targets_[d.producer].view,
                                      layout_for_barrier_layout(d.layout_at_consumer)};
    }
    producers_[w] = producer_buffers | (producer_targets << 4);
    for (std::uint32_t b = producer_buffers; b < kMaxProducerBindings; ++b)
      buffers[4 + b] = {dummy_output_.buffer, 0, VK_WHOLE_SIZE};
    for (std::uint32_t t = producer_targets; t < kMaxProducerBindings; ++t)
      images[t] = {VK_NULL_HANDLE, dummy_target_.view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    std::array<VkWriteDescriptorSet, 4 + 2 * kMaxProducerBindings> writes{};
    for (std::uint32_t b = 0; b < writes.size(); ++b) {
      const bool image = b >= buffers.size();
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                   nullptr,
                   sets_[w],
                   b,
                   0,
                   1,
                   image ? VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                   image ? &images[b - buffers.size()] : nullptr,
                   image ? nullptr : &buffers[b],
                   nullptr};
    }
    vkUpdateDescriptorSets(device_, static_cast<std::uint32_t>(writes.size()), writes.data(), 0,
                           nullptr);
  }
  return ok_status();
}

Status ScenarioDevice::create_queue_objects() {
  queues_.resize(scenario_.queues.size());
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    QueueState& state = queues_[q];
    state.family = mapping_[q].family_index;
    state.timestamp_valid_bits = info_.families[state.family].timestampValidBits;
    state.workloads = scenario_.workloads_on(q);
    vkGetDeviceQueue(device_, state.family, mapping_[q].queue_index, &state.queue);
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = state.family;
    GPUOVERLAP_VK(vkCreateCommandPool(device_, &pi, nullptr, &state.pool));
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = state.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, &state.prepare));
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                 VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
    GPUOVERLAP_VK(vkCreateSemaphore(device_, &si, nullptr, &state.done));
  }
  VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                               VK_SEMAPHORE_TYPE_TIMELINE, 0};
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
  GPUOVERLAP_VK(vkCreateSemaphore(device_, &si, nullptr, &gate_));

  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = static_cast<std::uint32_t>(2 * scenario_.workloads.size());
  GPUOVERLAP_VK(vkCreateQueryPool(device_, &qi, nullptr, &queries_));

  // One command buffer per submission of the frame plan, from its queue's pool.
  segment_buffers_.resize(plan_.segments.size());
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = queues_[plan_.segments[i].queue].pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, &segment_buffers_[i]));
  }
  // A timeline semaphore per workload that another queue waits for (D3D12 Signal/Wait);
  // frame f signals value f.
  fences_.assign(scenario_.workloads.size(), VK_NULL_HANDLE);
  for (const Segment& segment : plan_.segments) {
    if (!segment.signals_fence) continue;
    VkSemaphoreTypeCreateInfo fti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                  VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo fsi{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &fti};
    GPUOVERLAP_VK(vkCreateSemaphore(device_, &fsi, nullptr, &fences_[segment.workloads.back()]));
  }
  // An event per split pair translated with the event policy.
  ops_.clear();
  events_.assign(plan_.barriers.dependencies.size(), VK_NULL_HANDLE);
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i) {
    ops_.push_back(translate(plan_.barriers.dependencies[i]));
    if (!ops_.back().set_event_after_producer) continue;
    VkEventCreateInfo ei{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    ei.flags = VK_EVENT_CREATE_DEVICE_ONLY_BIT;
    GPUOVERLAP_VK(vkCreateEvent(device_, &ei, nullptr, &events_[i]));
  }
  // What a frame's wait and its timestamp read use, built here, not inside a measured frame.
  done_semaphores_.clear();
  for (const QueueState& q : queues_) done_semaphores_.push_back(q.done);
  done_values_.assign(done_semaphores_.size(), 0);
  query_data_.assign(4 * scenario_.workloads.size(), 0);
  return ok_status();
}

Status ScenarioDevice::setup_calibration() {
  // `available`: timestamp queries are recorded and can be put on the CPU clock. Calibrated
  // timestamps need no query pool: with --no-timestamps they still place the shader clock on
  // the CPU clock, so the mode recommended for same-queue overlap keeps its most precise clock.
  TimestampFacts& ts = facts_.timestamps;
  ts.available = settings_.timestamp_queries;
  ts.period_ns = info_.properties.limits.timestampPeriod;
  if (!settings_.timestamp_queries)
    ts.reason = std::string(
                    "disabled (--no-timestamps): end-of-workload timestamps can serialise a "
                    "queue") +
                (facts_.shader_clock.recorded ? "; calibrated timestamps are still taken for the "
                                                "shader clock"
                                              : "");
  // Neither clock that needs it is wanted: no calibration on any frame or submission.
  if (!settings_.timestamp_queries && !facts_.shader_clock.recorded) return ok_status();
  if (!info_.calibrated_timestamps) {
    ts.available = false;
    ts.reason = "no VK_EXT_calibrated_timestamps: GPU ticks cannot be placed on the CPU clock";
    return ok_status();
  }
  auto get_domains = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
      vkGetInstanceProcAddr(instance_.handle(), "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
  get_calibrated_timestamps_ = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
      vkGetDeviceProcAddr(device_, "vkGetCalibratedTimestampsEXT"));
  std::uint32_t count = 0;
  if (get_domains) get_domains(info_.handle, &count, nullptr);
  std::vector<VkTimeDomainEXT> domains(count);
  if (get_domains) get_domains(info_.handle, &count, domains.data());
  const bool has_device =
      std::find(domains.begin(), domains.end(), VK_TIME_DOMAIN_DEVICE_EXT) != domains.end();
  const bool has_raw = std::find(domains.begin(), domains.end(),
                                 VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT) != domains.end();
  const bool has_mono = std::find(domains.begin(), domains.end(),
                                  VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT) != domains.end();
  if (!get_calibrated_timestamps_ || !has_device || (!has_raw && !has_mono)) {
    get_calibrated_timestamps_ = nullptr;
    ts.available = false;
    ts.reason = "the device cannot calibrate its timestamps against CLOCK_MONOTONIC(_RAW)";
    return ok_status();
  }
  host_domain_ =
      has_raw ? VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT : VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  if (!has_raw) monotonic_to_raw_ns_ = monotonic_to_raw_offset_ns();
  ts.calibrated = true;
  ts.host_domain = has_raw ? "CLOCK_MONOTONIC_RAW" : "CLOCK_MONOTONIC (offset to RAW measured)";
  ts.calibration = "best of " + std::to_string(kCalibrationSamples) +
                   " vkGetCalibratedTimestampsEXT samples (smallest max deviation), before every "
                   "frame";
  ts.start_stage = "TOP_OF_PIPE after the workload's barrier: the queue reached the workload";
  ts.end_stage = "BOTTOM_OF_PIPE: all work submitted before it on its queue completed";
  return ok_status();
}

std::optional<GpuCalibration> ScenarioDevice::calibrate() {
  if (!get_calibrated_timestamps_) return std::nullopt;
  const VkCalibratedTimestampInfoEXT infos[2] = {
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, host_domain_}};
  std::optional<GpuCalibration> best;
  for (std::uint32_t i = 0; i < kCalibrationSamples; ++i) {
    std::uint64_t values[2];
    std::uint64_t deviation = 0;
    if (get_calibrated_timestamps_(device_, 2, infos, values, &deviation) != VK_SUCCESS) continue;
    if (best && deviation >= best->max_deviation_ns) continue;
    GpuCalibration c;
    c.gpu_ticks = values[0];
    c.cpu_ns = static_cast<std::int64_t>(values[1]) + monotonic_to_raw_ns_;
    c.tick_period_ns = info_.properties.limits.timestampPeriod;
    c.max_deviation_ns = deviation;
    best = c;
  }
  return best;
}

Status ScenarioDevice::create() {
  GPUOVERLAP_TRY(check_features());
  GPUOVERLAP_TRY(create_device());
  for (const MappedQueue& m : mapping_)
    if (std::find(families_in_use_.begin(), families_in_use_.end(), m.family_index) ==
        families_in_use_.end())
      families_in_use_.push_back(m.family_index);
  const VkDeviceSize alignment =
      std::max<VkDeviceSize>(1, info_.properties.limits.minStorageBufferOffsetAlignment);
  slot_stride_ = (kSlotBytes + alignment - 1) / alignment * alignment;
  facts_.slot_stride_bytes = slot_stride_;
  const std::size_t slots = scenario_.workloads.size();
  producers_.assign(slots, 0);
  target_layouts_.assign(slots, VK_IMAGE_LAYOUT_UNDEFINED);
  GPUOVERLAP_TRY(create_stamp_buffer(stamps_, slots * slot_stride_, "stamp buffer"));
  GPUOVERLAP_TRY(create_buffer(
      counters_, slots * slot_stride_,
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "counter buffer"));
  GPUOVERLAP_TRY(create_buffer(
      input_, VkDeviceSize{kInputElements} * 16,
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "input buffer"));
  GPUOVERLAP_TRY(create_buffer(dummy_output_, 4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0,
                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "placeholder buffer"));
  GPUOVERLAP_TRY(create_image(dummy_target_, 1024, 1));
  outputs_.resize(slots);
  targets_.resize(slots);
  for (std::size_t w = 0; w < slots; ++w) {
    const WorkloadSpec& spec = scenario_.workloads[w];
    if (spec.kind == WorkloadKind::compute)
      GPUOVERLAP_TRY(create_buffer(outputs_[w], VkDeviceSize{thread_count(spec.groups)} * 4,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0,
                                   VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "output buffer"));
    else
      GPUOVERLAP_TRY(create_image(targets_[w], kRenderTargetWidth, spec.groups));
  }
  GPUOVERLAP_TRY(create_queue_objects());
  GPUOVERLAP_TRY(upload_input());
  GPUOVERLAP_TRY(create_pipelines());
  GPUOVERLAP_TRY(create_descriptors());
  GPUOVERLAP_TRY(setup_calibration());
  GPUOVERLAP_TRY(create_background());

  const auto stamp_flags = memory_properties_.memoryTypes[stamps_.memory_type].propertyFlags;
  const auto counter_flags = memory_properties_.memoryTypes[counters_.memory_type].propertyFlags;
  const bool stamps_device_local = (stamp_flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
  facts_.stamp_memory = {
      .requested = std::string(to_string(settings_.stamp_memory)),
      .memory_type = stamps_.memory_type,
      .flags = memory_flags_text(stamp_flags),
      .device_local = stamps_device_local,
      .note = stamps_device_local
                  ? "no host-visible coherent type outside device memory; used the best available"
                  : "system memory, as the protocol asks"};
  facts_.counter_memory = {.memory_type = counters_.memory_type,
                           .flags = memory_flags_text(counter_flags)};
  for (std::size_t q = 0; q < scenario_.queues.size(); ++q) {
    const bool shared = mapping_[q].shares_with >= 0;
    const QueueSpec* sharer =
        shared ? &scenario_.queues[static_cast<std::size_t>(mapping_[q].shares_with)] : nullptr;
    if (sharer && scenario_.queues[q].type == QueueType::compute &&
        sharer->type == QueueType::direct)
      facts_.compute_queue_shared = true;
    const auto& family = info_.families[mapping_[q].family_index];
    facts_.queues.push_back(
        {.name = scenario_.queues[q].name,
         .type = scenario_.queues[q].type,
         .family = mapping_[q].family_index,
         .family_flags = queue_flags_text(family.queueFlags),
         .queue_index = mapping_[q].queue_index,
         .shares_queue_of = sharer ? std::optional<std::string>(sharer->name) : std::nullopt,
         .priority_requested = scenario_.queues[q].priority,
         .priority_granted = granted_priority_[q],
         .timestamp_valid_bits = family.timestampValidBits});
  }
  facts_.global_priority_extension = info_.global_priority;
  facts_.stamping = settings_.stamping;
  facts_.max_workgroups_x = info_.properties.limits.maxComputeWorkGroupCount[0];
  return ok_status();
}

namespace {

// Vulkan barrier structs of one recording call, with their handles filled in.
struct RecordedDependency {
  std::vector<VkMemoryBarrier2> memory;
  std::vector<VkBufferMemoryBarrier2> buffers;
  std::vector<VkImageMemoryBarrier2> images;
  VkDependencyInfo info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
};

// Contract: the result refers to its own vectors; do not copy it after filling (the
// constructor-free aggregate is filled in place by fill_dependency).
// The stage and access scopes every synchronization2 barrier struct carries.
template <typename Barrier>
Barrier with_scopes(Barrier barrier, const BarrierDesc& d) {
  barrier.srcStageMask = d.src.stages;
  barrier.srcAccessMask = d.src.access;
  barrier.dstStageMask = d.dst.stages;
  barrier.dstAccessMask = d.dst.access;
  return barrier;
}

void fill_dependency(RecordedDependency& out, const std::vector<BarrierDesc>& descs,
                     VkBuffer buffer, VkImage image) {
  for (const BarrierDesc& d : descs) {
    switch (d.target) {
      case BarrierDesc::Target::memory:
        out.memory.push_back(with_scopes(VkMemoryBarrier2{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2}, d));
        break;
      case BarrierDesc::Target::buffer: {
        auto b = with_scopes(VkBufferMemoryBarrier2{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2}, d);
        b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.buffer = buffer;
        b.size = VK_WHOLE_SIZE;
        out.buffers.push_back(b);
        break;
      }
      case BarrierDesc::Target::image: {
        auto b = with_scopes(VkImageMemoryBarrier2{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2}, d);
        b.oldLayout = d.old_layout;
        b.newLayout = d.new_layout;
        b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.image = image;
        b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        out.images.push_back(b);
        break;
      }
    }
  }
  out.info.memoryBarrierCount = static_cast<std::uint32_t>(out.memory.size());
  out.info.pMemoryBarriers = out.memory.data();
  out.info.bufferMemoryBarrierCount = static_cast<std::uint32_t>(out.buffers.size());
  out.info.pBufferMemoryBarriers = out.buffers.data();
  out.info.imageMemoryBarrierCount = static_cast<std::uint32_t>(out.images.size());
  out.info.pImageMemoryBarriers = out.images.data();
}

}  // namespace

void ScenarioDevice::record_barriers(VkCommandBuffer cmd, const std::vector<BarrierDesc>& descs,
                                     std::size_t producer) const {
  if (descs.empty()) return;
  RecordedDependency dependency;
  fill_dependency(dependency, descs, outputs_[producer].buffer, targets_[producer].image);
  vkCmdPipelineBarrier2(cmd, &dependency.info);
}

// A split pair's halves: vkCmdSetEvent2 after the producer, vkCmdWaitEvents2 before the
// consumer, with one and the same dependency (Vulkan requires them to match).
void ScenarioDevice::record_event(VkCommandBuffer cmd, VkEvent event, const BarrierDesc& desc,
                                  std::size_t producer, bool set) const {
  RecordedDependency dependency;
  fill_dependency(dependency, {desc}, outputs_[producer].buffer, targets_[producer].image);
  if (set)
    vkCmdSetEvent2(cmd, event, &dependency.info);
  else
    vkCmdWaitEvents2(cmd, 1, &event, &dependency.info);
}

// One workload: the barriers and event waits its dependencies put before it, a timestamp, the
// dispatch or draw, a timestamp, then what its consumers put right after it (BEGIN halves of
// split barriers, and barriers a consumer on a compute queue cannot record itself).
void ScenarioDevice::record_perlin(VkCommandBuffer cmd, std::size_t w, const PushConstants& pc,
                                   std::uint32_t draws) const {
  constexpr VkShaderStageFlags kPushStages =
      VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_VERTEX_BIT;
  if (scenario_.workloads[w].kind == WorkloadKind::compute) {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, compute_pipeline_);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &sets_[w],
                            0, nullptr);
    vkCmdPushConstants(cmd, pipeline_layout_, kPushStages, 0, sizeof(pc), &pc);
    vkCmdDispatch(cmd, pc.thread_count / kThreadsPerDispatchGroup, 1, 1);
    return;
  }
  const Image& target = targets_[w];
  VkRenderingAttachmentInfo color{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
  color.imageView = target.view;
  color.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  VkRenderingInfo ri{VK_STRUCTURE_TYPE_RENDERING_INFO};
  ri.renderArea = {{0, 0}, {target.width, target.height}};
  ri.layerCount = 1;
  ri.colorAttachmentCount = 1;
  ri.pColorAttachments = &color;
  vkCmdBeginRendering(cmd, &ri);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, graphics_pipeline_);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_layout_, 0, 1, &sets_[w],
                          0, nullptr);
  vkCmdPushConstants(cmd, pipeline_layout_, kPushStages, 0, sizeof(pc), &pc);
  const VkViewport viewport{
      0, 0, static_cast<float>(target.width), static_cast<float>(target.height), 0, 1};
  const VkRect2D scissor{{0, 0}, {target.width, target.height}};
  vkCmdSetViewport(cmd, 0, 1, &viewport);
  vkCmdSetScissor(cmd, 0, 1, &scissor);
  for (std::uint32_t i = 0; i < draws; ++i) vkCmdDraw(cmd, 3, 1, 0, 0);
  vkCmdEndRendering(cmd);
}

VkImageMemoryBarrier2 to_color_attachment(VkImage image, VkImageLayout old_layout) {
  VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
  b.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  b.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
  b.dstStageMask = VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT;
  b.dstAccessMask = VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT;
  b.oldLayout = old_layout;
  b.newLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  return b;
}

void ScenarioDevice::record_workload(VkCommandBuffer cmd, std::size_t w, std::uint32_t frame,
                                     bool timestamps) {
  const WorkloadSpec& spec = scenario_.workloads[w];
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i) {
    if (plan_.barriers.dependencies[i].consumer != w) continue;
    const std::size_t producer = plan_.barriers.dependencies[i].producer;
    if (ops_[i].wait_event_before_consumer)
      record_event(cmd, events_[i], *ops_[i].wait_event_before_consumer, producer, false);
    record_barriers(cmd, ops_[i].barriers_before_consumer, producer);
  }
  if (timestamps)
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, queries_,
                         static_cast<std::uint32_t>(2 * w));
  const PushConstants pc{frame,
                         static_cast<std::uint32_t>(w),
                         thread_count(spec.groups),
                         spec.iterations,
                         kRenderTargetWidth,
                         settings_.stamping ? 1u : 0u,
                         producers_[w]};
  record_perlin(cmd, w, pc, 1);
  if (timestamps)
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, queries_,
                         static_cast<std::uint32_t>(2 * w + 1));
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i) {
    if (plan_.barriers.dependencies[i].producer != w) continue;
    if (ops_[i].set_event_after_producer)
      record_event(cmd, events_[i], *ops_[i].set_event_after_producer, w, true);
    record_barriers(cmd, ops_[i].barriers_after_producer, w);
  }
}

Status ScenarioDevice::record_frame(std::uint32_t frame) {
  for (std::size_t qi = 0; qi < queues_.size(); ++qi) {
    QueueState& q = queues_[qi];
    GPUOVERLAP_VK(vkResetCommandPool(device_, q.pool, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;

    // Prepare (before the gate, not measured): zero this queue's counters, reset its queries
    // and events, bring its render targets back to RENDER_TARGET from the layout the last
    // frame left them in, then one barrier so that everything submitted later on this queue
    // sees it.
    GPUOVERLAP_VK(vkBeginCommandBuffer(q.prepare, &bi));
    std::vector<VkImageMemoryBarrier2> target_barriers;
    for (std::size_t w : q.workloads) {
      vkCmdFillBuffer(q.prepare, counters_.buffer, w * slot_stride_, kSlotBytes, 0);
      vkCmdResetQueryPool(q.prepare, queries_, static_cast<std::uint32_t>(2 * w), 2);
      if (targets_[w].image && target_layouts_[w] != VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL) {
        target_barriers.push_back(to_color_attachment(targets_[w].image, target_layouts_[w]));
      }
    }
    for (std::size_t i = 0; i < events_.size(); ++i)
      if (events_[i] && scenario_.workloads[plan_.barriers.dependencies[i].consumer].queue == qi)
        vkCmdResetEvent2(q.prepare, events_[i], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    VkMemoryBarrier2 everything{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    everything.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    everything.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
    everything.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    everything.dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
    VkDependencyInfo prepare_dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    prepare_dependency.memoryBarrierCount = 1;
    prepare_dependency.pMemoryBarriers = &everything;
    prepare_dependency.imageMemoryBarrierCount = static_cast<std::uint32_t>(target_barriers.size());
    prepare_dependency.pImageMemoryBarriers = target_barriers.data();
    vkCmdPipelineBarrier2(q.prepare, &prepare_dependency);
    GPUOVERLAP_VK(vkEndCommandBuffer(q.prepare));
  }

  // Work (released by the gate): one command buffer per submission of the frame plan.
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    const Segment& segment = plan_.segments[i];
    const QueueState& q = queues_[segment.queue];
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    GPUOVERLAP_VK(vkBeginCommandBuffer(segment_buffers_[i], &bi));
    const bool timestamps = q.timestamp_valid_bits > 0 && settings_.timestamp_queries;
    for (std::size_t w : segment.workloads)
      record_workload(segment_buffers_[i], w, frame, timestamps);
    GPUOVERLAP_VK(vkEndCommandBuffer(segment_buffers_[i]));
  }
  for (std::size_t w = 0; w < targets_.size(); ++w)
    if (targets_[w].image)
      target_layouts_[w] = layout_for_barrier_layout(plan_.barriers.final_layouts[w]);
  return ok_status();
}

Status ScenarioDevice::submit_frame_commands(std::uint32_t frame) {
  // All prepare submissions first, then the gated work in the plan's submission order, which
  // puts every fence signal before its wait (required where two scenario queues share a device
  // queue, as on lavapipe).
  for (const QueueState& q : queues_) {
    VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, q.prepare,
                                 0};
    VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    si.commandBufferInfoCount = 1;
    si.pCommandBufferInfos = &cb;
    GPUOVERLAP_VK(vkQueueSubmit2(q.queue, 1, &si, VK_NULL_HANDLE));
  }
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    const Segment& segment = plan_.segments[i];
    const QueueState& q = queues_[segment.queue];
    std::vector<VkSemaphoreSubmitInfo> waits, signals;
    auto semaphore = [frame](VkSemaphore s) {
      return VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, s, frame,
                                   VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,    0};
    };
    if (plan_.first_segment_of_queue[segment.queue] == i) waits.push_back(semaphore(gate_));
    for (std::size_t producer : segment.wait_for) waits.push_back(semaphore(fences_[producer]));
    if (segment.signals_fence) signals.push_back(semaphore(fences_[segment.workloads.back()]));
    if (plan_.last_segment_of_queue[segment.queue] == i) signals.push_back(semaphore(q.done));
    VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr,
                                 segment_buffers_[i], 0};
    VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    si.waitSemaphoreInfoCount = static_cast<std::uint32_t>(waits.size());
    si.pWaitSemaphoreInfos = waits.data();
    si.commandBufferInfoCount = 1;
    si.pCommandBufferInfos = &cb;
    si.signalSemaphoreInfoCount = static_cast<std::uint32_t>(signals.size());
    si.pSignalSemaphoreInfos = signals.data();
    GPUOVERLAP_VK(vkQueueSubmit2(q.queue, 1, &si, VK_NULL_HANDLE));
  }
  return ok_status();
}

// --- ScenarioBackend: the frame loop itself is engine/frame_loop.cpp's --------------------------

StampView ScenarioDevice::stamps() const {
  return {static_cast<const std::uint32_t*>(stamps_.mapped), slot_stride_ / sizeof(std::uint32_t),
          scenario_.workloads.size()};
}

GpuOutcome ScenarioDevice::outcome_of(VkResult result, const char* call) const {
  if (result == VK_SUCCESS) return GpuOutcome::ok();
  const GpuStatus status = result == VK_TIMEOUT             ? GpuStatus::timeout
                           : result == VK_ERROR_DEVICE_LOST ? GpuStatus::device_lost
                                                            : GpuStatus::failed;
  return {status, vk_error(result, call)};
}

GpuOutcome ScenarioDevice::submit_frame(std::uint32_t frame) {
  Status submitted = submit_frame_commands(frame);
  if (submitted) return GpuOutcome::ok();
  return {submitted.error().api_code == VK_ERROR_DEVICE_LOST ? GpuStatus::device_lost
                                                             : GpuStatus::failed,
          submitted.error()};
}

GpuOutcome ScenarioDevice::release_gate(std::uint32_t frame) {
  VkSemaphoreSignalInfo release{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, nullptr, gate_, frame};
  return outcome_of(vkSignalSemaphore(device_, &release), "vkSignalSemaphore");
}

GpuOutcome ScenarioDevice::wait_frame(std::uint32_t frame, std::int64_t deadline_ns) {
  std::fill(done_values_.begin(), done_values_.end(), std::uint64_t{frame});
  VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wait.semaphoreCount = static_cast<std::uint32_t>(done_semaphores_.size());
  wait.pSemaphores = done_semaphores_.data();
  wait.pValues = done_values_.data();
  const std::int64_t remaining_ns = std::max<std::int64_t>(deadline_ns - monotonic_raw_ns(), 0);
  return outcome_of(vkWaitSemaphores(device_, &wait, static_cast<std::uint64_t>(remaining_ns)),
                    "vkWaitSemaphores");
}

std::vector<std::optional<TimestampTicks>> ScenarioDevice::read_timestamps() {
  const std::size_t slots = scenario_.workloads.size();
  // Per query: the value, then its availability.
  const VkResult result = vkGetQueryPoolResults(
      device_, queries_, 0, static_cast<std::uint32_t>(2 * slots),
      query_data_.size() * sizeof(std::uint64_t), query_data_.data(), 2 * sizeof(std::uint64_t),
      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (result != VK_SUCCESS && result != VK_NOT_READY) return {};
  std::vector<std::optional<TimestampTicks>> ticks(slots);
  for (std::size_t w = 0; w < slots; ++w)
    if (query_data_[4 * w + 1] && query_data_[4 * w + 3])
      ticks[w] = TimestampTicks{query_data_[4 * w], query_data_[4 * w + 2]};
  return ticks;
}

Error ScenarioDevice::timeout_error() const {
  return vk_error(VK_TIMEOUT, "waiting for the frame");
}

// The GPU answers each round the CPU posts (pingpong.comp). Its own pipeline and
// mailbox, on the device's first queue; everything is freed unless the GPU may still spin.
Result<PingPongResult> ScenarioDevice::ping_pong(std::uint32_t rounds, std::uint32_t timeout_ms) {
  PingPongResult out;
  Buffer mailbox;
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  VkShaderModule module = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  const QueueState& q = queues_.front();
  const ScopeExit cleanup([&] {
    if (gpu_may_be_busy_) return;
    if (fence) vkDestroyFence(device_, fence, nullptr);
    if (cmd) vkFreeCommandBuffers(device_, q.pool, 1, &cmd);
    if (pool) vkDestroyDescriptorPool(device_, pool, nullptr);
    if (pipeline) vkDestroyPipeline(device_, pipeline, nullptr);
    if (module) vkDestroyShaderModule(device_, module, nullptr);
    if (pipeline_layout) vkDestroyPipelineLayout(device_, pipeline_layout, nullptr);
    if (layout) vkDestroyDescriptorSetLayout(device_, layout, nullptr);
    if (mailbox.buffer) vkDestroyBuffer(device_, mailbox.buffer, nullptr);
    if (mailbox.memory) vkFreeMemory(device_, mailbox.memory, nullptr);
  });
  GPUOVERLAP_TRY(create_stamp_buffer(mailbox, kSlotBytes, "ping-pong mailbox"));
  out.memory = memory_flags_text(memory_properties_.memoryTypes[mailbox.memory_type].propertyFlags);

  const VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                             VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = 1;
  li.pBindings = &binding;
  GPUOVERLAP_VK(vkCreateDescriptorSetLayout(device_, &li, nullptr, &layout));
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 2 * sizeof(std::uint32_t)};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  GPUOVERLAP_VK(vkCreatePipelineLayout(device_, &pli, nullptr, &pipeline_layout));
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = sizeof(kPingPongSpirv);
  mi.pCode = kPingPongSpirv;
  GPUOVERLAP_VK(vkCreateShaderModule(device_, &mi, nullptr, &module));
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              nullptr,
              0,
              VK_SHADER_STAGE_COMPUTE_BIT,
              module,
              "main",
              nullptr};
  ci.layout = pipeline_layout;
  GPUOVERLAP_VK(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline));
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  GPUOVERLAP_VK(vkCreateDescriptorPool(device_, &dpi, nullptr, &pool));
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &layout;
  GPUOVERLAP_VK(vkAllocateDescriptorSets(device_, &dai, &set));
  const VkDescriptorBufferInfo buffer_info{mailbox.buffer, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
  write.dstSet = set;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &buffer_info;
  vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);

  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = q.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, &cmd));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  GPUOVERLAP_VK(vkBeginCommandBuffer(cmd, &bi));
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout, 0, 1, &set, 0,
                          nullptr);
  // One extra round first: its round trip includes the dispatch's launch, so it is dropped.
  const std::uint32_t gpu_rounds = rounds + 1;
  const std::uint32_t push[2] = {gpu_rounds,
                                 info_.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                                     ? kPingPongMaxSpinsCpu
                                     : kPingPongMaxSpinsGpu};
  vkCmdPushConstants(cmd, pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), push);
  vkCmdDispatch(cmd, 1, 1, 1);
  GPUOVERLAP_VK(vkEndCommandBuffer(cmd));
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  GPUOVERLAP_VK(vkCreateFence(device_, &fi, nullptr, &fence));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  GPUOVERLAP_VK(vkQueueSubmit(q.queue, 1, &si, fence));

  auto* words = static_cast<std::uint32_t*>(mailbox.mapped);
  const std::int64_t deadline_ns = monotonic_raw_ns() + std::int64_t{timeout_ms} * 1'000'000;
  for (std::uint32_t round = 1; round <= gpu_rounds; ++round) {
    const std::int64_t posted_ns = monotonic_raw_ns();
    __atomic_store_n(&words[0], round, __ATOMIC_SEQ_CST);
    // Drains a write-combining buffer, so the post reaches memory now, not when it fills.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    bool answered = false, gave_up = false, ahead = false;
    std::int64_t now_ns = posted_ns;
    std::uint32_t pong = 0;
    while (now_ns < deadline_ns) {
      pong = __atomic_load_n(&words[1], __ATOMIC_ACQUIRE);
      answered = pong == round;
      gave_up = pong == kPingPongGaveUp;
      // An answer to a round not posted yet: the shader went past its wait for it.
      ahead = pong > round && !gave_up && pong != kPingPongCancel;
      if (answered || gave_up || ahead) break;
      now_ns = monotonic_raw_ns();
    }
    const std::int64_t seen_ns = monotonic_raw_ns();
    if (ahead) {
      // Seen on lavapipe on a loaded 2-core machine: while the CPU waited for round r, the
      // shader answered r + 1 and finished; its 32 invocations (four 8-wide vectors) do not
      // all wait for each host write. The round trip is not measurable there.
      out.unordered_answers = true;
      out.failure = make_error("ping-pong round " + std::to_string(round - 1) +
                               ": the shader answered round " + std::to_string(pong - 1) +
                               " before it was posted (its reads of host memory do not "
                               "wait for the host's writes in order on this device)");
      break;
    }
    if (gave_up) {
      out.host_writes_invisible = true;
      out.failure = make_error("ping-pong round " + std::to_string(round - 1) +
                               ": the GPU gave up waiting (it never saw the CPU's post: host "
                               "writes do not reach a running shader on this device)");
      break;
    }
    if (!answered) {
      out.failure = make_error("ping-pong round " + std::to_string(round - 1) +
                               " was not answered within " + std::to_string(timeout_ms) + " ms");
      break;
    }
    if (round > 1) out.round_trip_us.push_back(static_cast<double>(seen_ns - posted_ns) / 1000.0);
  }
  // Releases the GPU thread from every remaining round.
  __atomic_store_n(&words[0], kPingPongCancel, __ATOMIC_SEQ_CST);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::int64_t remaining_ns = std::max<std::int64_t>(
      deadline_ns - monotonic_raw_ns(), std::int64_t{kSetupTimeoutNs} / 30);  // >= 1 s
  const VkResult waited =
      vkWaitForFences(device_, 1, &fence, VK_TRUE, static_cast<std::uint64_t>(remaining_ns));
  if (waited != VK_SUCCESS) {
    gpu_may_be_busy_ = true;
    if (!out.failure) out.failure = vk_error(waited, "waiting for the ping-pong dispatch");
  }
  return out;
}

// The driver's compiler work for one background compile: the variant's SPIR-V becomes a
// compute pipeline on this device (same layout as the foreground's; never bound). Runs on
// background threads; vkCreateShaderModule/vkCreateComputePipelines need no external
// synchronisation of the device.
Result<background::PipelineHandle> ScenarioDevice::build_variant(
    const std::vector<std::uint32_t>& spirv) {
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.size() * sizeof(std::uint32_t);
  mi.pCode = spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  if (VkResult r = vkCreateShaderModule(device_, &mi, nullptr, &module); r != VK_SUCCESS)
    return vk_error(r, "vkCreateShaderModule (background variant)");
  const ScopeExit module_guard([&] { vkDestroyShaderModule(device_, module, nullptr); });
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              nullptr,
              0,
              VK_SHADER_STAGE_COMPUTE_BIT,
              module,
              "cs_main",
              nullptr};
  ci.layout = pipeline_layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  if (VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline);
      r != VK_SUCCESS)
    return vk_error(r, "vkCreateComputePipelines (background variant)");
  return reinterpret_cast<background::PipelineHandle>(pipeline);
}

Status ScenarioDevice::create_background() {
  if (!scenario_.background) return ok_status();
  background::PipelineBuilder builder;
  builder.build = [this](const std::vector<std::uint32_t>& spirv) { return build_variant(spirv); };
  builder.dispose = [this](background::PipelineHandle handle) {
    vkDestroyPipeline(device_, reinterpret_cast<VkPipeline>(handle), nullptr);
  };
  background_ =
      std::make_unique<background::BackgroundSession>(*scenario_.background, std::move(builder));
  // The driver sees every workload's use of the compute shader with its iteration count.
  for (const WorkloadSpec& w : scenario_.workloads)
    background_->watch(w.name, w.iterations, compute_variants_.back_pointer());
  return ok_status();
}

void ScenarioDevice::destroy() {
  // Background compiles use the device: none may run once anything is destroyed, whether or
  // not the device itself is freed below.
  if (background_) background_->stop();
  if (device_ == VK_NULL_HANDLE) return;
  if (gpu_may_be_busy_) return;  // see the class comment: leak rather than free in-use memory
  // Every submission was waited for with a deadline; this returns at once.
  vkDeviceWaitIdle(device_);
  for (StreamState* stream : {&load_stream_, &urgent_stream_}) {
    if (stream->pool) vkDestroyCommandPool(device_, stream->pool, nullptr);
    if (stream->done) vkDestroySemaphore(device_, stream->done, nullptr);
  }
  if (stream_queries_) vkDestroyQueryPool(device_, stream_queries_, nullptr);
  auto destroy_buffer = [&](Buffer& b) {
    if (b.buffer) vkDestroyBuffer(device_, b.buffer, nullptr);
    if (b.memory) vkFreeMemory(device_, b.memory, nullptr);
  };
  for (background::PipelineHandle variant : compute_variants_.take())
    vkDestroyPipeline(device_, reinterpret_cast<VkPipeline>(variant), nullptr);
  for (VkEvent e : events_)
    if (e) vkDestroyEvent(device_, e, nullptr);
  for (VkSemaphore f : fences_)
    if (f) vkDestroySemaphore(device_, f, nullptr);
  for (QueueState& q : queues_) {
    if (q.pool) vkDestroyCommandPool(device_, q.pool, nullptr);
    if (q.done) vkDestroySemaphore(device_, q.done, nullptr);
  }
  if (gate_) vkDestroySemaphore(device_, gate_, nullptr);
  if (queries_) vkDestroyQueryPool(device_, queries_, nullptr);
  if (descriptor_pool_) vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
  if (compute_pipeline_) vkDestroyPipeline(device_, compute_pipeline_, nullptr);
  if (graphics_pipeline_) vkDestroyPipeline(device_, graphics_pipeline_, nullptr);
  for (VkShaderModule m : {compute_module_, vertex_module_, fragment_module_})
    if (m) vkDestroyShaderModule(device_, m, nullptr);
  if (pipeline_layout_) vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
  if (set_layout_) vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
  auto destroy_image = [this](Image& image) {
    if (image.view) vkDestroyImageView(device_, image.view, nullptr);
    if (image.image) vkDestroyImage(device_, image.image, nullptr);
    if (image.memory) vkFreeMemory(device_, image.memory, nullptr);
  };
  for (Image& image : targets_) destroy_image(image);
  destroy_image(dummy_target_);
  for (Buffer& b : outputs_) destroy_buffer(b);
  destroy_buffer(dummy_output_);
  destroy_buffer(input_);
  destroy_buffer(counters_);
  destroy_buffer(stamps_);
  vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

}  // namespace gpuoverlap::vk
