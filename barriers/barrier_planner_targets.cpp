// Writes into declared textures (TargetTransition: a write after a read, or DISCARD) and the
// readers on other queues that a write or a layout change must wait for.
#include <algorithm>
#include <string>

#include "barriers/barrier_planner_internal.h"
#include "barriers/d3d12_names.h"

namespace gpuoverlap::barrier_planning {

// Writes into declared textures whose place (2 x position) lies before `key`: each needs its
// subresource in its writer's layout (a TargetTransition brings it there from a read or from
// the frame start), and leaves it written.
void Planner::write_until(std::size_t key) {
  while (next_writer_ < writers_.size() && 2 * workloads_[writers_[next_writer_]].position < key) {
    const std::size_t w = writers_[next_writer_++];
    const PlannerWorkload& writer = workloads_[w];
    const TextureTarget& target = *writer.target;
    const PlannerTexture& texture = textures_[target.texture];
    TrackedResource& sub = subresources_[target.texture][subresource_index(target.mip, target.slice,
                                                                           texture.extent.mips)];
    const TrackedResource written = after_producer(writer, textures_);
    const std::string where = "'" + writer.name + "' " +
                              (writer.kind == WorkloadKind::graphics ? "renders into"
                               : writer.kind == WorkloadKind::copy   ? "copies into"
                                                                     : "writes") +
                              " mip " + std::to_string(target.mip) + ", slice " +
                              std::to_string(target.slice) + " of '" + texture.name + "'";
    if (target.discard && !target_enhanced_)
      target_error(w, "discard-legacy",
                   where +
                       " with discard = true, which only an enhanced barrier can do "
                       "(D3D12_TEXTURE_BARRIER_FLAG_DISCARD); the legacy form of the same "
                       "work leaves discard out");
    if (sub.written)
      target_error(w, "target-rewrite",
                   where +
                       ", which an earlier write left and nothing read since: the first "
                       "write's work would be lost unmeasured (read it before writing again)");
    else if (sub.layout != written.layout)
      transition_target(w, sub, written, where);
    // A reader on another queue must be done before the write: the writer's barrier orders
    // only its own queue's work, so without a fence the write (and its layout change) may
    // overwrite what the other queue still reads.
    for (const auto& [reader, queue] : sub.readers)
      if (queue != writer.queue && !done_before(reader, w))
        target_error(w, "cross-queue-rewrite",
                     where + " while '" + workloads_[reader].name +
                         "' may still read it on another queue: make '" + writer.name +
                         "' depend on '" + workloads_[reader].name +
                         "' (or on later work of its queue)");
    sub = written;
    sub.queue = writer.queue;
  }
}

// The write after a read: `sub` into the writer's layout right before workload `w`, from
// what its reader (or the frame start) left (sync, access, layout), or with DISCARD from
// UNDEFINED.
void Planner::transition_target(std::size_t w, const TrackedResource& sub,
                                const TrackedResource& written, const std::string& where) {
  const PlannerWorkload& writer = workloads_[w];
  const TextureTarget& target = *writer.target;
  if (sub.queue != writer.queue) {
    target_error(w, "target-queue",
                 where + ", which was last moved to layout " + barrier_layout_name(sub.layout) +
                     " on another queue; a writer brings it back to " +
                     barrier_layout_name(written.layout) + " only on the queue that last used it");
    return;
  }
  const std::uint32_t index =
      subresource_index(target.mip, target.slice, textures_[target.texture].extent.mips);
  if (!target_enhanced_) {
    plan_.target_transitions.push_back(
        {w,
         target.texture,
         legacy_transition(sub.state, written.state, D3D12_RESOURCE_BARRIER_FLAG_NONE, index),
         {}});
    return;
  }
  // Untouched since the frame start, the subresource has no earlier work to wait for: a
  // RENDER_TARGET sync before would hold a dispatch until the draws before it end.
  EnhancedFields f{D3D12_BARRIER_TYPE_TEXTURE,
                   sub.untouched ? D3D12_BARRIER_SYNC_NONE : sub.sync,
                   written.sync,
                   target.discard || sub.untouched ? D3D12_BARRIER_ACCESS_NO_ACCESS : sub.access,
                   written.access,
                   target.discard ? D3D12_BARRIER_LAYOUT_UNDEFINED : sub.layout,
                   written.layout};
  for (const BarrierFinding& found : check(f, writer.queue_type, ResourceKind::texture,
                                           plan_.texture_unordered_access[target.texture]))
    plan_.findings.push_back({0, found, w});
  EnhancedBarrier barrier = make_enhanced(f, SubresourceRange{target.mip, 1, target.slice, 1});
  if (target.discard)
    std::get<D3D12_TEXTURE_BARRIER>(barrier).Flags = D3D12_TEXTURE_BARRIER_FLAG_DISCARD;
  plan_.target_transitions.push_back({w, target.texture, barrier, {}});
}

// Whether `reader` has completed when `w` starts: `w` waits, through dependencies, for the
// reader or for later work of the reader's queue (a fence is signalled once everything
// submitted before it on its queue has completed).
bool Planner::done_before(std::size_t reader, std::size_t w) const {
  for (std::size_t x = 0; x < workloads_.size(); ++x)
    if (after_[w][x] && workloads_[x].queue == workloads_[reader].queue &&
        workloads_[x].position >= workloads_[reader].position)
      return true;
  return false;
}

// A barrier that changes a texture's layout (a legacy TRANSITION, an enhanced TEXTURE barrier
// to another layout) while a reader on another queue may still read it is a hazard: Vulkan
// rewrites the image, a D3D12 driver may decompress it. That reader must come before the
// consumer of the barrier (a fence on the way). A buffer has no layout: its barriers only
// order and make visible. Then `c` joins the output's readers.
void Planner::finish_read(TrackedResource& r, const DependencyPlan& out, const PlannerWorkload& c) {
  const bool moves = out.resource == ResourceKind::texture &&
                     std::any_of(out.barriers.begin(), out.barriers.end(), [](const auto& b) {
                       if (const auto* legacy = std::get_if<D3D12_RESOURCE_BARRIER>(&b.barrier))
                         return legacy->Type == D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
                       const auto* texture = std::get_if<D3D12_TEXTURE_BARRIER>(
                           &std::get<EnhancedBarrier>(b.barrier));
                       return texture && texture->LayoutBefore != texture->LayoutAfter;
                     });
  if (moves)
    for (const auto& [reader, queue] : r.readers)
      if (queue != out.barrier_queue && reader != out.consumer && !after_[out.consumer][reader])
        error("cross-queue-reader",
              "this barrier moves the output of '" + workloads_[out.producer].name +
                  "' on one queue while '" + workloads_[reader].name +
                  "' may still read it on another: make '" + c.name + "' depend on '" +
                  workloads_[reader].name +
                  "', or let the first barrier leave the output in a state both read");
  if (out.reads_output) r.readers.emplace_back(out.consumer, c.queue);
}

}  // namespace gpuoverlap::barrier_planning
