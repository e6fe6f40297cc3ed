#include "barriers/barrier_planner.h"

#include <algorithm>
#include <limits>

#include "barriers/d3d12_names.h"

namespace gpuoverlap {

bool barrier_after_producer(const PlannerWorkload& producer, const PlannerWorkload& consumer) {
  return producer.queue != consumer.queue &&
         (producer.kind == WorkloadKind::graphics || consumer.queue_type == QueueType::compute);
}

bool BarrierPlan::has_errors() const {
  for (const auto& f : findings)
    if (f.finding.severity == BarrierFinding::Severity::error) return true;
  return false;
}

namespace {

// Where a producer's output stands at a point of the frame, in both vocabularies.
struct TrackedResource {
  ResourceKind kind = ResourceKind::buffer;
  D3D12_RESOURCE_STATES state = D3D12_RESOURCE_STATE_UNORDERED_ACCESS;
  D3D12_BARRIER_LAYOUT layout = D3D12_BARRIER_LAYOUT_UNDEFINED;  // textures only
  D3D12_BARRIER_ACCESS access = D3D12_BARRIER_ACCESS_UNORDERED_ACCESS;
  D3D12_BARRIER_SYNC sync = D3D12_BARRIER_SYNC_COMPUTE_SHADING;
  bool written = true;  // last access was the producer's write (no barrier since)
  // A declared texture's subresource that nothing used since the frame start restored it (in
  // an earlier submission): a first write waits for nothing.
  bool untouched = false;
  // The queue whose command list last moved it (a declared texture's subresource).
  std::size_t queue = 0;
  // Who read it since it was written, and on which queue: a later barrier on another queue
  // must come after those reads (finish_read).
  std::vector<std::pair<std::size_t, std::size_t>> readers{};
};

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

// How a consumer reads a producer's output: a shader reads a shader resource, a copy (a
// readback) reads a copy source.
struct ConsumerRead {
  D3D12_RESOURCE_STATES state;
  D3D12_BARRIER_SYNC sync;
  D3D12_BARRIER_ACCESS access = D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
  D3D12_BARRIER_LAYOUT layout = D3D12_BARRIER_LAYOUT_SHADER_RESOURCE;  // a texture's
};

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

bool readable_by(const ConsumerRead& read, D3D12_BARRIER_LAYOUT layout) {
  return read.access == D3D12_BARRIER_ACCESS_COPY_SOURCE ? copy_readable(layout)
                                                         : layout_readable(layout);
}

struct EnhancedFields {
  D3D12_BARRIER_TYPE type;
  D3D12_BARRIER_SYNC sync_before, sync_after;
  D3D12_BARRIER_ACCESS access_before, access_after;
  D3D12_BARRIER_LAYOUT layout_before, layout_after;
};

// The barrier rules of one enhanced barrier recorded on a queue of `queue` type.
std::vector<BarrierFinding> check(const EnhancedFields& f, QueueType queue, ResourceKind resource,
                                  bool unordered_access) {
  return check_enhanced_barrier(f.type, f.sync_before, f.sync_after, f.access_before,
                                f.access_after, f.layout_before, f.layout_after, queue, resource,
                                unordered_access);
}

// The textures of one heap are written and read on one queue: their hand-overs are recorded
// there, and a fence between queues would not order a hand-over against a use elsewhere.
std::string one_queue_per_heap(const std::string& heap) {
  return "the textures of heap '" + heap +
         "' are written and read on one queue, where their hand-overs are recorded";
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

class Planner {
 public:
  Planner(const std::vector<PlannerWorkload>& workloads,
          const std::vector<PlannerDependency>& dependencies,
          const std::vector<PlannerTexture>& textures, BarrierKind target_barrier,
          BarrierPlan& plan)
      : workloads_(workloads),
        textures_(textures),
        target_enhanced_(is_enhanced(target_barrier)),
        plan_(plan) {
    // after_[c][p]: c runs after p, through a chain of dependencies (fences across queues).
    after_.assign(workloads.size(), std::vector<bool>(workloads.size(), false));
    for (bool grew = true; grew;) {
      grew = false;
      for (const PlannerDependency& d : dependencies) {
        if (d.consumer >= workloads.size() || d.producer >= workloads.size()) continue;
        std::vector<bool>& c = after_[d.consumer];
        if (!c[d.producer]) c[d.producer] = grew = true;
        for (std::size_t p = 0; p < workloads.size(); ++p)
          if (after_[d.producer][p] && !c[p]) c[p] = grew = true;
      }
    }
    for (const auto& w : workloads) tracked_.push_back(after_producer(w, textures));
    at_signal_ = tracked_;
    // Every subresource of a declared texture starts the frame unwritten, in RENDER_TARGET
    // (DEPTH_WRITE for a depth texture), in UNORDERED_ACCESS where dispatches and no draws
    // write the texture, or in COPY_DEST where only copies do (both of which a compute queue
    // can hold).
    for (std::size_t t = 0; t < textures.size(); ++t) {
      bool drawn = false, dispatched = false, copied = false;
      std::optional<std::size_t> writer;  // any: the writers share one queue (the parser's rule)
      for (std::size_t w = 0; w < workloads.size(); ++w)
        if (workloads[w].target && workloads[w].target->texture == t) {
          (workloads[w].kind == WorkloadKind::graphics ? drawn
           : workloads[w].kind == WorkloadKind::copy   ? copied
                                                       : dispatched) = true;
          writer = w;
        }
      const WorkloadKind first_of = drawn        ? WorkloadKind::graphics
                                    : dispatched ? WorkloadKind::compute
                                    : copied     ? WorkloadKind::copy
                                                 : WorkloadKind::graphics;
      TrackedResource start = written_by(first_of, ResourceKind::texture, textures[t].depth);
      start.written = false;
      start.untouched = true;
      // The frame start's restore is recorded on the writers' queue.
      start.queue = writer ? workloads[*writer].queue : 0;
      writer_of_.push_back(writer);
      start_writer_.push_back(first_of);
      plan_.texture_unordered_access.push_back(dispatched);
      plan_.texture_copy_destination.push_back(copied);
      plan_.texture_start_layouts.push_back(start.layout);
      plan_.texture_start_states.push_back(start.state);
      subresources_.emplace_back(std::size_t{textures[t].extent.mips} * textures[t].extent.slices,
                                 start);
    }
    for (std::size_t w = 0; w < workloads.size(); ++w)
      if (workloads[w].target) writers_.push_back(w);
    std::stable_sort(writers_.begin(), writers_.end(), [&](std::size_t a, std::size_t b) {
      return workloads[a].position < workloads[b].position;
    });
  }

  void add(std::size_t index, const PlannerDependency& d) {
    index_ = index;
    const PlannerWorkload& p = workloads_[d.producer];
    const PlannerWorkload& c = workloads_[d.consumer];
    const bool on_consumer_queue = !barrier_after_producer(p, c);
    // The writes into declared textures that ran before this barrier is recorded: before the
    // consumer's own, or right after the producer's.
    write_until(on_consumer_queue ? 2 * c.position : 2 * p.position + 1);
    index_ = index;
    DependencyPlan out;
    out.producer = d.producer;
    out.consumer = d.consumer;
    out.kind = d.request.kind;
    out.split_policy = d.request.split_policy;
    out.cross_queue = p.queue != c.queue;
    out.barrier_queue = on_consumer_queue ? c.queue : p.queue;
    out.barrier_queue_type = on_consumer_queue ? c.queue_type : p.queue_type;
    out.resource = p.target ? ResourceKind::texture : output_of(p.kind);
    if (out.resource == ResourceKind::texture) out.extent = kRenderTargetExtent;
    if (p.target) {
      out.texture = p.target->texture;
      out.extent = textures_[p.target->texture].extent;
      // By default a barrier on a declared texture covers what its producer drew.
      out.subresources = SubresourceRange{p.target->mip, 1, p.target->slice, 1};
    }
    if (d.request.subresources) resolve_subresources(*d.request.subresources, out);
    if (out.texture) {
      readers_.push_back({*out.texture, d.consumer});
      if (!textures_[*out.texture].heap.empty() && out.cross_queue)
        error("heap-queue", "'" + c.name + "' reads '" + textures_[*out.texture].name +
                                "' on another queue than its writer's: " +
                                one_queue_per_heap(textures_[*out.texture].heap));
    }
    out.reads_output = d.request.reads_output.value_or(d.request.kind != BarrierKind::none);
    const Placement full_at =
        on_consumer_queue ? Placement::before_consumer : Placement::after_producer;

    if (!out.cross_queue && is_split(d.request.kind) && out.texture) check_split_range(out);
    if (out.cross_queue && is_split(d.request.kind))
      error("split-cross-queue",
            "a split barrier cannot join two queues (its halves would be VkEvents, which do not "
            "cross queues); use legacy or enhanced, the fence orders the queues");

    // A barrier on the consumer's side of a fence sees the output as it was when the fence was
    // signalled, and changes nothing on the producer's queue: a buffer (its states have no
    // layout behind them), or a declared texture's subresources, tracked as one copy for every
    // queue (finish() checks that the writers' queue can restore what such a barrier left).
    TrackedResource fenced_copy = at_signal_[d.producer];
    const bool consumer_side_of_fence = out.cross_queue && on_consumer_queue;
    // A declared texture's subresources in the range, which must stand in one state.
    std::vector<TrackedResource*> covered;
    if (out.texture) covered = covered_subresources(out);
    // The consumer reads the subresource its producer wrote (a range widens the barrier, not
    // the read).
    if (out.reads_output && p.target && c.target && p.target->texture == c.target->texture &&
        p.target->mip == c.target->mip && p.target->slice == c.target->slice)
      error("target-feedback",
            "'" + c.name + "' reads mip " + std::to_string(c.target->mip) + ", slice " +
                std::to_string(c.target->slice) + " of '" + textures_[c.target->texture].name +
                "', which it writes: one subresource cannot be a shader resource and the "
                "workload's output at once");
    TrackedResource texture_copy = covered.empty() ? TrackedResource{} : *covered.front();
    TrackedResource& r = !covered.empty()         ? texture_copy
                         : consumer_side_of_fence ? fenced_copy
                                                  : tracked_[d.producer];
    const ConsumerRead read = read_by(c.kind);
    switch (d.request.kind) {
      case BarrierKind::none:
        out.note = "no barrier";
        if (out.reads_output && r.kind == ResourceKind::texture && !readable_by(read, r.layout))
          error("none-texture-read",
                "reads_output without a barrier on a texture: it stays in layout " +
                    barrier_layout_name(r.layout) + ", which '" + c.name + "' cannot read");
        else if (out.reads_output && !out.cross_queue)
          warning("none-race",
                  "the consumer reads the producer's output with no barrier between "
                  "them: a data race, by request (reads_output = true)");
        break;
      case BarrierKind::uav:
        if (c.kind == WorkloadKind::copy) {
          error("uav-copy",
                "a UAV barrier orders unordered-access work; '" + c.name +
                    "' is a copy, which reads a copy source: use a transition (legacy) or an "
                    "enhanced barrier");
          break;
        }
        plan_uav(r, out, full_at);
        break;
      case BarrierKind::legacy:
      case BarrierKind::split:
        plan_legacy(d, r, read, out, full_at);
        break;
      case BarrierKind::enhanced:
      case BarrierKind::enhanced_split:
        plan_enhanced(d, r, read, out, full_at);
        break;
    }
    finish_read(r, out, c);
    r.queue = out.barrier_queue;
    r.untouched = false;
    for (TrackedResource* sub : covered) *sub = r;
    if (r.kind == ResourceKind::texture) out.layout_at_consumer = r.layout;
    if (out.cross_queue && !on_consumer_queue) at_signal_[d.producer] = r;
    plan_.dependencies.push_back(std::move(out));
  }

  void finish() {
    write_until(std::numeric_limits<std::size_t>::max());
    plan_aliasing();
    // The next frame starts with every subresource restored on the writers' queue, from where
    // this frame left it: a compute queue cannot name a graphics state or layout.
    for (std::size_t t = 0; t < subresources_.size(); ++t) {
      if (!writer_of_[t]) continue;
      const std::size_t writer = *writer_of_[t];
      if (workloads_[writer].queue_type != QueueType::compute) continue;
      for (const TrackedResource& sub : subresources_[t]) {
        if (state_usable_on(QueueType::compute, sub.state) &&
            layout_usable_on(QueueType::compute, sub.layout))
          continue;
        target_error(writer, "texture-restore-queue",
                     "'" + textures_[t].name + "' ends the frame in " +
                         resource_states_name(sub.state) + " (layout " +
                         barrier_layout_name(sub.layout) +
                         "), which its writers' compute queue cannot restore at the next frame's "
                         "start; read it on that queue, or from a dispatch");
        break;
      }
    }
    for (const TrackedResource& r : tracked_)
      plan_.final_layouts.push_back(
          r.kind == ResourceKind::texture ? r.layout : D3D12_BARRIER_LAYOUT_UNDEFINED);
    for (const auto& texture : subresources_) {
      plan_.texture_final_layouts.emplace_back();
      plan_.texture_final_states.emplace_back();
      for (const TrackedResource& sub : texture) {
        plan_.texture_final_layouts.back().push_back(sub.layout);
        plan_.texture_final_states.back().push_back(sub.state);
      }
    }
  }

 private:
  // Writes into declared textures whose place (2 x position) lies before `key`: each needs its
  // subresource in its writer's layout (a TargetTransition brings it there from a read or from
  // the frame start), and leaves it written.
  void write_until(std::size_t key) {
    while (next_writer_ < writers_.size() &&
           2 * workloads_[writers_[next_writer_]].position < key) {
      const std::size_t w = writers_[next_writer_++];
      const PlannerWorkload& writer = workloads_[w];
      const TextureTarget& target = *writer.target;
      const PlannerTexture& texture = textures_[target.texture];
      TrackedResource& sub = subresources_[target.texture][subresource_index(
          target.mip, target.slice, texture.extent.mips)];
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
  void transition_target(std::size_t w, const TrackedResource& sub, const TrackedResource& written,
                         const std::string& where) {
    const PlannerWorkload& writer = workloads_[w];
    const TextureTarget& target = *writer.target;
    if (sub.queue != writer.queue) {
      target_error(w, "target-queue",
                   where + ", which was last moved to layout " + barrier_layout_name(sub.layout) +
                       " on another queue; a writer brings it back to " +
                       barrier_layout_name(written.layout) +
                       " only on the queue that last used it");
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

  // The hand-overs of every heap (TargetTransition), from the state each texture is left in
  // by its last use. Contract: every write and read has been planned, so each texture's
  // tracked subresource is where its last use left it.
  void plan_aliasing() {
    plan_.texture_aliased.assign(textures_.size(), false);
    plan_.texture_holds_heap_at_start.assign(textures_.size(), false);
    std::vector<std::string> heaps;
    for (const PlannerTexture& t : textures_)
      if (!t.heap.empty() && std::find(heaps.begin(), heaps.end(), t.heap) == heaps.end())
        heaps.push_back(t.heap);
    std::vector<TargetTransition> handovers;
    for (const std::string& heap : heaps) {
      // Each texture's first write and its last use (write or read), by execution position.
      struct Member {
        std::size_t texture, first_writer, last_user;
      };
      std::vector<Member> members;
      bool planned = true;
      for (std::size_t t = 0; t < textures_.size(); ++t) {
        if (textures_[t].heap != heap) continue;
        std::optional<std::size_t> first, last;
        for (const std::size_t w : writers_)
          if (workloads_[w].target->texture == t) {
            if (!first) first = w;
            last = w;
          }
        if (!first) {
          planned = false;  // the contract: the parser refuses an unwritten texture in a heap
          continue;
        }
        for (const auto& [texture, reader] : readers_)
          if (texture == t && workloads_[reader].position > workloads_[*last].position)
            last = reader;
        members.push_back({t, *first, *last});
      }
      if (!planned || members.size() < 2) continue;
      std::sort(members.begin(), members.end(), [&](const Member& a, const Member& b) {
        return workloads_[a.first_writer].position < workloads_[b.first_writer].position;
      });
      for (std::size_t i = 1; i < members.size(); ++i) {
        const Member& before = members[i - 1];
        const Member& after = members[i];
        const std::string& writer = workloads_[after.first_writer].name;
        const std::string said = "'" + writer + "' writes '" + textures_[after.texture].name +
                                 "', which shares heap '" + heap + "' with '" +
                                 textures_[before.texture].name + "'";
        if (workloads_[before.first_writer].queue != workloads_[after.first_writer].queue) {
          target_error(after.first_writer, "heap-queue",
                       said + ", written on another queue: " + one_queue_per_heap(heap));
          planned = false;
        } else if (workloads_[before.last_user].position >=
                   workloads_[after.first_writer].position) {
          target_error(after.first_writer, "heap-overlap",
                       said + ", while '" + workloads_[before.last_user].name +
                           "' still uses the other one there or later in the frame: textures of "
                           "one heap hold its memory one after another");
          planned = false;
        }
      }
      if (!planned) continue;
      for (const Member& m : members) plan_.texture_aliased[m.texture] = true;
      plan_.texture_holds_heap_at_start[members.back().texture] = true;
      // Hand-over i gives the heap to members[i]; the first takes it from the last texture of
      // the frame before.
      for (std::size_t i = 0; i < members.size(); ++i) {
        const std::size_t from = members[(i + members.size() - 1) % members.size()].texture;
        hand_over(from, members[i].texture, members[i].first_writer, i > 0, handovers);
      }
    }
    // Each hand-over goes before the transitions its writer already has.
    handovers.insert(handovers.end(), plan_.target_transitions.begin(),
                     plan_.target_transitions.end());
    std::stable_sort(handovers.begin(), handovers.end(),
                     [&](const TargetTransition& a, const TargetTransition& b) {
                       return workloads_[a.workload].position < workloads_[b.workload].position;
                     });
    plan_.target_transitions = std::move(handovers);
  }

  // The barriers that hand heap memory from texture `from` to texture `to` right before `w`,
  // its first write into `to`. `in_frame`: `from` was used earlier in this frame (not in the
  // frame before), so what the hand-over leaves it in is where this frame leaves it.
  void hand_over(std::size_t from, std::size_t to, std::size_t w, bool in_frame,
                 std::vector<TargetTransition>& out) {
    TrackedResource& held = subresources_[from].front();
    const QueueType queue = workloads_[w].queue_type;
    const TrackedResource activated =
        written_by(start_writer_[to], ResourceKind::texture, textures_[to].depth);
    if (!target_enhanced_) {
      const D3D12_RESOURCE_STATES rest = plan_.texture_start_states[from];
      if (held.state != rest) {
        for (const BarrierFinding& found :
             check_legacy_transition(held.state, rest, queue, ResourceKind::texture,
                                     plan_.texture_unordered_access[from]))
          plan_.findings.push_back({0, found, w});
        out.push_back({w, from, legacy_transition(held.state, rest), {}});
      }
      D3D12_RESOURCE_BARRIER aliasing{};
      aliasing.Type = D3D12_RESOURCE_BARRIER_TYPE_ALIASING;
      aliasing.Flags = D3D12_RESOURCE_BARRIER_FLAG_NONE;
      out.push_back({w, to, aliasing, from, plan_.texture_start_layouts[to]});
      if (in_frame) {
        held.state = rest;
        held.layout = plan_.texture_start_layouts[from];
      }
      return;
    }
    const EnhancedFields release{D3D12_BARRIER_TYPE_TEXTURE,
                                 held.sync,
                                 D3D12_BARRIER_SYNC_NONE,
                                 held.access,
                                 D3D12_BARRIER_ACCESS_NO_ACCESS,
                                 held.layout,
                                 held.layout};
    const EnhancedFields acquire{
        D3D12_BARRIER_TYPE_TEXTURE,     held.sync,        activated.sync,
        D3D12_BARRIER_ACCESS_NO_ACCESS, activated.access, D3D12_BARRIER_LAYOUT_UNDEFINED,
        plan_.texture_start_layouts[to]};
    for (const EnhancedFields* f : {&release, &acquire})
      for (const BarrierFinding& found :
           check(*f, queue, ResourceKind::texture,
                 plan_.texture_unordered_access[f == &release ? from : to]))
        plan_.findings.push_back({0, found, w});
    out.push_back({w, from, make_enhanced(release, std::nullopt), {}});
    EnhancedBarrier activate = make_enhanced(acquire, std::nullopt);
    // Its compression metadata must be initialised when it becomes active: every declared
    // texture is a render target or a depth stencil (the backends create them so).
    std::get<D3D12_TEXTURE_BARRIER>(activate).Flags = D3D12_TEXTURE_BARRIER_FLAG_DISCARD;
    out.push_back({w, to, activate, from, D3D12_BARRIER_LAYOUT_UNDEFINED, held.access});
  }

  // Whether `reader` has completed when `w` starts: `w` waits, through dependencies, for the
  // reader or for later work of the reader's queue (a fence is signalled once everything
  // submitted before it on its queue has completed).
  bool done_before(std::size_t reader, std::size_t w) const {
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
  void finish_read(TrackedResource& r, const DependencyPlan& out, const PlannerWorkload& c) {
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

  // A depth state or layout belongs to a depth texture (created to be a depth-stencil, D3D12's
  // ALLOW_DEPTH_STENCIL), a render-target one to a colour texture: `said` names the one a
  // barrier asks for.
  void check_depth_match(const DependencyPlan& out, const std::string& said, bool depth_named,
                         bool render_target_named) {
    if (out.resource != ResourceKind::texture) return;
    const bool depth = out.texture && textures_[*out.texture].depth;
    if (depth_named && !depth)
      error("resource-state", said + " on a colour texture (only a d32 texture is a depth buffer)");
    if (render_target_named && depth)
      error("resource-state",
            said + " on a depth texture (a d32 texture is a depth buffer, not a render target)");
  }

  void target_error(std::size_t draw, std::string rule, std::string message) {
    plan_.findings.push_back(
        {0, {BarrierFinding::Severity::error, std::move(rule), std::move(message)}, draw});
  }

  // A split barrier's range is in transition from its BEGIN half (after the producer) to its
  // END half (before the consumer): a draw in between may not render into it.
  void check_split_range(const DependencyPlan& out) {
    const SubresourceRange range =
        out.subresources.value_or(SubresourceRange{0, out.extent.mips, 0, out.extent.slices});
    const std::size_t begin = workloads_[out.producer].position;
    const std::size_t end = workloads_[out.consumer].position;
    for (const std::size_t w : writers_) {
      const PlannerWorkload& writer = workloads_[w];
      const TextureTarget& target = *writer.target;
      if (target.texture != *out.texture || writer.position <= begin || writer.position >= end)
        continue;
      if (range.contains(target.mip, target.slice))
        error("split-range-draw",
              "'" + writer.name + "' writes mip " + std::to_string(target.mip) + ", slice " +
                  std::to_string(target.slice) +
                  " between this split barrier's BEGIN and END, while the range is in "
                  "transition; leave that subresource out of the range or do not split");
    }
  }

  // The tracked subresources of `out`'s range on its declared texture, after checking that they
  // stand in one state (a barrier names one StateBefore or LayoutBefore for all of them).
  std::vector<TrackedResource*> covered_subresources(const DependencyPlan& out) {
    std::vector<TrackedResource*> covered;
    const SubresourceRange range =
        out.subresources.value_or(SubresourceRange{0, out.extent.mips, 0, out.extent.slices});
    auto& texture = subresources_[*out.texture];
    for (std::uint32_t slice = range.first_slice; slice < range.first_slice + range.slice_count;
         ++slice)
      for (std::uint32_t mip = range.first_mip; mip < range.first_mip + range.mip_count; ++mip) {
        TrackedResource* sub = &texture[subresource_index(mip, slice, out.extent.mips)];
        if (!covered.empty() &&
            (sub->state != covered.front()->state || sub->layout != covered.front()->layout)) {
          error("subresource-states",
                "the subresources cover mip " + std::to_string(mip) + ", slice " +
                    std::to_string(slice) + " in layout " + barrier_layout_name(sub->layout) +
                    " and others in " + barrier_layout_name(covered.front()->layout) +
                    "; one barrier has one layout before: name a range per layout");
          return {covered.front()};
        }
        covered.push_back(sub);
      }
    return covered;
  }

  void error(std::string rule, std::string message) {
    plan_.findings.push_back(
        {index_, {BarrierFinding::Severity::error, std::move(rule), std::move(message)}, {}});
  }
  void warning(std::string rule, std::string message) {
    plan_.findings.push_back(
        {index_, {BarrierFinding::Severity::warning, std::move(rule), std::move(message)}, {}});
  }
  void add_findings(const std::vector<BarrierFinding>& findings) {
    for (const auto& f : findings) plan_.findings.push_back({index_, f, {}});
  }

  // A range is checked against the output it names: buffers have one subresource, a GLOBAL
  // barrier names no resource, and a range must lie inside the texture and cover the
  // subresource the producer wrote (mip 0, slice 0 of a render target), or it orders nothing.
  void resolve_subresources(const SubresourceRequest& q, DependencyPlan& out) {
    if (out.resource == ResourceKind::buffer) {
      error("subresource-buffer",
            "subresources name mips and array slices of a texture; the producer writes a buffer, "
            "which has one subresource");
      return;
    }
    if (q == SubresourceRequest{} && !out.texture) return;  // all of them, as without the key
    const SubresourceRequest::Span mips =
        q.mips.value_or(SubresourceRequest::Span{0, out.extent.mips});
    const SubresourceRequest::Span slices =
        q.slices.value_or(SubresourceRequest::Span{0, out.extent.slices});
    auto outside = [](const SubresourceRequest::Span& span, std::uint32_t size) {
      return span.count == 0 || span.first >= size || span.count > size - span.first;
    };
    const auto span_text = [](const SubresourceRequest::Span& span) {
      return "[" + std::to_string(span.first) + ", " + std::to_string(span.count) + "]";
    };
    if (outside(mips, out.extent.mips) || outside(slices, out.extent.slices)) {
      error("subresource-range", "subresources mips " + span_text(mips) + ", slices " +
                                     span_text(slices) + " lie outside the texture (" +
                                     std::to_string(out.extent.mips) + " mip(s), " +
                                     std::to_string(out.extent.slices) + " slice(s))");
      return;
    }
    const SubresourceRange range{mips.first, mips.count, slices.first, slices.count};
    const PlannerWorkload& producer = workloads_[out.producer];
    const std::uint32_t drawn_mip = producer.target ? producer.target->mip : 0;
    const std::uint32_t drawn_slice = producer.target ? producer.target->slice : 0;
    if (!range.contains(drawn_mip, drawn_slice)) {
      error("subresource-uncovered", "subresources mips " + span_text(mips) + ", slices " +
                                         span_text(slices) + " leave out mip " +
                                         std::to_string(drawn_mip) + ", slice " +
                                         std::to_string(drawn_slice) + ", which '" + producer.name +
                                         "' writes: the barrier would not order its write");
      return;
    }
    out.subresources = range;
  }

  void plan_uav(TrackedResource& r, DependencyPlan& out, Placement at) {
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

  void plan_legacy(const PlannerDependency& d, TrackedResource& r, const ConsumerRead& read,
                   DependencyPlan& out, Placement at) {
    const BarrierRequest& q = d.request;
    if (q.state_before && *q.state_before != r.state)
      error("state-mismatch", "StateBefore " + resource_states_name(*q.state_before) +
                                  " is not the state the output is in here (" +
                                  resource_states_name(r.state) + ")");
    const D3D12_RESOURCE_STATES before = q.state_before.value_or(r.state);
    const D3D12_RESOURCE_STATES after = q.state_after.value_or(read.state);
    if (out.reads_output &&
        (static_cast<unsigned>(after) & static_cast<unsigned>(read.state)) == 0 &&
        after != D3D12_RESOURCE_STATE_COMMON)
      error("consumer-state", "StateAfter " + resource_states_name(after) + " does not let '" +
                                  workloads_[d.consumer].name +
                                  "' read the output (it reads it as " +
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
             legacy_transition(before, after, D3D12_RESOURCE_BARRIER_FLAG_BEGIN_ONLY,
                               subresource)});
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

  void plan_enhanced(const PlannerDependency& d, TrackedResource& r, const ConsumerRead& read,
                     DependencyPlan& out, Placement at) {
    const BarrierRequest& q = d.request;
    const bool texture = r.kind == ResourceKind::texture;
    const bool anything_given = q.type || q.sync_before || q.sync_after || q.access_before ||
                                q.access_after || q.layout_before || q.layout_after;
    // Visible, and the barrier that made it so also ordered this consumer's stage after it.
    if (!anything_given && !r.written && r.access == read.access &&
        sync_covers(r.sync, read.sync) && (!texture || readable_by(read, r.layout))) {
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
                                             : rewrite ? D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS
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
        : r.layout == D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS ? D3D12_RESOURCE_STATE_UNORDERED_ACCESS
        : r.layout == D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE ? D3D12_RESOURCE_STATE_DEPTH_WRITE
                                                               : D3D12_RESOURCE_STATE_RENDER_TARGET;
    r.written = false;
  }

  const std::vector<PlannerWorkload>& workloads_;
  const std::vector<PlannerTexture>& textures_;
  bool target_enhanced_ = false;  // target transitions are enhanced barriers
  BarrierPlan& plan_;
  std::vector<std::vector<TrackedResource>> subresources_;  // per texture, per subresource
  // Per texture: one of its writers (they share a queue, which restores it at the frame
  // start); none where nothing writes it.
  std::vector<std::optional<std::size_t>> writer_of_;
  // Per texture: the kind of writer that sets where it starts the frame (a draw where any draws
  // it, else a dispatch, else a copy).
  std::vector<WorkloadKind> start_writer_;
  // (texture, consumer) per dependency on a declared texture: who reads it.
  std::vector<std::pair<std::size_t, std::size_t>> readers_;
  std::vector<std::size_t> writers_;  // workloads writing a texture, in execution order
  std::size_t next_writer_ = 0;
  std::vector<TrackedResource> tracked_;
  std::vector<std::vector<bool>> after_;    // [consumer][producer]: runs after, transitively
  std::vector<TrackedResource> at_signal_;  // per producer: as its fence is signalled
  std::size_t index_ = 0;
};

}  // namespace

BarrierPlan plan_barriers(const std::vector<PlannerWorkload>& workloads,
                          const std::vector<PlannerDependency>& dependencies,
                          const std::vector<PlannerTexture>& textures, BarrierKind target_barrier) {
  BarrierPlan plan;
  Planner planner(workloads, dependencies, textures, target_barrier, plan);
  for (std::size_t i = 0; i < dependencies.size(); ++i) planner.add(i, dependencies[i]);
  planner.finish();
  return plan;
}

}  // namespace gpuoverlap
