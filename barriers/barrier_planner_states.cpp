// Where a producer's output stands after its writer, how a consumer reads it, and one
// enhanced barrier from its fields: the states, layouts, syncs and accesses the planner tracks.
#include "barriers/barrier_planner_internal.h"

namespace gpuoverlap::barrier_planning {

// Where a workload's output stands right after it wrote it: a buffer or a declared texture's
// subresource in unordered access (a dispatch), a render target or a depth buffer (a draw),
// or a buffer or a texture's subresource as a copy's destination.
TrackedResource written_by(WorkloadKind writer, ResourceKind resource, bool depth) {
  const D3D12_BARRIER_LAYOUT texture_layout = [&] {
    if (resource == ResourceKind::buffer) return D3D12_BARRIER_LAYOUT_UNDEFINED;
    if (writer == WorkloadKind::graphics)
      return depth ? D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE : D3D12_BARRIER_LAYOUT_RENDER_TARGET;
    return writer == WorkloadKind::copy ? D3D12_BARRIER_LAYOUT_COPY_DEST
                                        : D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS;
  }();
  switch (writer) {
    case WorkloadKind::graphics:
      if (depth)
        return {resource,
                D3D12_RESOURCE_STATE_DEPTH_WRITE,
                texture_layout,
                D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE,
                D3D12_BARRIER_SYNC_DEPTH_STENCIL,
                true};
      return {resource,
              D3D12_RESOURCE_STATE_RENDER_TARGET,
              texture_layout,
              D3D12_BARRIER_ACCESS_RENDER_TARGET,
              D3D12_BARRIER_SYNC_RENDER_TARGET,
              true};
    case WorkloadKind::copy:
      return {resource,
              D3D12_RESOURCE_STATE_COPY_DEST,
              texture_layout,
              D3D12_BARRIER_ACCESS_COPY_DEST,
              D3D12_BARRIER_SYNC_COPY,
              true};
    case WorkloadKind::compute:
      break;
  }
  return {resource,
          D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
          texture_layout,
          D3D12_BARRIER_ACCESS_UNORDERED_ACCESS,
          D3D12_BARRIER_SYNC_COMPUTE_SHADING,
          true};
}

TrackedResource after_producer(const PlannerWorkload& w,
                               const std::vector<PlannerTexture>& textures) {
  if (w.target) return written_by(w.kind, ResourceKind::texture, textures[w.target->texture].depth);
  return written_by(w.kind, output_of(w.kind), false);
}

ConsumerRead read_by(WorkloadKind consumer) {
  switch (consumer) {
    case WorkloadKind::compute:
      return {D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE, D3D12_BARRIER_SYNC_COMPUTE_SHADING};
    case WorkloadKind::copy:
      return {D3D12_RESOURCE_STATE_COPY_SOURCE, D3D12_BARRIER_SYNC_COPY,
              D3D12_BARRIER_ACCESS_COPY_SOURCE, D3D12_BARRIER_LAYOUT_COPY_SOURCE};
    case WorkloadKind::graphics:
      break;
  }
  return {D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE, D3D12_BARRIER_SYNC_PIXEL_SHADING};
}

namespace {

// A layout in which a copy can read a texture.
bool copy_readable(D3D12_BARRIER_LAYOUT layout) {
  switch (layout) {
    case D3D12_BARRIER_LAYOUT_COMMON:
    case D3D12_BARRIER_LAYOUT_GENERIC_READ:
    case D3D12_BARRIER_LAYOUT_COPY_SOURCE:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COMMON:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_GENERIC_READ:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COPY_SOURCE:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COMMON:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_GENERIC_READ:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COPY_SOURCE:
      return true;
    default:
      return false;
  }
}

// A layout in which a shader can read a texture.
bool layout_readable(D3D12_BARRIER_LAYOUT layout) {
  switch (layout) {
    case D3D12_BARRIER_LAYOUT_COMMON:
    case D3D12_BARRIER_LAYOUT_GENERIC_READ:
    case D3D12_BARRIER_LAYOUT_SHADER_RESOURCE:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_COMMON:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_GENERIC_READ:
    case D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_SHADER_RESOURCE:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_COMMON:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_GENERIC_READ:
    case D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_SHADER_RESOURCE:
    case D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ:  // a depth buffer, read by shaders
      return true;
    default:
      return false;
  }
}

}  // namespace

bool readable_by(const ConsumerRead& read, D3D12_BARRIER_LAYOUT layout) {
  return read.access == D3D12_BARRIER_ACCESS_COPY_SOURCE ? copy_readable(layout)
                                                         : layout_readable(layout);
}

// The barrier rules of one enhanced barrier recorded on a queue of `queue` type.
std::vector<BarrierFinding> check(const EnhancedFields& f, QueueType queue, ResourceKind resource,
                                  bool unordered_access) {
  return check_enhanced_barrier(f.type, f.sync_before, f.sync_after, f.access_before,
                                f.access_after, f.layout_before, f.layout_after, queue, resource,
                                unordered_access);
}

// `consumer` writes again the subresource `producer` wrote, as an unordered-access write (a
// dispatch): what a UAV barrier, or its enhanced form, orders without a read.
bool rewrites_subresource(const PlannerWorkload& producer, const PlannerWorkload& consumer) {
  return consumer.kind == WorkloadKind::compute && producer.target && consumer.target &&
         producer.target->texture == consumer.target->texture &&
         producer.target->mip == consumer.target->mip &&
         producer.target->slice == consumer.target->slice;
}

EnhancedBarrier make_enhanced(const EnhancedFields& f,
                              const std::optional<SubresourceRange>& range) {
  switch (f.type) {
    case D3D12_BARRIER_TYPE_GLOBAL:
      return D3D12_GLOBAL_BARRIER{f.sync_before, f.sync_after, f.access_before, f.access_after};
    case D3D12_BARRIER_TYPE_BUFFER:
      return D3D12_BUFFER_BARRIER{f.sync_before,    f.sync_after, f.access_before,
                                  f.access_after,   nullptr,      0,
                                  ~std::uint64_t{0}};
    case D3D12_BARRIER_TYPE_TEXTURE:
      break;
  }
  D3D12_TEXTURE_BARRIER t{};
  t.SyncBefore = f.sync_before;
  t.SyncAfter = f.sync_after;
  t.AccessBefore = f.access_before;
  t.AccessAfter = f.access_after;
  t.LayoutBefore = f.layout_before;
  t.LayoutAfter = f.layout_after;
  t.pResource = nullptr;
  t.Subresources = kAllSubresources;
  if (range)
    t.Subresources = {
        range->first_mip, range->mip_count, range->first_slice, range->slice_count, 0, 1};
  t.Flags = D3D12_TEXTURE_BARRIER_FLAG_NONE;
  return t;
}

}  // namespace gpuoverlap::barrier_planning
