#include "backends/backends.h"

#if GPUOVERLAP_HAS_VULKAN
#include "backends/vulkan/barrier_explain.h"
#include "backends/vulkan/vulkan_api.h"
#endif
#if GPUOVERLAP_HAS_D3D12
#include "backends/d3d12/d3d12_api.h"
#endif

namespace gpuoverlap {

namespace {

Result<std::unique_ptr<GpuApi>> open_build_api(const GpuApiOptions& options) {
#if GPUOVERLAP_HAS_VULKAN
  return vk::open_vulkan(options);
#elif GPUOVERLAP_HAS_D3D12
  return d3d12::open_d3d12(options);
#else
  (void)options;
  return make_error("this build has no GPU API");
#endif
}

}  // namespace

// One API per build: Vulkan on Linux, D3D12 on Windows. Whatever keeps it from starting (no
// loader or driver, a missing validation layer, an option this API lacks) is the
// environment's.
Result<std::unique_ptr<GpuApi>> open_gpu_api(const GpuApiOptions& options) {
  auto api = open_build_api(options);
  if (!api) return api.error().with_category(ErrorCategory::environment);
  return api;
}

// D3D12 records the D3D12 barriers the plan names, as they are: nothing to add.
std::vector<std::string> explain_recording(const DependencyPlan& dependency) {
#if GPUOVERLAP_HAS_VULKAN
  return vk::explain_dependency(dependency);
#else
  (void)dependency;
  return {};
#endif
}

std::vector<std::string> explain_recording(const TargetTransition& transition, TextureExtent extent,
                                           QueueType queue) {
#if GPUOVERLAP_HAS_VULKAN
  return {vk::explain_target_transition(transition, extent, queue)};
#else
  (void)transition, (void)extent, (void)queue;
  return {};
#endif
}

}  // namespace gpuoverlap
