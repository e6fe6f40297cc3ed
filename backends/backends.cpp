#include "backends/backends.h"

#include "backends/vulkan/barrier_explain.h"
#include "backends/vulkan/vulkan_api.h"

namespace gpuoverlap {

Result<std::unique_ptr<GpuApi>> open_gpu_api(const GpuApiOptions& options) {
  return vk::open_vulkan(options);
}

std::vector<std::string> explain_recording(const DependencyPlan& dependency) {
  return vk::explain_dependency(dependency);
}

}  // namespace gpuoverlap
