#include "scenarios/frame_plan.h"

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

#include "scenarios/scenario.h"

namespace gpuoverlap {

bool FramePlan::has_errors() const {
  for (const auto& f : findings)
    if (f.finding.severity == BarrierFinding::Severity::error) return true;
  return false;
}

const DependencyPlan& FramePlan::dependency(std::size_t consumer, std::size_t index) const {
  for (std::size_t i = 0; i < dependency_refs.size(); ++i)
    if (dependency_refs[i] == std::pair{consumer, index}) return barriers.dependencies[i];
  static const DependencyPlan none;
  return none;  // contract: only asked for dependencies of a planned scenario
}

namespace {

// Edges of the "must run before" graph: the previous workload on the same queue, and every
// producer. `why[v]` names each edge into v for the message of an unsatisfiable graph.
struct Edge {
  std::size_t from;
  std::size_t dependency;  // index into depends_on, or npos for queue order
};

std::vector<std::vector<Edge>> incoming_edges(const Scenario& s) {
  std::vector<std::vector<Edge>> in(s.workloads.size());
  for (std::size_t q = 0; q < s.queues.size(); ++q) {
    const auto on_queue = s.workloads_on(q);
    for (std::size_t i = 1; i < on_queue.size(); ++i)
      in[on_queue[i]].push_back({on_queue[i - 1], std::string::npos});
  }
  for (std::size_t c = 0; c < s.workloads.size(); ++c)
    for (std::size_t i = 0; i < s.workloads[c].depends_on.size(); ++i)
      in[c].push_back({s.workloads[c].depends_on[i].producer, i});
  return in;
}

// A cycle among the workloads Kahn's algorithm could not order, as a readable chain.
FrameFinding describe_cycle(const Scenario& s, const std::vector<std::vector<Edge>>& in,
                            const std::vector<bool>& ordered) {
  std::size_t start = 0;
  while (ordered[start]) ++start;
  // Walk backwards along unordered edges until a workload repeats.
  std::vector<std::size_t> path{start};
  std::vector<const Edge*> edges;
  std::set<std::size_t> seen{start};
  std::size_t v = start;
  while (true) {
    const Edge* next = nullptr;
    for (const Edge& e : in[v])
      if (!ordered[e.from]) next = &e;
    v = next->from;
    edges.push_back(next);
    if (seen.count(v)) break;
    seen.insert(v);
    path.push_back(v);
  }
  const auto first = std::find(path.begin(), path.end(), v) - path.begin();
  std::string chain;
  FrameFinding finding;
  for (std::size_t i = static_cast<std::size_t>(first); i < path.size(); ++i) {
    const Edge* e = edges[i];
    const WorkloadSpec& w = s.workloads[path[i]];
    const WorkloadSpec& before = s.workloads[e->from];
    if (!chain.empty()) chain += ", ";
    if (e->dependency == std::string::npos) {
      chain += "'" + w.name + "' runs after '" + before.name + "' on queue '" +
               s.queues[w.queue].name + "'";
    } else {
      chain += "'" + w.name + "' waits for '" + before.name + "'";
      finding.consumer = path[i];
      finding.dependency = e->dependency;
    }
  }
  finding.finding = {
      BarrierFinding::Severity::error, "unsatisfiable-wait",
      "these waits can never be signalled (queues run their work in order): " + chain};
  return finding;
}

}  // namespace

void attach_frame_plan(Scenario& scenario) {
  scenario.plan = std::make_shared<const FramePlan>(plan_frame(scenario));
}

const FramePlan& frame_plan_of(const Scenario& scenario) {
  if (!scenario.plan)
    throw std::logic_error("scenario '" + scenario.name +
                           "' has no frame plan: it did not pass validation");
  return *scenario.plan;
}

FramePlan plan_frame(const Scenario& s) {
  FramePlan plan;
  const std::size_t n = s.workloads.size();
  const auto in = incoming_edges(s);

  // Kahn's algorithm, always taking the earliest workload in file order that is ready.
  std::vector<std::size_t> waiting(n);
  std::vector<std::vector<std::size_t>> out(n);
  for (std::size_t v = 0; v < n; ++v) {
    waiting[v] = in[v].size();
    for (const Edge& e : in[v]) out[e.from].push_back(v);
  }
  std::set<std::size_t> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (waiting[v] == 0) ready.insert(v);
  std::vector<bool> ordered(n, false);
  while (!ready.empty()) {
    const std::size_t v = *ready.begin();
    ready.erase(ready.begin());
    ordered[v] = true;
    plan.execution_order.push_back(v);
    for (std::size_t next : out[v])
      if (--waiting[next] == 0) ready.insert(next);
  }
  if (plan.execution_order.size() != n) {
    plan.findings.push_back(describe_cycle(s, in, ordered));
    return plan;
  }

  // Barriers, in execution order.
  // In recording order of the barriers (barrier_planner.h): at the consumer's position, or
  // half a step after the producer's for a barrier recorded before a fence signal.
  std::vector<std::size_t> position(n);
  for (std::size_t i = 0; i < n; ++i) position[plan.execution_order[i]] = i;
  std::vector<PlannerWorkload> workloads;
  for (std::size_t w = 0; w < n; ++w) {
    const WorkloadSpec& spec = s.workloads[w];
    workloads.push_back(
        {spec.name, spec.kind, spec.queue, s.queues[spec.queue].type, spec.target, position[w]});
  }
  std::vector<PlannerTexture> textures;
  for (const TextureSpec& t : s.textures)
    textures.push_back({t.name, {t.mips, t.slices}, t.heap, is_depth(t.format)});
  struct Ref {
    double key;
    std::size_t consumer, index;
  };
  std::vector<Ref> refs;
  for (std::size_t c : plan.execution_order)
    for (std::size_t i = 0; i < s.workloads[c].depends_on.size(); ++i) {
      const std::size_t p = s.workloads[c].depends_on[i].producer;
      const bool after = barrier_after_producer(workloads[p], workloads[c]);
      refs.push_back(
          {after ? static_cast<double>(position[p]) + 0.5 : static_cast<double>(position[c]), c,
           i});
    }
  std::stable_sort(refs.begin(), refs.end(),
                   [](const Ref& a, const Ref& b) { return a.key < b.key; });
  std::vector<PlannerDependency> dependencies;
  for (const Ref& r : refs) {
    dependencies.push_back({s.workloads[r.consumer].depends_on[r.index].producer, r.consumer,
                            s.workloads[r.consumer].depends_on[r.index].barrier});
    plan.dependency_refs.emplace_back(r.consumer, r.index);
  }
  plan.barriers = plan_barriers(workloads, dependencies, textures, s.default_barrier);
  // perlin.hlsl binds 4 producer buffers and 4 producer render targets per consumer.
  constexpr std::size_t kMaxReadsPerKind = 4;
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t counts[2] = {0, 0};
    for (std::size_t i = 0; i < plan.barriers.dependencies.size(); ++i) {
      const DependencyPlan& d = plan.barriers.dependencies[i];
      if (d.consumer != c || !d.reads_output) continue;
      const std::size_t kind = d.resource == ResourceKind::buffer ? 0 : 1;
      if (++counts[kind] == kMaxReadsPerKind + 1)
        plan.findings.push_back({c,
                                 plan.dependency_refs[i].second,
                                 {BarrierFinding::Severity::error, "too-many-producers",
                                  "a workload reads at most 4 producer " +
                                      std::string(kind == 0 ? "buffers" : "render targets") +
                                      "; set reads_output = false on the others"}});
    }
  }
  for (const BarrierPlanFinding& f : plan.barriers.findings)
    if (f.draw)
      plan.findings.push_back({*f.draw, FrameFinding::kNoDependency, f.finding});
    else
      plan.findings.push_back({plan.dependency_refs[f.dependency].first,
                               plan.dependency_refs[f.dependency].second, f.finding});

  // Segments: a queue's work is cut before a workload that waits for a fence and after one
  // that signals a fence.
  std::vector<bool> fenced(n, false);
  for (std::size_t c = 0; c < n; ++c)
    for (const DependencySpec& d : s.workloads[c].depends_on)
      if (s.workloads[d.producer].queue != s.workloads[c].queue) fenced[d.producer] = true;
  std::vector<Segment> per_queue_segments;
  for (std::size_t q = 0; q < s.queues.size(); ++q) {
    const std::size_t segments_before = per_queue_segments.size();
    Segment current;
    current.queue = q;
    for (std::size_t w : s.workloads_on(q)) {
      std::vector<std::size_t> waits;
      for (const DependencySpec& d : s.workloads[w].depends_on)
        if (s.workloads[d.producer].queue != q) waits.push_back(d.producer);
      if (!waits.empty() && !current.workloads.empty()) {
        per_queue_segments.push_back(current);
        current = Segment{};
        current.queue = q;
      }
      current.wait_for.insert(current.wait_for.end(), waits.begin(), waits.end());
      current.workloads.push_back(w);
      if (fenced[w]) {
        current.signals_fence = true;
        per_queue_segments.push_back(current);
        current = Segment{};
        current.queue = q;
      }
    }
    // A queue without work still gets one (empty) submission: it signals the frame done.
    if (!current.workloads.empty() || per_queue_segments.size() == segments_before)
      per_queue_segments.push_back(current);
  }
  // Submission order: by each segment's first workload in the execution order, which respects
  // both queue order and fences.
  std::stable_sort(per_queue_segments.begin(), per_queue_segments.end(),
                   [&](const Segment& a, const Segment& b) {
                     auto key = [&](const Segment& x) {
                       return x.workloads.empty() ? 0 : position[x.workloads.front()] + 1;
                     };
                     return key(a) < key(b);
                   });
  plan.segments = std::move(per_queue_segments);
  plan.first_segment_of_queue.assign(s.queues.size(), std::string::npos);
  plan.last_segment_of_queue.assign(s.queues.size(), std::string::npos);
  for (std::size_t i = 0; i < plan.segments.size(); ++i) {
    const std::size_t q = plan.segments[i].queue;
    if (plan.first_segment_of_queue[q] == std::string::npos) plan.first_segment_of_queue[q] = i;
    plan.last_segment_of_queue[q] = i;
  }
  return plan;
}

}  // namespace gpuoverlap
