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

// Opens the build's GPU API (Vulkan on Linux, D3D12 on Windows). An Error says why it cannot
// start.
Result<std::unique_ptr<GpuApi>> open_gpu_api(const GpuApiOptions& options);

// `validate --explain`: the API commands a planned dependency becomes, one line each, in
// recording order. Needs no device.
std::vector<std::string> explain_recording(const DependencyPlan& dependency);
// The same for a draw's target transition (none on D3D12, which records it as it is).
std::vector<std::string> explain_recording(const TargetTransition& transition, TextureExtent extent,
                                           QueueType queue);

}  // namespace gpuoverlap
