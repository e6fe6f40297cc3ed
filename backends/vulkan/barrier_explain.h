// `validate --explain`'s Vulkan part: the commands a planned dependency becomes
// (barrier_translation.h), as text. Needs no instance or device.
#pragma once

#include <string>
#include <vector>

#include "barriers/barrier_planner.h"

namespace gpuoverlap::vk {

// One line per command, in recording order, e.g.
// "Vulkan after producer: vkCmdPipelineBarrier2, memory barrier: COMPUTE_SHADER / ...".
std::vector<std::string> explain_dependency(const DependencyPlan& dependency);
std::string explain_target_transition(const TargetTransition& transition, TextureExtent extent,
                                      QueueType queue);

}  // namespace gpuoverlap::vk
