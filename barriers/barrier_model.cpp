#include "barriers/barrier_model.h"

#include <string>

#include "barriers/d3d12_names.h"

namespace gpuoverlap {

std::string_view to_string(BarrierKind kind) { return name_of(kBarrierKindNames, kind); }

std::optional<BarrierKind> parse_barrier_kind(std::string_view text) {
  return value_of(kBarrierKindNames, text);
}

std::string_view to_string(SplitPolicy policy) { return name_of(kSplitPolicyNames, policy); }

std::optional<SplitPolicy> parse_split_policy(std::string_view text) {
  return value_of(kSplitPolicyNames, text);
}

std::string barrier_label(const BarrierRequest& request) {
  std::string label(to_string(request.kind));
  if (is_split(request.kind)) {
    label += '-';
    label += to_string(request.split_policy);
  }
  return label;
}

std::optional<D3D12_BARRIER_TYPE> parse_barrier_type(std::string_view text) {
  if (text == "global") return D3D12_BARRIER_TYPE_GLOBAL;
  if (text == "buffer") return D3D12_BARRIER_TYPE_BUFFER;
  if (text == "texture") return D3D12_BARRIER_TYPE_TEXTURE;
  return std::nullopt;
}

std::string_view to_string(D3D12_BARRIER_TYPE type) {
  switch (type) {
    case D3D12_BARRIER_TYPE_GLOBAL:
      return "global";
    case D3D12_BARRIER_TYPE_BUFFER:
      return "buffer";
    case D3D12_BARRIER_TYPE_TEXTURE:
      return "texture";
  }
  return "global";
}

namespace {

template <typename Enhanced>
std::string sync_access(const Enhanced& b) {
  return barrier_sync_name(b.SyncBefore) + "/" + barrier_access_name(b.AccessBefore) + " -> " +
         barrier_sync_name(b.SyncAfter) + "/" + barrier_access_name(b.AccessAfter);
}

}  // namespace

std::string describe(const D3D12Barrier& barrier) {
  if (const auto* legacy = std::get_if<D3D12_RESOURCE_BARRIER>(&barrier)) {
    if (legacy->Type == D3D12_RESOURCE_BARRIER_TYPE_UAV) return "UAV";
    if (legacy->Type == D3D12_RESOURCE_BARRIER_TYPE_ALIASING) return "ALIASING";
    std::string text = "TRANSITION";
    if (legacy->Flags == D3D12_RESOURCE_BARRIER_FLAG_BEGIN_ONLY) text += "(BEGIN_ONLY)";
    if (legacy->Flags == D3D12_RESOURCE_BARRIER_FLAG_END_ONLY) text += "(END_ONLY)";
    text += ' ';
    text += resource_states_name(legacy->Transition.StateBefore);
    text += " -> ";
    text += resource_states_name(legacy->Transition.StateAfter);
    if (legacy->Transition.Subresource != D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES)
      text += " subresource " + std::to_string(legacy->Transition.Subresource);
    return text;
  }
  const auto& enhanced = std::get<EnhancedBarrier>(barrier);
  if (const auto* g = std::get_if<D3D12_GLOBAL_BARRIER>(&enhanced))
    return "GLOBAL " + sync_access(*g);
  if (const auto* b = std::get_if<D3D12_BUFFER_BARRIER>(&enhanced))
    return "BUFFER " + sync_access(*b);
  const auto& t = std::get<D3D12_TEXTURE_BARRIER>(enhanced);
  std::string text = "TEXTURE " + sync_access(t) + " layout " +
                     barrier_layout_name(t.LayoutBefore) + " -> " +
                     barrier_layout_name(t.LayoutAfter);
  if (!covers_all(t.Subresources))
    text += " mips " + std::to_string(t.Subresources.IndexOrFirstMipLevel) + "+" +
            std::to_string(t.Subresources.NumMipLevels) + " slices " +
            std::to_string(t.Subresources.FirstArraySlice) + "+" +
            std::to_string(t.Subresources.NumArraySlices);
  if (t.Flags & D3D12_TEXTURE_BARRIER_FLAG_DISCARD) text += " DISCARD";
  return text;
}

D3D12_RESOURCE_BARRIER legacy_transition(D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after,
                                         D3D12_RESOURCE_BARRIER_FLAGS flags,
                                         std::uint32_t subresource) {
  D3D12_RESOURCE_BARRIER b{};
  b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
  b.Flags = flags;
  b.Transition.pResource = nullptr;
  b.Transition.Subresource = subresource;
  b.Transition.StateBefore = before;
  b.Transition.StateAfter = after;
  return b;
}

}  // namespace gpuoverlap
