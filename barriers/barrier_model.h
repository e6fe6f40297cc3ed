// Barriers as a scenario states them, in D3D12 terms (DirectX-Headers types). A dependency
// "consumer depends on producer" is separated by one barrier kind:
//   none           - nothing; the consumer may overlap its producer. It reads the producer's
//                    output only when the scenario says `reads_output = true` (a deliberate race);
//   legacy         - ResourceBarrier TRANSITION of the producer's output, right before the
//   consumer; split          - the same transition as BEGIN_ONLY right after the producer and
//   END_ONLY
//                    right before the consumer;
//   uav            - ResourceBarrier UAV (the consumer uses the buffer as UAV; no state change);
//   enhanced       - one enhanced barrier (global, buffer or texture: SyncBefore/After,
//                    AccessBefore/After, LayoutBefore/After), right before the consumer;
//   enhanced-split - the enhanced barrier as a SYNC_SPLIT pair: {SyncBefore, SyncAfter = SPLIT}
//                    after the producer, {SyncBefore = SPLIT, SyncAfter} before the consumer.
// A split pair is translated to Vulkan by a SplitPolicy (docs/barriers.md): `event`
// (vkCmdSetEvent2 / vkCmdWaitEvents2, the faithful form) or `collapsed` (what vkd3d-proton
// does: BEGIN dropped, one full barrier at END). The D3D12 barriers are the same either way.
//
// Resources: a compute workload writes a buffer (UNORDERED_ACCESS), a graphics workload a
// render-target texture (RENDER_TARGET). A consumer reads a buffer or texture as a shader
// resource (NON_PIXEL_SHADER_RESOURCE from compute, PIXEL_SHADER_RESOURCE from a pixel shader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/enum_names.h"
#include "queues/d3d12_types.h"
#include "queues/queue_model.h"
#include "workloads/workload.h"

namespace gpuoverlap {

enum class BarrierKind { none, legacy, split, uav, enhanced, enhanced_split };
enum class SplitPolicy { event, collapsed };
inline constexpr EnumNames<BarrierKind, 6> kBarrierKindNames{
    {{BarrierKind::none, "none"},
     {BarrierKind::legacy, "legacy"},
     {BarrierKind::split, "split"},
     {BarrierKind::uav, "uav"},
     {BarrierKind::enhanced, "enhanced"},
     {BarrierKind::enhanced_split, "enhanced-split"}}};
inline constexpr EnumNames<SplitPolicy, 2> kSplitPolicyNames{
    {{SplitPolicy::event, "event"}, {SplitPolicy::collapsed, "collapsed"}}};

std::string_view to_string(BarrierKind kind);
std::optional<BarrierKind> parse_barrier_kind(std::string_view text);
std::string_view to_string(SplitPolicy policy);
std::optional<SplitPolicy> parse_split_policy(std::string_view text);
inline bool is_split(BarrierKind kind) {
  return kind == BarrierKind::split || kind == BarrierKind::enhanced_split;
}
inline bool is_enhanced(BarrierKind kind) {
  return kind == BarrierKind::enhanced || kind == BarrierKind::enhanced_split;
}

// The mips and array slices of a texture a barrier covers, as a scenario asks for them: a
// dimension left empty is all of it. gpuoverlap's formats have one plane, so planes are not
// part of it.
struct SubresourceRequest {
  struct Span {
    std::uint32_t first = 0, count = 1;
    bool operator==(const Span&) const = default;
  };
  std::optional<Span> mips, slices;
  bool operator==(const SubresourceRequest&) const = default;
};

// No texture has more mips or array slices than this (D3D12's 2048 slices; 15 mips of 16384).
inline constexpr std::int64_t kMaxSubresourceSpan = 2048;

// The mips and slices a texture has. A render target (a graphics workload's output) has one
// of each.
struct TextureExtent {
  std::uint32_t mips = 1, slices = 1;
};
inline constexpr TextureExtent kRenderTargetExtent{1, 1};

// A resolved range: every count is at least one and the range lies inside its texture.
struct SubresourceRange {
  std::uint32_t first_mip = 0, mip_count = 1, first_slice = 0, slice_count = 1;
  bool operator==(const SubresourceRange&) const = default;
  // Written without first + count, which could wrap for an unvalidated range.
  constexpr bool contains(std::uint32_t mip, std::uint32_t slice) const {
    return mip >= first_mip && mip - first_mip < mip_count && slice >= first_slice &&
           slice - first_slice < slice_count;
  }
};

// D3D12CalcSubresource of a one-plane texture: the index a legacy TRANSITION names.
inline constexpr std::uint32_t subresource_index(std::uint32_t mip, std::uint32_t slice,
                                                 std::uint32_t mips) {
  return mip + slice * mips;
}

// What a dependency asks for. Every optional left empty is derived by the planner from the
// producer's and consumer's kinds and from the state the resource is in at that point.
struct BarrierRequest {
  BarrierKind kind = BarrierKind::legacy;
  SplitPolicy split_policy = SplitPolicy::event;
  std::optional<bool> reads_output;  // default: kind != none
  // legacy, split
  std::optional<D3D12_RESOURCE_STATES> state_before, state_after;
  // enhanced, enhanced-split
  std::optional<D3D12_BARRIER_TYPE> type;  // default: BUFFER for a buffer, TEXTURE for a texture
  std::optional<D3D12_BARRIER_SYNC> sync_before, sync_after;
  std::optional<D3D12_BARRIER_ACCESS> access_before, access_after;
  std::optional<D3D12_BARRIER_LAYOUT> layout_before, layout_after;
  // legacy, split, enhanced, enhanced-split on a texture: the subresources the barrier covers
  // (legacy: one TRANSITION per subresource, as D3D12 requires); empty: all of them.
  std::optional<SubresourceRequest> subresources;
};

// The kind as results name it: "legacy", "split-event", "enhanced-split-collapsed", ...
std::string barrier_label(const BarrierRequest& request);

std::optional<D3D12_BARRIER_TYPE> parse_barrier_type(std::string_view text);
std::string_view to_string(D3D12_BARRIER_TYPE type);

// One enhanced barrier: the D3D12 struct of its type (resource pointers stay null; the
// resource is the dependency's producer output).
using EnhancedBarrier =
    std::variant<D3D12_GLOBAL_BARRIER, D3D12_BUFFER_BARRIER, D3D12_TEXTURE_BARRIER>;

// One D3D12 barrier call: a legacy D3D12_RESOURCE_BARRIER (TRANSITION or UAV, with its
// BEGIN_ONLY/END_ONLY flags) or an enhanced barrier.
using D3D12Barrier = std::variant<D3D12_RESOURCE_BARRIER, EnhancedBarrier>;

std::string describe(const D3D12Barrier& barrier);  // e.g. "TRANSITION unordered_access -> ..."

// A TRANSITION of `subresource` (default: every one), its resource left null (the dependency's
// producer output is filled in by the backend that records it).
D3D12_RESOURCE_BARRIER legacy_transition(
    D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after,
    D3D12_RESOURCE_BARRIER_FLAGS flags = D3D12_RESOURCE_BARRIER_FLAG_NONE,
    std::uint32_t subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES);

// Every subresource of a texture, as an enhanced TEXTURE barrier names it.
inline constexpr D3D12_BARRIER_SUBRESOURCE_RANGE kAllSubresources{0xffffffffu, 0, 0, 0, 0, 0};
inline bool covers_all(const D3D12_BARRIER_SUBRESOURCE_RANGE& range) {
  return range.IndexOrFirstMipLevel == 0xffffffffu && range.NumMipLevels == 0;
}

struct LegacyTransition {
  D3D12_RESOURCE_STATES before;
  D3D12_RESOURCE_STATES after;
};

enum class ResourceKind { buffer, texture };
inline ResourceKind output_of(WorkloadKind kind) {
  return kind == WorkloadKind::graphics ? ResourceKind::texture : ResourceKind::buffer;
}

}  // namespace gpuoverlap
