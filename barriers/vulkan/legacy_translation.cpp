#include "barriers/vulkan/legacy_translation.h"

namespace gpuoverlap::vk {

namespace {

// vkd3d-proton adds the tessellation and geometry stages only when the device enables those
// features; gpuoverlap's devices never do (no workload uses them), and naming a stage of a
// disabled feature is invalid (VUID-VkBufferMemoryBarrier2-srcStageMask-03929/03930).
constexpr VkPipelineStageFlags2 kGraphicsShaderStages =
    VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT;

VkPipelineStageFlags2 queue_shader_stages(QueueType queue) {
  return queue == QueueType::compute
             ? VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT
             : (kGraphicsShaderStages | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
}

bool has(D3D12_RESOURCE_STATES state, D3D12_RESOURCE_STATES bit) {
  return (static_cast<unsigned>(state) & static_cast<unsigned>(bit)) != 0;
}

}  // namespace

SyncScope scope_for_state(D3D12_RESOURCE_STATES state, QueueType queue) {
  if (state == D3D12_RESOURCE_STATE_COMMON)
    return {VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
            VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT};
  SyncScope scope;
  auto add = [&scope](VkPipelineStageFlags2 stages, VkAccessFlags2 access) {
    scope.stages |= stages;
    scope.access |= access;
  };
  if (has(state, D3D12_RESOURCE_STATE_UNORDERED_ACCESS))
    add(queue_shader_stages(queue), VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  if (has(state, D3D12_RESOURCE_STATE_RENDER_TARGET))
    add(VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
        VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT);
  if (has(state, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE))
    add(queue_shader_stages(queue) & ~VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
        VK_ACCESS_2_SHADER_READ_BIT);
  if (has(state, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE))
    add(VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, VK_ACCESS_2_SHADER_READ_BIT);
  if (has(state, D3D12_RESOURCE_STATE_COPY_DEST))
    add(VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
  if (has(state, D3D12_RESOURCE_STATE_COPY_SOURCE))
    add(VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
  return scope;
}

VkImageLayout layout_for_state(D3D12_RESOURCE_STATES state) {
  switch (state) {
    case D3D12_RESOURCE_STATE_RENDER_TARGET:
      return VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    case D3D12_RESOURCE_STATE_UNORDERED_ACCESS:
      return VK_IMAGE_LAYOUT_GENERAL;
    case D3D12_RESOURCE_STATE_COPY_DEST:
      return VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    case D3D12_RESOURCE_STATE_COPY_SOURCE:
      return VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    case D3D12_RESOURCE_STATE_COMMON:
      return VK_IMAGE_LAYOUT_GENERAL;
    default:
      break;
  }
  const unsigned read_states =
      D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE | D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE;
  if ((static_cast<unsigned>(state) & ~read_states) == 0 && state != 0)
    return VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  return VK_IMAGE_LAYOUT_GENERAL;
}

TranslatedTransition translate(const LegacyTransition& transition, QueueType queue) {
  return TranslatedTransition{
      scope_for_state(transition.before, queue), scope_for_state(transition.after, queue),
      layout_for_state(transition.before), layout_for_state(transition.after)};
}

}  // namespace gpuoverlap::vk
