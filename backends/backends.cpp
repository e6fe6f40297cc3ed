#include "backends/backends.h"

#if GPUOVERLAP_HAS_VULKAN
#include "backends/vulkan/barrier_explain.h"
#include "backends/vulkan/vulkan_api.h"
#endif

namespace gpuoverlap {

Result<std::unique_ptr<GpuApi>> open_gpu_api(const GpuApiOptions& options) {
#if GPUOVERLAP_HAS_VULKAN
  return vk::open_vulkan(options);
#else
  (void)options;
  return make_error(
      "this build has no GPU API: the Windows build's D3D12 backend is not written yet "
      "(issue 18); build on Linux for Vulkan");
#endif
}

std::vector<std::string> explain_recording(const DependencyPlan& dependency) {
#if GPUOVERLAP_HAS_VULKAN
  return vk::explain_dependency(dependency);
#else
  (void)dependency;
  return {};
#endif
}

}  // namespace gpuoverlap
