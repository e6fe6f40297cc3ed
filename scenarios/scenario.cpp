#include "scenarios/scenario.h"

namespace gpuoverlap {

std::uint64_t output_bytes(const Scenario& scenario, std::size_t w) {
  const WorkloadSpec& spec = scenario.workloads[w];
  if (spec.target)
    return subresource_bytes(scenario.textures[spec.target->texture], spec.target->mip);
  switch (spec.kind) {
    case WorkloadKind::copy:
      return spec.bytes;
    case WorkloadKind::graphics:  // its own R32F render target
      return std::uint64_t{kRenderTargetWidth} * spec.groups * 4;
    case WorkloadKind::compute:
      break;
  }
  return std::uint64_t{workload_shape(scenario, w).threads} * 4;
}

WorkloadShape workload_shape(const Scenario& scenario, std::size_t w) {
  const WorkloadSpec& spec = scenario.workloads[w];
  if (!spec.target) return groups_shape(spec.groups);
  const TextureSpec& texture = scenario.textures[spec.target->texture];
  const std::uint32_t width = mip_size(texture.width, spec.target->mip);
  return {width * mip_size(texture.height, spec.target->mip), width};
}

std::vector<std::size_t> Scenario::workloads_on(std::size_t queue) const {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < workloads.size(); ++i)
    if (workloads[i].queue == queue) indices.push_back(i);
  return indices;
}

}  // namespace gpuoverlap
