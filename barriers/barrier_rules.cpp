#include "barriers/barrier_rules.h"

#include <tuple>

#include "barriers/d3d12_names.h"

namespace gpuoverlap {

namespace {

using Severity = BarrierFinding::Severity;

unsigned bits(D3D12_RESOURCE_STATES s) { return static_cast<unsigned>(s); }
unsigned bits(D3D12_BARRIER_SYNC s) { return static_cast<unsigned>(s); }
unsigned bits(D3D12_BARRIER_ACCESS a) { return static_cast<unsigned>(a); }

// An enum's bits, for constant masks: mingw-w64's flag operators on D3D12 enums are not
// constexpr (MSVC's are).
template <typename Enum>
constexpr unsigned u(Enum e) {
  return static_cast<unsigned>(e);
}

constexpr unsigned kWriteStates =
    u(D3D12_RESOURCE_STATE_UNORDERED_ACCESS) | u(D3D12_RESOURCE_STATE_RENDER_TARGET) |
    u(D3D12_RESOURCE_STATE_COPY_DEST) | u(D3D12_RESOURCE_STATE_DEPTH_WRITE) |
    u(D3D12_RESOURCE_STATE_STREAM_OUT) | u(D3D12_RESOURCE_STATE_RESOLVE_DEST);

// The states a compute command list may transition from or to.
constexpr unsigned kComputeQueueStates =
    u(D3D12_RESOURCE_STATE_VERTEX_AND_CONSTANT_BUFFER) | u(D3D12_RESOURCE_STATE_UNORDERED_ACCESS) |
    u(D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE) | u(D3D12_RESOURCE_STATE_INDIRECT_ARGUMENT) |
    u(D3D12_RESOURCE_STATE_COPY_DEST) | u(D3D12_RESOURCE_STATE_COPY_SOURCE);

constexpr unsigned kGraphicsSyncs =
    u(D3D12_BARRIER_SYNC_DRAW) | u(D3D12_BARRIER_SYNC_INPUT_ASSEMBLER) |
    u(D3D12_BARRIER_SYNC_VERTEX_SHADING) | u(D3D12_BARRIER_SYNC_PIXEL_SHADING) |
    u(D3D12_BARRIER_SYNC_DEPTH_STENCIL) | u(D3D12_BARRIER_SYNC_RENDER_TARGET);
constexpr unsigned kShadingSyncs =
    u(D3D12_BARRIER_SYNC_ALL) | u(D3D12_BARRIER_SYNC_DRAW) | u(D3D12_BARRIER_SYNC_VERTEX_SHADING) |
    u(D3D12_BARRIER_SYNC_PIXEL_SHADING) | u(D3D12_BARRIER_SYNC_COMPUTE_SHADING) |
    u(D3D12_BARRIER_SYNC_ALL_SHADING) | u(D3D12_BARRIER_SYNC_NON_PIXEL_SHADING);
constexpr unsigned kGraphicsAccesses =
    u(D3D12_BARRIER_ACCESS_RENDER_TARGET) | u(D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE) |
    u(D3D12_BARRIER_ACCESS_DEPTH_STENCIL_READ) | u(D3D12_BARRIER_ACCESS_VERTEX_BUFFER) |
    u(D3D12_BARRIER_ACCESS_INDEX_BUFFER);

BarrierFinding error(std::string rule, std::string message) {
  return {Severity::error, std::move(rule), std::move(message)};
}

bool is_direct_queue_layout(D3D12_BARRIER_LAYOUT l) {
  return l >= D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COMMON &&
         l <= D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COPY_DEST;
}
bool is_compute_queue_layout(D3D12_BARRIER_LAYOUT l) {
  return l >= D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COMMON &&
         l <= D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COPY_DEST;
}

// The queue-specific layouts behave as their base layout for access checks.
D3D12_BARRIER_LAYOUT base_layout(D3D12_BARRIER_LAYOUT l) {
  if (is_direct_queue_layout(l))
    return static_cast<D3D12_BARRIER_LAYOUT>(D3D12_BARRIER_LAYOUT_COMMON +
                                             (l - D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COMMON));
  if (is_compute_queue_layout(l))
    return static_cast<D3D12_BARRIER_LAYOUT>(D3D12_BARRIER_LAYOUT_COMMON +
                                             (l - D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COMMON));
  return l;
}

// The accesses a layout allows (COMMON access, "whatever the layout allows", is always fine).
unsigned accesses_allowed_by(D3D12_BARRIER_LAYOUT layout) {
  switch (base_layout(layout)) {
    case D3D12_BARRIER_LAYOUT_UNDEFINED:
      return 0;
    case D3D12_BARRIER_LAYOUT_COMMON:
      return D3D12_BARRIER_ACCESS_SHADER_RESOURCE | D3D12_BARRIER_ACCESS_COPY_SOURCE |
             D3D12_BARRIER_ACCESS_COPY_DEST | D3D12_BARRIER_ACCESS_UNORDERED_ACCESS;
    case D3D12_BARRIER_LAYOUT_GENERIC_READ:
      return D3D12_BARRIER_ACCESS_SHADER_RESOURCE | D3D12_BARRIER_ACCESS_COPY_SOURCE |
             D3D12_BARRIER_ACCESS_CONSTANT_BUFFER | D3D12_BARRIER_ACCESS_VERTEX_BUFFER |
             D3D12_BARRIER_ACCESS_INDEX_BUFFER | D3D12_BARRIER_ACCESS_INDIRECT_ARGUMENT;
    case D3D12_BARRIER_LAYOUT_RENDER_TARGET:
      return D3D12_BARRIER_ACCESS_RENDER_TARGET;
    case D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE:
      return D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE | D3D12_BARRIER_ACCESS_DEPTH_STENCIL_READ;
    case D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ:  // a read-only depth test, or a shader's read
      return D3D12_BARRIER_ACCESS_DEPTH_STENCIL_READ | D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
    case D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS:
      return D3D12_BARRIER_ACCESS_UNORDERED_ACCESS;
    case D3D12_BARRIER_LAYOUT_SHADER_RESOURCE:
      return D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
    case D3D12_BARRIER_LAYOUT_COPY_SOURCE:
      return D3D12_BARRIER_ACCESS_COPY_SOURCE;
    case D3D12_BARRIER_LAYOUT_COPY_DEST:
      return D3D12_BARRIER_ACCESS_COPY_DEST;
    default:
      return 0;
  }
}

// The sync scopes that can perform each access (ALL can perform everything).
void check_sync_access(D3D12_BARRIER_SYNC sync, D3D12_BARRIER_ACCESS access, const char* side,
                       std::vector<BarrierFinding>& out) {
  const std::string where = std::string(side);
  if (access == D3D12_BARRIER_ACCESS_NO_ACCESS) return;
  if (sync == D3D12_BARRIER_SYNC_NONE) {
    out.push_back(error("sync-access", "Sync" + where + " NONE needs Access" + where +
                                           " NO_ACCESS, not " + barrier_access_name(access)));
    return;
  }
  if (sync == D3D12_BARRIER_SYNC_SPLIT || access == D3D12_BARRIER_ACCESS_COMMON) return;
  struct Need {
    unsigned access;
    unsigned syncs;
    const char* needs;
  };
  static const Need needs[] = {
      {D3D12_BARRIER_ACCESS_RENDER_TARGET,
       D3D12_BARRIER_SYNC_ALL | D3D12_BARRIER_SYNC_DRAW | D3D12_BARRIER_SYNC_RENDER_TARGET,
       "RENDER_TARGET, DRAW or ALL"},
      {D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE | D3D12_BARRIER_ACCESS_DEPTH_STENCIL_READ,
       D3D12_BARRIER_SYNC_ALL | D3D12_BARRIER_SYNC_DRAW | D3D12_BARRIER_SYNC_DEPTH_STENCIL,
       "DEPTH_STENCIL, DRAW or ALL"},
      {D3D12_BARRIER_ACCESS_UNORDERED_ACCESS, kShadingSyncs, "a shading scope"},
      {D3D12_BARRIER_ACCESS_SHADER_RESOURCE, kShadingSyncs, "a shading scope"},
      {D3D12_BARRIER_ACCESS_CONSTANT_BUFFER, kShadingSyncs, "a shading scope"},
      {D3D12_BARRIER_ACCESS_COPY_DEST, D3D12_BARRIER_SYNC_ALL | D3D12_BARRIER_SYNC_COPY,
       "COPY or ALL"},
      {D3D12_BARRIER_ACCESS_COPY_SOURCE, D3D12_BARRIER_SYNC_ALL | D3D12_BARRIER_SYNC_COPY,
       "COPY or ALL"},
      {D3D12_BARRIER_ACCESS_VERTEX_BUFFER,
       D3D12_BARRIER_SYNC_ALL | D3D12_BARRIER_SYNC_DRAW | D3D12_BARRIER_SYNC_INPUT_ASSEMBLER |
           D3D12_BARRIER_SYNC_VERTEX_SHADING,
       "INPUT_ASSEMBLER, VERTEX_SHADING, DRAW or ALL"},
      {D3D12_BARRIER_ACCESS_INDEX_BUFFER,
       D3D12_BARRIER_SYNC_ALL | D3D12_BARRIER_SYNC_DRAW | D3D12_BARRIER_SYNC_INPUT_ASSEMBLER,
       "INPUT_ASSEMBLER, DRAW or ALL"},
      {D3D12_BARRIER_ACCESS_INDIRECT_ARGUMENT,
       D3D12_BARRIER_SYNC_ALL | D3D12_BARRIER_SYNC_EXECUTE_INDIRECT, "EXECUTE_INDIRECT or ALL"},
  };
  for (const Need& n : needs)
    if ((bits(access) & n.access) && !(bits(sync) & n.syncs))
      out.push_back(error("sync-access",
                          "Access" + where + " " +
                              barrier_access_name(static_cast<D3D12_BARRIER_ACCESS>(n.access)) +
                              " needs Sync" + where + " " + n.needs + ", not " +
                              barrier_sync_name(sync)));
}

}  // namespace

bool sync_covers(D3D12_BARRIER_SYNC sync, D3D12_BARRIER_SYNC stage) {
  unsigned covering = bits(stage) | D3D12_BARRIER_SYNC_ALL;
  switch (stage) {
    case D3D12_BARRIER_SYNC_COMPUTE_SHADING:
      covering |= D3D12_BARRIER_SYNC_ALL_SHADING | D3D12_BARRIER_SYNC_NON_PIXEL_SHADING;
      break;
    case D3D12_BARRIER_SYNC_VERTEX_SHADING:
      covering |= D3D12_BARRIER_SYNC_ALL_SHADING | D3D12_BARRIER_SYNC_NON_PIXEL_SHADING |
                  D3D12_BARRIER_SYNC_DRAW;
      break;
    case D3D12_BARRIER_SYNC_PIXEL_SHADING:
      covering |= D3D12_BARRIER_SYNC_ALL_SHADING | D3D12_BARRIER_SYNC_DRAW;
      break;
    case D3D12_BARRIER_SYNC_RENDER_TARGET:
    case D3D12_BARRIER_SYNC_INPUT_ASSEMBLER:
    case D3D12_BARRIER_SYNC_DEPTH_STENCIL:
      covering |= D3D12_BARRIER_SYNC_DRAW;
      break;
    default:
      break;
  }
  return (bits(sync) & covering) != 0;
}

D3D12_BARRIER_LAYOUT layout_for_legacy_state(D3D12_RESOURCE_STATES state) {
  if (state == D3D12_RESOURCE_STATE_COMMON) return D3D12_BARRIER_LAYOUT_COMMON;
  if (state == D3D12_RESOURCE_STATE_RENDER_TARGET) return D3D12_BARRIER_LAYOUT_RENDER_TARGET;
  if (state == D3D12_RESOURCE_STATE_DEPTH_WRITE) return D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE;
  // A depth buffer read by the depth test and by shaders.
  if ((bits(state) & D3D12_RESOURCE_STATE_DEPTH_READ) &&
      (bits(state) &
       ~unsigned{D3D12_RESOURCE_STATE_DEPTH_READ | D3D12_RESOURCE_STATE_ALL_SHADER_RESOURCE}) == 0)
    return D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ;
  if (state == D3D12_RESOURCE_STATE_UNORDERED_ACCESS) return D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS;
  if (state == D3D12_RESOURCE_STATE_COPY_DEST) return D3D12_BARRIER_LAYOUT_COPY_DEST;
  if (state == D3D12_RESOURCE_STATE_COPY_SOURCE) return D3D12_BARRIER_LAYOUT_COPY_SOURCE;
  if ((bits(state) & ~unsigned{D3D12_RESOURCE_STATE_ALL_SHADER_RESOURCE}) == 0)
    return D3D12_BARRIER_LAYOUT_SHADER_RESOURCE;
  return D3D12_BARRIER_LAYOUT_GENERIC_READ;
}

bool state_usable_on(QueueType queue, D3D12_RESOURCE_STATES state) {
  return queue != QueueType::compute || (bits(state) & ~kComputeQueueStates) == 0;
}

bool layout_usable_on(QueueType queue, D3D12_BARRIER_LAYOUT layout) {
  if (queue == QueueType::compute)
    return !is_direct_queue_layout(layout) && layout != D3D12_BARRIER_LAYOUT_RENDER_TARGET &&
           layout != D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE &&
           layout != D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ;
  return !is_compute_queue_layout(layout);
}

std::vector<BarrierFinding> check_legacy_transition(D3D12_RESOURCE_STATES before,
                                                    D3D12_RESOURCE_STATES after, QueueType queue,
                                                    ResourceKind resource,
                                                    bool texture_unordered_access) {
  std::vector<BarrierFinding> out;
  for (auto [state, side] : {std::pair{before, "StateBefore"}, std::pair{after, "StateAfter"}}) {
    const unsigned s = bits(state);
    if ((s & kWriteStates) && (s & ~kWriteStates || __builtin_popcount(s & kWriteStates) > 1))
      out.push_back(error("legacy-write-combined",
                          std::string(side) + " " + resource_states_name(state) +
                              " combines a write state with other states (write states are "
                              "exclusive)"));
    if (!state_usable_on(queue, state))
      out.push_back(
          error("queue-state",
                std::string(side) + " " + resource_states_name(state) +
                    " is not a state compute command lists can use (they may use common, "
                    "vertex_and_constant_buffer, unordered_access, non_pixel_shader_resource, "
                    "indirect_argument, copy_dest, copy_source)"));
    if (resource == ResourceKind::buffer && (s & D3D12_RESOURCE_STATE_RENDER_TARGET))
      out.push_back(error("resource-state", std::string(side) +
                                                " render_target on a buffer (only textures "
                                                "are render targets)"));
    if (resource == ResourceKind::buffer &&
        (s & (D3D12_RESOURCE_STATE_DEPTH_WRITE | D3D12_RESOURCE_STATE_DEPTH_READ)))
      out.push_back(error("resource-state", std::string(side) + " " + resource_states_name(state) +
                                                " on a buffer (only textures are depth "
                                                "buffers)"));
    if (resource == ResourceKind::texture && !texture_unordered_access &&
        (s & D3D12_RESOURCE_STATE_UNORDERED_ACCESS))
      out.push_back(
          error("resource-state", std::string(side) +
                                      " unordered_access on a texture no dispatch writes, which "
                                      "gpuoverlap creates without ALLOW_UNORDERED_ACCESS"));
  }
  if (before == after)
    out.push_back(error("legacy-same-state", "StateBefore and StateAfter are both " +
                                                 resource_states_name(before) +
                                                 "; a transition must change the state"));
  return out;
}

std::vector<BarrierFinding> check_enhanced_barrier(
    D3D12_BARRIER_TYPE type, D3D12_BARRIER_SYNC sync_before, D3D12_BARRIER_SYNC sync_after,
    D3D12_BARRIER_ACCESS access_before, D3D12_BARRIER_ACCESS access_after,
    D3D12_BARRIER_LAYOUT layout_before, D3D12_BARRIER_LAYOUT layout_after, QueueType queue,
    ResourceKind resource, bool texture_unordered_access) {
  std::vector<BarrierFinding> out;
  if (type == D3D12_BARRIER_TYPE_BUFFER && resource == ResourceKind::texture)
    out.push_back(error("barrier-type-resource",
                        "a BUFFER barrier on a texture (the producer writes a render target)"));
  if (type == D3D12_BARRIER_TYPE_TEXTURE && resource == ResourceKind::buffer)
    out.push_back(
        error("barrier-type-resource", "a TEXTURE barrier on a buffer (the producer dispatches)"));
  const bool layouts_given = layout_before != D3D12_BARRIER_LAYOUT_UNDEFINED ||
                             layout_after != D3D12_BARRIER_LAYOUT_UNDEFINED;
  if (type == D3D12_BARRIER_TYPE_GLOBAL && layouts_given)
    out.push_back(error("global-barrier-layout",
                        "a GLOBAL barrier cannot change a layout (LayoutBefore " +
                            barrier_layout_name(layout_before) + ", LayoutAfter " +
                            barrier_layout_name(layout_after) + "); use a TEXTURE barrier"));
  if (type == D3D12_BARRIER_TYPE_BUFFER && layouts_given)
    out.push_back(error("buffer-barrier-layout",
                        "a BUFFER barrier has no layout (buffers have "
                        "none); remove layout_before/layout_after"));
  if (type == D3D12_BARRIER_TYPE_TEXTURE && resource == ResourceKind::texture &&
      !texture_unordered_access && layout_after == D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS)
    out.push_back(error("resource-state",
                        "LayoutAfter unordered_access on a texture no dispatch writes, which "
                        "gpuoverlap creates without ALLOW_UNORDERED_ACCESS"));
  if (type == D3D12_BARRIER_TYPE_TEXTURE) {
    for (auto [layout, side] :
         {std::pair{layout_before, "LayoutBefore"}, std::pair{layout_after, "LayoutAfter"}}) {
      if (!layout_usable_on(queue, layout))
        out.push_back(
            error("queue-layout",
                  std::string(side) + " " + barrier_layout_name(layout) + " cannot be used on a " +
                      std::string(queue == QueueType::compute ? "compute" : "direct") + " queue"));
    }
    for (auto [layout, access, side] : {std::tuple{layout_before, access_before, "Before"},
                                        std::tuple{layout_after, access_after, "After"}}) {
      if (access == D3D12_BARRIER_ACCESS_NO_ACCESS || access == D3D12_BARRIER_ACCESS_COMMON)
        continue;
      if (bits(access) & ~accesses_allowed_by(layout))
        out.push_back(error("layout-access", std::string("Access") + side + " " +
                                                 barrier_access_name(access) +
                                                 " is not allowed in Layout" + side + " " +
                                                 barrier_layout_name(layout)));
    }
  }
  if (queue == QueueType::compute) {
    for (auto [sync, side] :
         {std::pair{sync_before, "SyncBefore"}, std::pair{sync_after, "SyncAfter"}})
      if (bits(sync) & kGraphicsSyncs)
        out.push_back(error("queue-sync", std::string(side) + " " + barrier_sync_name(sync) +
                                              " names graphics work, which a compute queue "
                                              "does not run"));
    for (auto [access, side] :
         {std::pair{access_before, "AccessBefore"}, std::pair{access_after, "AccessAfter"}})
      if (access != D3D12_BARRIER_ACCESS_NO_ACCESS && (bits(access) & kGraphicsAccesses))
        out.push_back(error("queue-access", std::string(side) + " " + barrier_access_name(access) +
                                                " cannot be used on a compute queue"));
  }
  for (auto [access, side] :
       {std::pair{access_before, "AccessBefore"}, std::pair{access_after, "AccessAfter"}})
    if ((bits(access) & D3D12_BARRIER_ACCESS_NO_ACCESS) && access != D3D12_BARRIER_ACCESS_NO_ACCESS)
      out.push_back(error("no-access-combined", std::string(side) + " " +
                                                    barrier_access_name(access) +
                                                    " combines NO_ACCESS with other accesses"));
  for (auto [sync, side] :
       {std::pair{sync_before, "SyncBefore"}, std::pair{sync_after, "SyncAfter"}})
    if ((bits(sync) & D3D12_BARRIER_SYNC_SPLIT) && sync != D3D12_BARRIER_SYNC_SPLIT)
      out.push_back(error("split-combined", std::string(side) + " " + barrier_sync_name(sync) +
                                                " combines SPLIT with other scopes"));
  check_sync_access(sync_before, access_before, "Before", out);
  check_sync_access(sync_after, access_after, "After", out);
  if (access_before == D3D12_BARRIER_ACCESS_COMMON)
    out.push_back({Severity::warning, "access-before-common",
                   "AccessBefore COMMON stands for every write access and may flush every "
                   "cache; name the accesses that happened instead"});
  return out;
}

}  // namespace gpuoverlap
