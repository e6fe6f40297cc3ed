// D3D12 legacy resource states -> Vulkan synchronization2 scopes, the way vkd3d-proton maps
// them (DESIGN.md section 4). Vulkan *types* only: no Vulkan call is made here, so this is
// unit tested without a device.
#pragma once

#include <vulkan/vulkan_core.h>

#include "barriers/barrier_model.h"
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

// The image layout a D3D12 state implies for a render target; UNDEFINED for buffer-only states.
VkImageLayout layout_for_state(D3D12_RESOURCE_STATES state);

struct TranslatedTransition {
  SyncScope src;
  SyncScope dst;
  VkImageLayout old_layout = VK_IMAGE_LAYOUT_UNDEFINED;
  VkImageLayout new_layout = VK_IMAGE_LAYOUT_UNDEFINED;
};

TranslatedTransition translate(const LegacyTransition& transition, QueueType queue);

}  // namespace gpuoverlap::vk
