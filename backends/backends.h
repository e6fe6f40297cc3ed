// The GPU APIs this build has, and the one entry point app/ uses to reach them: open an API,
// and explain how it records a dependency. Only here and below does a GPU API appear.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "barriers/barrier_planner.h"
#include "core/result.h"
#include "engine/gpu_api.h"

namespace gpuoverlap {

// The APIs this build has: Vulkan on Linux; D3D12 and Vulkan on Windows.
std::vector<GpuApiKind> build_apis();
// The API a command opens unless `--api` names one: D3D12 where the build has it, else Vulkan.
GpuApiKind default_api();

// Opens options.api (default_api() when empty). An Error says why it cannot start: an API this
// build lacks (input), or whatever keeps it from starting (no loader or driver, a missing
// validation layer: the environment).
Result<std::unique_ptr<GpuApi>> open_gpu_api(const GpuApiOptions& options);

// `validate --explain`: the Vulkan commands a planned dependency becomes, one line each, in
// recording order, where the build has Vulkan (D3D12 records the plan's barriers as they are).
// Needs no device.
std::vector<std::string> explain_recording(const DependencyPlan& dependency);
// The same for a draw's target transition.
std::vector<std::string> explain_recording(const TargetTransition& transition, TextureExtent extent,
                                           QueueType queue);

}  // namespace gpuoverlap
