#include "backends/vulkan/barrier_explain.h"

#include <fmt/format.h>

#include <initializer_list>
#include <utility>

#include "backends/vulkan/barrier_translation.h"

namespace gpuoverlap::vk {
namespace {

// Names of the synchronization2 bits the translation produces, '|'-joined.
std::string flag_names(std::uint64_t bits,
                       std::initializer_list<std::pair<std::uint64_t, const char*>> names) {
  if (bits == 0) return "NONE";
  std::string text;
  for (const auto& [bit, name] : names)
    if ((bits & bit) == bit) {
      if (!text.empty()) text += '|';
      text += name;
      bits &= ~bit;
    }
  if (bits != 0) text += fmt::format("{}0x{:x}", text.empty() ? "" : "|", bits);
  return text;
}

std::string stage_text(const SyncScope& scope) {
  const std::string stages = flag_names(
      scope.stages, {{VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, "ALL_COMMANDS"},
                     {VK_PIPELINE_STAGE_2_INDEX_INPUT_BIT, "INDEX_INPUT"},
                     {VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT, "VERTEX_ATTRIBUTE_INPUT"},
                     {VK_PIPELINE_STAGE_2_VERTEX_INPUT_BIT, "VERTEX_INPUT"},
                     {VK_PIPELINE_STAGE_2_PRE_RASTERIZATION_SHADERS_BIT, "PRE_RASTERIZATION"},
                     {VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT, "VERTEX_SHADER"},
                     {VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, "FRAGMENT_SHADER"},
                     {VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT, "EARLY_FRAGMENT_TESTS"},
                     {VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT, "LATE_FRAGMENT_TESTS"},
                     {VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT, "COLOR_ATTACHMENT_OUTPUT"},
                     {VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, "COMPUTE_SHADER"},
                     {VK_PIPELINE_STAGE_2_COPY_BIT, "COPY"},
                     {VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT, "DRAW_INDIRECT"}});
  const std::string access = flag_names(
      scope.access,
      {{VK_ACCESS_2_MEMORY_READ_BIT, "MEMORY_READ"},
       {VK_ACCESS_2_MEMORY_WRITE_BIT, "MEMORY_WRITE"},
       {VK_ACCESS_2_SHADER_READ_BIT, "SHADER_READ"},
       {VK_ACCESS_2_SHADER_WRITE_BIT, "SHADER_WRITE"},
       {VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT, "COLOR_ATTACHMENT_READ"},
       {VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, "COLOR_ATTACHMENT_WRITE"},
       {VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT, "DEPTH_STENCIL_ATTACHMENT_READ"},
       {VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT, "DEPTH_STENCIL_ATTACHMENT_WRITE"},
       {VK_ACCESS_2_UNIFORM_READ_BIT, "UNIFORM_READ"},
       {VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT, "VERTEX_ATTRIBUTE_READ"},
       {VK_ACCESS_2_INDEX_READ_BIT, "INDEX_READ"},
       {VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT, "INDIRECT_COMMAND_READ"},
       {VK_ACCESS_2_TRANSFER_READ_BIT, "TRANSFER_READ"},
       {VK_ACCESS_2_TRANSFER_WRITE_BIT, "TRANSFER_WRITE"}});
  return stages + " / " + access;
}

const char* layout_name(VkImageLayout layout) {
  switch (layout) {
    case VK_IMAGE_LAYOUT_UNDEFINED:
      return "UNDEFINED";
    case VK_IMAGE_LAYOUT_GENERAL:
      return "GENERAL";
    case VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL:
      return "COLOR_ATTACHMENT_OPTIMAL";
    case VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL:
      return "SHADER_READ_ONLY_OPTIMAL";
    case VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL:
      return "DEPTH_STENCIL_ATTACHMENT_OPTIMAL";
    case VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL:
      return "DEPTH_STENCIL_READ_ONLY_OPTIMAL";
    case VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL:
      return "TRANSFER_SRC_OPTIMAL";
    case VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL:
      return "TRANSFER_DST_OPTIMAL";
    default:
      return "other";
  }
}

std::string vulkan_text(const BarrierDesc& d) {
  const char* target = d.target == BarrierDesc::Target::memory   ? "memory"
                       : d.target == BarrierDesc::Target::buffer ? "buffer"
                                                                 : "image";
  std::string text =
      fmt::format("{} barrier: {} -> {}", target, stage_text(d.src), stage_text(d.dst));
  if (d.target == BarrierDesc::Target::image)
    text += fmt::format(", layout {} -> {}", layout_name(d.old_layout), layout_name(d.new_layout));
  if (d.target == BarrierDesc::Target::image &&
      (d.mip_count != VK_REMAINING_MIP_LEVELS || d.layer_count != VK_REMAINING_ARRAY_LAYERS))
    text += fmt::format(", mips {}+{} layers {}+{}", d.base_mip, d.mip_count, d.base_layer,
                        d.layer_count);
  return text;
}

}  // namespace

std::vector<std::string> explain_dependency(const DependencyPlan& dependency) {
  std::vector<std::string> lines;
  const DependencyOps ops = translate(dependency);
  for (const auto& b : ops.set_event_after_producer)
    lines.push_back("Vulkan after producer: vkCmdSetEvent2, " + vulkan_text(b));
  for (const auto& b : ops.barriers_after_producer)
    lines.push_back("Vulkan after producer: vkCmdPipelineBarrier2, " + vulkan_text(b));
  for (const auto& b : ops.wait_event_before_consumer)
    lines.push_back("Vulkan before consumer: vkCmdWaitEvents2, " + vulkan_text(b));
  for (const auto& b : ops.barriers_before_consumer)
    lines.push_back("Vulkan before consumer: vkCmdPipelineBarrier2, " + vulkan_text(b));
  return lines;
}

std::string explain_target_transition(const TargetTransition& transition, TextureExtent extent,
                                      QueueType queue) {
  return "Vulkan before the write: vkCmdPipelineBarrier2, " +
         vulkan_text(translate(transition, extent, queue));
}

}  // namespace gpuoverlap::vk
