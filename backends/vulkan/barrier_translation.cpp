#include "backends/vulkan/barrier_translation.h"

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
  if (has(state, D3D12_RESOURCE_STATE_DEPTH_WRITE))
    add(VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
        VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
            VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT);
  if (has(state, D3D12_RESOURCE_STATE_DEPTH_READ))
    add(VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
        VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT);
  if (has(state, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE))
    add(queue_shader_stages(queue) & ~VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
        VK_ACCESS_2_SHADER_READ_BIT);
  if (has(state, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE))
    add(VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, VK_ACCESS_2_SHADER_READ_BIT);
  if (has(state, D3D12_RESOURCE_STATE_VERTEX_AND_CONSTANT_BUFFER))
    add(queue == QueueType::compute
            ? VkPipelineStageFlags2{VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT}
            : (queue_shader_stages(queue) | VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT),
        VK_ACCESS_2_UNIFORM_READ_BIT |
            (queue == QueueType::compute ? 0 : VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT));
  if (has(state, D3D12_RESOURCE_STATE_INDEX_BUFFER))
    add(VK_PIPELINE_STAGE_2_INDEX_INPUT_BIT, VK_ACCESS_2_INDEX_READ_BIT);
  if (has(state, D3D12_RESOURCE_STATE_INDIRECT_ARGUMENT))
    add(VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT, VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT);
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
    case D3D12_RESOURCE_STATE_DEPTH_WRITE:
      return VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
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
  // Depth read by the depth test, by shaders or both: the layout that allows both.
  if (has(state, D3D12_RESOURCE_STATE_DEPTH_READ) &&
      (static_cast<unsigned>(state) & ~(read_states | D3D12_RESOURCE_STATE_DEPTH_READ)) == 0)
    return VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL;
  return VK_IMAGE_LAYOUT_GENERAL;
}

TranslatedTransition translate(const LegacyTransition& transition, QueueType queue) {
  return TranslatedTransition{
      scope_for_state(transition.before, queue), scope_for_state(transition.after, queue),
      layout_for_state(transition.before), layout_for_state(transition.after)};
}

VkPipelineStageFlags2 stages_for_sync(D3D12_BARRIER_SYNC sync, QueueType queue) {
  const auto s = static_cast<unsigned>(sync);
  if (s & D3D12_BARRIER_SYNC_ALL) return VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  VkPipelineStageFlags2 stages = 0;
  auto when = [&](unsigned bit, VkPipelineStageFlags2 add) {
    if (s & bit) stages |= add;
  };
  when(D3D12_BARRIER_SYNC_DRAW,
       VK_PIPELINE_STAGE_2_INDEX_INPUT_BIT | VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT |
           VK_PIPELINE_STAGE_2_PRE_RASTERIZATION_SHADERS_BIT |
           VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT |
           VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT |
           VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT);
  when(D3D12_BARRIER_SYNC_INPUT_ASSEMBLER, VK_PIPELINE_STAGE_2_VERTEX_INPUT_BIT);
  when(D3D12_BARRIER_SYNC_VERTEX_SHADING, VK_PIPELINE_STAGE_2_PRE_RASTERIZATION_SHADERS_BIT);
  when(D3D12_BARRIER_SYNC_PIXEL_SHADING, VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT);
  when(D3D12_BARRIER_SYNC_DEPTH_STENCIL,
       VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT);
  when(D3D12_BARRIER_SYNC_RENDER_TARGET, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT);
  when(D3D12_BARRIER_SYNC_COMPUTE_SHADING, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  when(D3D12_BARRIER_SYNC_COPY, VK_PIPELINE_STAGE_2_COPY_BIT);
  when(D3D12_BARRIER_SYNC_EXECUTE_INDIRECT, VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT);
  when(D3D12_BARRIER_SYNC_ALL_SHADING, queue_shader_stages(queue));
  when(D3D12_BARRIER_SYNC_NON_PIXEL_SHADING,
       queue_shader_stages(queue) & ~VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT);
  return stages;  // SYNC_NONE (and SPLIT, which the pairing removes) -> NONE
}

VkAccessFlags2 access_for_barrier_access(D3D12_BARRIER_ACCESS access) {
  if (access == D3D12_BARRIER_ACCESS_NO_ACCESS) return VK_ACCESS_2_NONE;
  if (access == D3D12_BARRIER_ACCESS_COMMON)
    return VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
  const auto a = static_cast<unsigned>(access);
  VkAccessFlags2 flags = 0;
  auto when = [&](unsigned bit, VkAccessFlags2 add) {
    if (a & bit) flags |= add;
  };
  when(D3D12_BARRIER_ACCESS_VERTEX_BUFFER, VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT);
  when(D3D12_BARRIER_ACCESS_CONSTANT_BUFFER, VK_ACCESS_2_UNIFORM_READ_BIT);
  when(D3D12_BARRIER_ACCESS_INDEX_BUFFER, VK_ACCESS_2_INDEX_READ_BIT);
  when(D3D12_BARRIER_ACCESS_RENDER_TARGET,
       VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT);
  when(D3D12_BARRIER_ACCESS_UNORDERED_ACCESS,
       VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  when(D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE,
       VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
           VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT);
  when(D3D12_BARRIER_ACCESS_DEPTH_STENCIL_READ, VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT);
  when(D3D12_BARRIER_ACCESS_SHADER_RESOURCE, VK_ACCESS_2_SHADER_READ_BIT);
  when(D3D12_BARRIER_ACCESS_INDIRECT_ARGUMENT, VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT);
  when(D3D12_BARRIER_ACCESS_COPY_DEST, VK_ACCESS_2_TRANSFER_WRITE_BIT);
  when(D3D12_BARRIER_ACCESS_COPY_SOURCE, VK_ACCESS_2_TRANSFER_READ_BIT);
  return flags;
}

VkImageLayout layout_for_barrier_layout(D3D12_BARRIER_LAYOUT layout) {
  switch (layout) {
    case D3D12_BARRIER_LAYOUT_UNDEFINED:
      return VK_IMAGE_LAYOUT_UNDEFINED;
    case D3D12_BARRIER_LAYOUT_RENDER_TARGET:
      return VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    case D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE:
      return VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL;
    case D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ:  // the depth test's reads and shaders'
      return VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL;
    case D3D12_BARRIER_LAYOUT_SHADER_RESOURCE:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_SHADER_RESOURCE:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_SHADER_RESOURCE:
      return VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    case D3D12_BARRIER_LAYOUT_COPY_SOURCE:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COPY_SOURCE:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COPY_SOURCE:
      return VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    case D3D12_BARRIER_LAYOUT_COPY_DEST:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COPY_DEST:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COPY_DEST:
      return VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    default:  // COMMON, GENERIC_READ, UNORDERED_ACCESS and their queue forms
      return VK_IMAGE_LAYOUT_GENERAL;
  }
}

namespace {

BarrierDesc::Target target_of(ResourceKind resource) {
  return resource == ResourceKind::buffer ? BarrierDesc::Target::buffer
                                          : BarrierDesc::Target::image;
}

BarrierDesc legacy_desc(const D3D12_RESOURCE_BARRIER& b, ResourceKind resource,
                        TextureExtent extent, QueueType queue) {
  BarrierDesc desc;
  if (b.Type == D3D12_RESOURCE_BARRIER_TYPE_UAV) {
    desc.src = desc.dst = scope_for_state(D3D12_RESOURCE_STATE_UNORDERED_ACCESS, queue);
    return desc;  // a global memory barrier, as vkd3d-proton records UAV barriers
  }
  const TranslatedTransition t =
      translate({b.Transition.StateBefore, b.Transition.StateAfter}, queue);
  desc.target = target_of(resource);
  desc.src = t.src;
  desc.dst = t.dst;
  if (desc.target == BarrierDesc::Target::image) {
    desc.old_layout = t.old_layout;
    desc.new_layout = t.new_layout;
    if (b.Transition.Subresource != D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES) {
      desc.base_mip = b.Transition.Subresource % extent.mips;
      desc.base_layer = b.Transition.Subresource / extent.mips;
      desc.mip_count = desc.layer_count = 1;
    }
  }
  return desc;
}

template <typename Enhanced>
void sync_access(const Enhanced& e, QueueType queue, BarrierDesc& desc) {
  desc.src = {stages_for_sync(e.SyncBefore, queue), access_for_barrier_access(e.AccessBefore)};
  desc.dst = {stages_for_sync(e.SyncAfter, queue), access_for_barrier_access(e.AccessAfter)};
}

BarrierDesc enhanced_desc(const EnhancedBarrier& e, QueueType queue) {
  BarrierDesc desc;
  if (const auto* g = std::get_if<D3D12_GLOBAL_BARRIER>(&e)) {
    sync_access(*g, queue, desc);
  } else if (const auto* b = std::get_if<D3D12_BUFFER_BARRIER>(&e)) {
    desc.target = BarrierDesc::Target::buffer;
    sync_access(*b, queue, desc);
  } else {
    const auto& t = std::get<D3D12_TEXTURE_BARRIER>(e);
    desc.target = BarrierDesc::Target::image;
    sync_access(t, queue, desc);
    desc.old_layout = layout_for_barrier_layout(t.LayoutBefore);
    desc.new_layout = layout_for_barrier_layout(t.LayoutAfter);
    if (!covers_all(t.Subresources)) {
      desc.base_mip = t.Subresources.IndexOrFirstMipLevel;
      desc.mip_count = t.Subresources.NumMipLevels;
      desc.base_layer = t.Subresources.FirstArraySlice;
      desc.layer_count = t.Subresources.NumArraySlices;
    }
  }
  return desc;
}

BarrierDesc desc_of(const D3D12Barrier& barrier, const DependencyPlan& plan, QueueType queue) {
  if (const auto* legacy = std::get_if<D3D12_RESOURCE_BARRIER>(&barrier))
    return legacy_desc(*legacy, plan.resource, plan.extent, queue);
  return enhanced_desc(std::get<EnhancedBarrier>(barrier), queue);
}

}  // namespace

DependencyOps translate(const DependencyPlan& plan) {
  DependencyOps ops;
  const QueueType queue = plan.barrier_queue_type;
  if (is_split(plan.kind) && !plan.cross_queue && !plan.barriers.empty()) {
    // The pairs' halves, in the planner's order (BEGIN, END per subresource): BEGIN carries the
    // "before" side, END the "after" side (for SYNC_SPLIT the other side of each half is
    // SPLIT, which names no stage).
    std::vector<BarrierDesc> pairs;
    for (std::size_t i = 0; i + 1 < plan.barriers.size(); i += 2) {
      BarrierDesc whole = desc_of(plan.barriers[i].barrier, plan, queue);
      const BarrierDesc end = desc_of(plan.barriers[i + 1].barrier, plan, queue);
      whole.dst = end.dst;
      whole.new_layout = end.new_layout;
      pairs.push_back(whole);
    }
    if (plan.split_policy == SplitPolicy::event) {
      ops.set_event_after_producer = pairs;
      ops.wait_event_before_consumer = pairs;
    } else {
      ops.barriers_before_consumer = pairs;
    }
    return ops;
  }
  for (const PlacedBarrier& placed : plan.barriers) {
    const BarrierDesc desc = desc_of(placed.barrier, plan, queue);
    if (placed.placement == Placement::after_producer)
      ops.barriers_after_producer.push_back(desc);
    else
      ops.barriers_before_consumer.push_back(desc);
  }
  return ops;
}

BarrierDesc translate(const TargetTransition& transition, TextureExtent extent, QueueType queue) {
  if (const auto* legacy = std::get_if<D3D12_RESOURCE_BARRIER>(&transition.barrier)) {
    if (legacy->Type != D3D12_RESOURCE_BARRIER_TYPE_ALIASING)
      return legacy_desc(*legacy, ResourceKind::texture, extent, queue);
    // An ALIASING barrier names no sync: like vkd3d-proton, it waits for all earlier work and
    // makes every write visible; the activated image leaves UNDEFINED (what D3D12's required
    // DiscardResource of a newly active render target does) for the layout it rests in.
    BarrierDesc desc;
    desc.target = BarrierDesc::Target::image;
    desc.src = {VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT};
    desc.dst = {VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT};
    desc.old_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    desc.new_layout = layout_for_barrier_layout(transition.aliasing_layout);
    return desc;
  }
  BarrierDesc desc = enhanced_desc(std::get<EnhancedBarrier>(transition.barrier), queue);
  if (transition.aliasing_from) {
    // The activation's layout transition writes memory the holder wrote; the release before it
    // ends in stage NONE, which no later barrier chains through, so the holder's last writes
    // are made available here (reads need the execution dependency alone).
    constexpr VkAccessFlags2 kWrites =
        VK_ACCESS_2_SHADER_WRITE_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT |
        VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT |
        VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
    desc.src.access |= access_for_barrier_access(transition.aliasing_access) & kWrites;
  }
  return desc;
}

}  // namespace gpuoverlap::vk
