#include "backends/backends.h"

#include <algorithm>

#if GPUOVERLAP_HAS_VULKAN
#include "backends/vulkan/barrier_explain.h"
#include "backends/vulkan/vulkan_api.h"
#endif
#if GPUOVERLAP_HAS_D3D12
#include "backends/d3d12/d3d12_api.h"
#endif

namespace gpuoverlap {

std::vector<GpuApiKind> build_apis() {
  std::vector<GpuApiKind> apis;
#if GPUOVERLAP_HAS_D3D12
  apis.push_back(GpuApiKind::d3d12);
#endif
#if GPUOVERLAP_HAS_VULKAN
  apis.push_back(GpuApiKind::vulkan);
#endif
  return apis;
}

GpuApiKind default_api() {
#if GPUOVERLAP_HAS_D3D12
  return GpuApiKind::d3d12;
#else
  return GpuApiKind::vulkan;
#endif
}

namespace {

Result<std::unique_ptr<GpuApi>> open_api_of(GpuApiKind api, const GpuApiOptions& options) {
  switch (api) {
    case GpuApiKind::vulkan:
#if GPUOVERLAP_HAS_VULKAN
      return vk::open_vulkan(options);
#else
      break;
#endif
    case GpuApiKind::d3d12:
#if GPUOVERLAP_HAS_D3D12
      return d3d12::open_d3d12(options);
#else
      break;
#endif
  }
  std::string has;
  for (GpuApiKind a : build_apis())
    has += std::string(has.empty() ? "" : ", ") + api_option_name(a);
  return make_error(std::string("--api ") + api_option_name(api) + ": this build has no " +
                    (api == GpuApiKind::d3d12 ? "D3D12 (the Windows build has it)" : "Vulkan") +
                    "; it has " + (has.empty() ? "no GPU API" : has));
}

}  // namespace

// Whatever keeps an API this build has from starting (no loader or driver, a missing
// validation layer, an option this API lacks) is the environment's.
Result<std::unique_ptr<GpuApi>> open_gpu_api(const GpuApiOptions& options) {
  const GpuApiKind api = options.api.value_or(default_api());
  const std::vector<GpuApiKind> apis = build_apis();
  const bool built = std::find(apis.begin(), apis.end(), api) != apis.end();
  auto opened = open_api_of(api, options);
  if (!opened && built) return opened.error().with_category(ErrorCategory::environment);
  return opened;
}

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
