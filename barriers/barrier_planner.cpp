// The planner's walk over the frame: where each declared texture starts it, each dependency's
// plan in recording order (its queue, output and range, then the barriers of its kind), and
// what the frame leaves for the next one. The steps it takes live in barrier_planner_*.cpp.
#include "barriers/barrier_planner.h"

#include <algorithm>
#include <limits>

#include "barriers/barrier_planner_internal.h"
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

namespace barrier_planning {

Planner::Planner(const std::vector<PlannerWorkload>& workloads,
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

void Planner::add(std::size_t index, const PlannerDependency& d) {
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

void Planner::finish() {
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
    plan_.final_layouts.push_back(r.kind == ResourceKind::texture ? r.layout
                                                                  : D3D12_BARRIER_LAYOUT_UNDEFINED);
  for (const auto& texture : subresources_) {
    plan_.texture_final_layouts.emplace_back();
    plan_.texture_final_states.emplace_back();
    for (const TrackedResource& sub : texture) {
      plan_.texture_final_layouts.back().push_back(sub.layout);
      plan_.texture_final_states.back().push_back(sub.state);
    }
  }
}

void Planner::target_error(std::size_t draw, std::string rule, std::string message) {
  plan_.findings.push_back(
      {0, {BarrierFinding::Severity::error, std::move(rule), std::move(message)}, draw});
}

void Planner::error(std::string rule, std::string message) {
  plan_.findings.push_back(
      {index_, {BarrierFinding::Severity::error, std::move(rule), std::move(message)}, {}});
}
void Planner::warning(std::string rule, std::string message) {
  plan_.findings.push_back(
      {index_, {BarrierFinding::Severity::warning, std::move(rule), std::move(message)}, {}});
}
void Planner::add_findings(const std::vector<BarrierFinding>& findings) {
  for (const auto& f : findings) plan_.findings.push_back({index_, f, {}});
}

}  // namespace barrier_planning

BarrierPlan plan_barriers(const std::vector<PlannerWorkload>& workloads,
                          const std::vector<PlannerDependency>& dependencies,
                          const std::vector<PlannerTexture>& textures, BarrierKind target_barrier) {
  BarrierPlan plan;
  barrier_planning::Planner planner(workloads, dependencies, textures, target_barrier, plan);
  for (std::size_t i = 0; i < dependencies.size(); ++i) planner.add(i, dependencies[i]);
  planner.finish();
  return plan;
}

}  // namespace gpuoverlap
