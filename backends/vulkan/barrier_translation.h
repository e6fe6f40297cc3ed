// The D3D12 barrier vocabulary -> Vulkan synchronization2 (docs/barriers.md). Vulkan
// *types* only: no Vulkan call is made here, so this is unit tested without a device; the
// executor fills in the buffer and image handles and records what comes out.
//   legacy states -> stages/accesses as vkd3d-proton maps them;
//   UAV barrier   -> a global memory barrier, UNORDERED_ACCESS to UNORDERED_ACCESS;
//   enhanced      -> the precise vkCmdPipelineBarrier2 of its sync/access/layout;
//   split pairs   -> SplitPolicy::event: vkCmdSetEvent2 after the producer and
//                    vkCmdWaitEvents2 before the consumer with one and the same dependency;
//                    SplitPolicy::collapsed: nothing after the producer, one
//                    vkCmdPipelineBarrier2 before the consumer (vkd3d-proton's choice).
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "barriers/barrier_model.h"
#include "barriers/barrier_planner.h"
#include "queues/queue_model.h"

namespace gpuoverlap::vk {

struct SyncScope {
  VkPipelineStageFlags2 stages = 0;
  VkAccessFlags2 access = 0;
};

// Contract: `state` may be a single state or a union of read states (GENERIC_READ); the
// result is the union of the scopes of its bits. `queue` decides which shader stages
// UNORDERED_ACCESS covers (a compute queue has only the compute stage).
SyncScope scope_for_state(D3D12_RESOURCE_STATES state, QueueType queue);

// The image layout a D3D12 state implies for a render target.
VkImageLayout layout_for_state(D3D12_RESOURCE_STATES state);

struct TranslatedTransition {
  SyncScope src;
  SyncScope dst;
  VkImageLayout old_layout = VK_IMAGE_LAYOUT_UNDEFINED;
  VkImageLayout new_layout = VK_IMAGE_LAYOUT_UNDEFINED;
};

TranslatedTransition translate(const LegacyTransition& transition, QueueType queue);

// Enhanced barriers: SYNC_* -> stages (ALL_SHADING and NON_PIXEL_SHADING follow the queue),
// ACCESS_* -> accesses, LAYOUT_* -> image layouts (queue-specific layouts as their base).
VkPipelineStageFlags2 stages_for_sync(D3D12_BARRIER_SYNC sync, QueueType queue);
VkAccessFlags2 access_for_barrier_access(D3D12_BARRIER_ACCESS access);
VkImageLayout layout_for_barrier_layout(D3D12_BARRIER_LAYOUT layout);

// One synchronization2 barrier without its handles.
struct BarrierDesc {
  enum class Target { memory, buffer, image };
  Target target = Target::memory;
  SyncScope src, dst;
  VkImageLayout old_layout = VK_IMAGE_LAYOUT_UNDEFINED;  // image only
  VkImageLayout new_layout = VK_IMAGE_LAYOUT_UNDEFINED;
  // image only: the mips and layers covered (aspect: color), from the D3D12 barrier's
  // subresources; every one by default.
  std::uint32_t base_mip = 0, mip_count = VK_REMAINING_MIP_LEVELS;
  std::uint32_t base_layer = 0, layer_count = VK_REMAINING_ARRAY_LAYERS;
};

// What one dependency records, by place. set_event/wait_event carry the same descriptions, one
// per subresource range of the split pair (Vulkan requires the two dependency infos to match);
// empty when the dependency records no event.
struct DependencyOps {
  std::vector<BarrierDesc> set_event_after_producer;
  std::vector<BarrierDesc> barriers_after_producer;
  std::vector<BarrierDesc> wait_event_before_consumer;
  std::vector<BarrierDesc> barriers_before_consumer;
};

// Translates on the dependency's barrier queue with its split policy; a legacy TRANSITION of one
// subresource becomes that mip and layer by the plan's texture extent.
DependencyOps translate(const DependencyPlan& plan);

// A draw's target transition (barriers/barrier_planner.h) on the draw's queue: an image
// barrier of the one subresource it names on a texture of `extent`. A DISCARD is its
// UNDEFINED old layout: Vulkan keeps no contents from UNDEFINED. An aliasing hand-over's
// ALIASING barrier is a full barrier (every stage, every write) that brings the activated
// image from UNDEFINED to its rest layout; its enhanced form is translated as any barrier.
BarrierDesc translate(const TargetTransition& transition, TextureExtent extent, QueueType queue);

}  // namespace gpuoverlap::vk
