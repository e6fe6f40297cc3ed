// Vulkan as a GpuApi (engine/gpu_api.h): the instance, its devices as facts, an executor per
// device. The only way app/ reaches the Vulkan backend (through backends/backends.h).
#pragma once

#include <memory>

#include "core/result.h"
#include "engine/gpu_api.h"

namespace gpuoverlap::vk {

// Contract: everything this returns (executors included) is destroyed before the API object.
Result<std::unique_ptr<GpuApi>> open_vulkan(const GpuApiOptions& options);

}  // namespace gpuoverlap::vk
