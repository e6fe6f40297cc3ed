// A dependency's barriers of the kind it asks for: a UAV barrier, a legacy TRANSITION (split
// into BEGIN and END halves) or an enhanced barrier (split likewise), each checked against the
// tracked state and its producer and consumer.
#include <string>

#include "barriers/barrier_planner_internal.h"
#include "barriers/d3d12_names.h"

namespace gpuoverlap::barrier_planning {

void Planner::plan_uav(TrackedResource& r, DependencyPlan& out, Placement at) {
  // On a texture a UAV barrier orders a dispatch's write of a subresource before a later
  // unordered-access write; a reader reads a shader resource, which needs a transition.
  if (r.kind == ResourceKind::texture &&
      (out.reads_output ||
       !rewrites_subresource(workloads_[out.producer], workloads_[out.consumer]))) {
    error("uav-texture",
          "a UAV barrier on a texture orders a later unordered-access write of the same "
          "subresource: its consumer must be a dispatch that writes that subresource again and "
          "does not read it (reads_output = false); a reader reads a shader resource, which "
          "needs a transition");
    return;
  }
  if (r.state != D3D12_RESOURCE_STATE_UNORDERED_ACCESS) {
    error("uav-state", std::string("a UAV barrier needs the ") +
                           (r.kind == ResourceKind::texture ? "texture" : "buffer") +
                           " in unordered_access; it is in " + resource_states_name(r.state));
    return;
  }
  D3D12_RESOURCE_BARRIER b{};
  b.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
  b.Flags = D3D12_RESOURCE_BARRIER_FLAG_NONE;
  b.UAV.pResource = nullptr;
  out.barriers.push_back({at, b});
  r.written = false;
}

void Planner::plan_legacy(const PlannerDependency& d, TrackedResource& r, const ConsumerRead& read,
                          DependencyPlan& out, Placement at) {
  const BarrierRequest& q = d.request;
  if (q.state_before && *q.state_before != r.state)
    error("state-mismatch", "StateBefore " + resource_states_name(*q.state_before) +
                                " is not the state the output is in here (" +
                                resource_states_name(r.state) + ")");
  const D3D12_RESOURCE_STATES before = q.state_before.value_or(r.state);
  const D3D12_RESOURCE_STATES after = q.state_after.value_or(read.state);
  if (out.reads_output && (static_cast<unsigned>(after) & static_cast<unsigned>(read.state)) == 0 &&
      after != D3D12_RESOURCE_STATE_COMMON)
    error("consumer-state", "StateAfter " + resource_states_name(after) + " does not let '" +
                                workloads_[d.consumer].name + "' read the output (it reads it as " +
                                resource_states_name(read.state) + ")");
  if (!q.state_before && !q.state_after &&
      (static_cast<unsigned>(r.state) & static_cast<unsigned>(read.state)) ==
          static_cast<unsigned>(read.state)) {
    out.note = "already " + resource_states_name(r.state) +
               " after an earlier barrier; D3D12 needs no second transition";
    return;
  }
  add_findings(
      check_legacy_transition(before, after, out.barrier_queue_type, r.kind,
                              out.texture && plan_.texture_unordered_access[*out.texture]));
  check_depth_match(out, "StateAfter " + resource_states_name(after),
                    (static_cast<unsigned>(after) &
                     (D3D12_RESOURCE_STATE_DEPTH_WRITE | D3D12_RESOURCE_STATE_DEPTH_READ)) != 0,
                    (static_cast<unsigned>(after) & D3D12_RESOURCE_STATE_RENDER_TARGET) != 0);
  // D3D12's legacy barriers name one subresource or all: a range is one TRANSITION each.
  std::vector<std::uint32_t> subresources{D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES};
  if (out.subresources) {
    subresources.clear();
    const SubresourceRange& range = *out.subresources;
    for (std::uint32_t slice = range.first_slice; slice < range.first_slice + range.slice_count;
         ++slice)
      for (std::uint32_t mip = range.first_mip; mip < range.first_mip + range.mip_count; ++mip)
        subresources.push_back(subresource_index(mip, slice, out.extent.mips));
  }
  const bool split = is_split(q.kind) && !out.cross_queue;
  for (const std::uint32_t subresource : subresources) {
    if (split) {
      out.barriers.push_back(
          {Placement::after_producer,
           legacy_transition(before, after, D3D12_RESOURCE_BARRIER_FLAG_BEGIN_ONLY, subresource)});
      out.barriers.push_back(
          {Placement::before_consumer,
           legacy_transition(before, after, D3D12_RESOURCE_BARRIER_FLAG_END_ONLY, subresource)});
    } else {
      out.barriers.push_back(
          {at, legacy_transition(before, after, D3D12_RESOURCE_BARRIER_FLAG_NONE, subresource)});
    }
  }
  r.state = after;
  if (r.kind == ResourceKind::texture) r.layout = layout_for_legacy_state(after);
  r.access = read.access;
  r.sync = read.sync;
  r.written = false;
}

void Planner::plan_enhanced(const PlannerDependency& d, TrackedResource& r,
                            const ConsumerRead& read, DependencyPlan& out, Placement at) {
  const BarrierRequest& q = d.request;
  const bool texture = r.kind == ResourceKind::texture;
  const bool anything_given = q.type || q.sync_before || q.sync_after || q.access_before ||
                              q.access_after || q.layout_before || q.layout_after;
  // Visible, and the barrier that made it so also ordered this consumer's stage after it.
  if (!anything_given && !r.written && r.access == read.access && sync_covers(r.sync, read.sync) &&
      (!texture || readable_by(read, r.layout))) {
    out.note = std::string("already visible to ") +
               (read.access == D3D12_BARRIER_ACCESS_COPY_SOURCE ? "copies" : "shader reads") +
               " after an earlier barrier; no barrier needed";
    return;
  }
  EnhancedFields f;
  f.type = q.type.value_or(texture ? D3D12_BARRIER_TYPE_TEXTURE : D3D12_BARRIER_TYPE_BUFFER);
  // A dispatch that does not read a subresource in unordered access but writes it again:
  // the enhanced form of a UAV barrier, UNORDERED_ACCESS to UNORDERED_ACCESS on that range.
  const bool rewrite = texture && !out.reads_output &&
                       r.layout == D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS &&
                       rewrites_subresource(workloads_[d.producer], workloads_[d.consumer]);
  const D3D12_BARRIER_ACCESS next_access =
      rewrite ? D3D12_BARRIER_ACCESS_UNORDERED_ACCESS : read.access;
  f.sync_before = q.sync_before.value_or(r.sync);
  f.sync_after = q.sync_after.value_or(read.sync);
  f.access_before = q.access_before.value_or(r.access);
  f.access_after = q.access_after.value_or(next_access);
  const bool texture_barrier = f.type == D3D12_BARRIER_TYPE_TEXTURE;
  f.layout_before =
      q.layout_before.value_or(texture_barrier ? r.layout : D3D12_BARRIER_LAYOUT_UNDEFINED);
  f.layout_after = q.layout_after.value_or(!texture_barrier ? D3D12_BARRIER_LAYOUT_UNDEFINED
                                           : rewrite        ? D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS
                                                            : read.layout);

  if (f.type == D3D12_BARRIER_TYPE_GLOBAL && q.subresources)
    error("subresource-global",
          "a GLOBAL barrier names no resource, so it has no subresources; use a TEXTURE "
          "barrier");
  add_findings(check(f, out.barrier_queue_type, r.kind,
                     out.texture && plan_.texture_unordered_access[*out.texture]));
  if (texture_barrier)
    check_depth_match(out, "LayoutAfter " + barrier_layout_name(f.layout_after),
                      f.layout_after == D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE ||
                          f.layout_after == D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ,
                      f.layout_after == D3D12_BARRIER_LAYOUT_RENDER_TARGET);
  if (f.type == D3D12_BARRIER_TYPE_GLOBAL && texture && out.reads_output &&
      !readable_by(read, r.layout))
    error("global-barrier-layout",
          "the texture must go from layout " + barrier_layout_name(r.layout) +
              " to one its consumer can read, and a GLOBAL barrier changes no layout; use a "
              "TEXTURE barrier");
  if (texture_barrier && texture && f.layout_before != r.layout)
    error("layout-mismatch", "LayoutBefore " + barrier_layout_name(f.layout_before) +
                                 " is not the layout the render target is in here (" +
                                 barrier_layout_name(r.layout) + ")");
  const PlannerWorkload& producer = workloads_[d.producer];
  if (r.written) {
    const D3D12_BARRIER_SYNC stage = r.sync;  // the producer's own, as it left the output
    if (!sync_covers(f.sync_before, stage))
      error("producer-sync", "SyncBefore " + barrier_sync_name(f.sync_before) +
                                 " does not include the work of '" + producer.name + "' (" +
                                 barrier_sync_name(stage) + ")");
    if (f.access_before != D3D12_BARRIER_ACCESS_COMMON &&
        !(static_cast<unsigned>(f.access_before) & static_cast<unsigned>(r.access)))
      error("producer-access", "AccessBefore " + barrier_access_name(f.access_before) +
                                   " does not include the write of '" + producer.name + "' (" +
                                   barrier_access_name(r.access) + ")");
  }
  if (out.reads_output) {
    const std::string& consumer = workloads_[d.consumer].name;
    if (!sync_covers(f.sync_after, read.sync))
      error("consumer-sync", "SyncAfter " + barrier_sync_name(f.sync_after) +
                                 " does not include the work of '" + consumer + "' (" +
                                 barrier_sync_name(read.sync) + ")");
    const bool copy = read.access == D3D12_BARRIER_ACCESS_COPY_SOURCE;
    const unsigned readable =
        read.access | (texture || copy ? 0u : unsigned{D3D12_BARRIER_ACCESS_UNORDERED_ACCESS});
    if (f.access_after != D3D12_BARRIER_ACCESS_COMMON &&
        !(static_cast<unsigned>(f.access_after) & readable))
      error("consumer-access", "AccessAfter " + barrier_access_name(f.access_after) +
                                   " does not let '" + consumer + "' read the output (it reads " +
                                   (copy ? "a copy source)" : "a shader resource)"));
    if (texture_barrier && texture && !readable_by(read, f.layout_after))
      error("consumer-access", "LayoutAfter " + barrier_layout_name(f.layout_after) +
                                   " does not let '" + consumer + "' read the texture");
  }

  if (is_split(q.kind) && !out.cross_queue) {
    EnhancedFields begin = f, end = f;
    begin.sync_after = D3D12_BARRIER_SYNC_SPLIT;
    end.sync_before = D3D12_BARRIER_SYNC_SPLIT;
    out.barriers.push_back({Placement::after_producer, make_enhanced(begin, out.subresources)});
    out.barriers.push_back({Placement::before_consumer, make_enhanced(end, out.subresources)});
  } else {
    out.barriers.push_back({at, make_enhanced(f, out.subresources)});
  }
  if (texture_barrier) r.layout = f.layout_after;
  r.access = f.access_after;
  r.sync = f.sync_after;
  // The legacy state the layout stands for, which a later legacy target transition names.
  r.state =
      r.kind != ResourceKind::texture || readable_by(read, r.layout) ? read.state
      : r.layout == D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS    ? D3D12_RESOURCE_STATE_UNORDERED_ACCESS
      : r.layout == D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE ? D3D12_RESOURCE_STATE_DEPTH_WRITE
                                                             : D3D12_RESOURCE_STATE_RENDER_TARGET;
  r.written = false;
}

// A depth state or layout belongs to a depth texture (created to be a depth-stencil, D3D12's
// ALLOW_DEPTH_STENCIL), a render-target one to a colour texture: `said` names the one a
// barrier asks for.
void Planner::check_depth_match(const DependencyPlan& out, const std::string& said,
                                bool depth_named, bool render_target_named) {
  if (out.resource != ResourceKind::texture) return;
  const bool depth = out.texture && textures_[*out.texture].depth;
  if (depth_named && !depth)
    error("resource-state", said + " on a colour texture (only a d32 texture is a depth buffer)");
  if (render_target_named && depth)
    error("resource-state",
          said + " on a depth texture (a d32 texture is a depth buffer, not a render target)");
}

}  // namespace gpuoverlap::barrier_planning
