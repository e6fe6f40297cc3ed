#include "barriers/barrier_model.h"

namespace gpuoverlap {

std::string_view to_string(BarrierKind kind) {
  switch (kind) {
    case BarrierKind::none:
      return "none";
    case BarrierKind::legacy:
      return "legacy";
    case BarrierKind::split:
      return "split";
  }
  return "none";
}

std::optional<BarrierKind> parse_barrier_kind(std::string_view text) {
  if (text == "none") return BarrierKind::none;
  if (text == "legacy") return BarrierKind::legacy;
  if (text == "split") return BarrierKind::split;
  return std::nullopt;
}

LegacyTransition transition_between(WorkloadKind producer, WorkloadKind consumer) {
  const D3D12_RESOURCE_STATES before = producer == WorkloadKind::compute
                                           ? D3D12_RESOURCE_STATE_UNORDERED_ACCESS
                                           : D3D12_RESOURCE_STATE_RENDER_TARGET;
  const D3D12_RESOURCE_STATES after = consumer == WorkloadKind::compute
                                          ? D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE
                                          : D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE;
  return {before, after};
}

}  // namespace gpuoverlap
