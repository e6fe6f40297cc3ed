// The barrier planner's internals, shared by the files it is split over (barrier_planner.cpp,
// barrier_planner_states.cpp, _kinds, _subresources, _targets, _aliasing). Internal to
// barriers/, not part of the API: plan_barriers (barrier_planner.h) is.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "barriers/barrier_model.h"
#include "barriers/barrier_planner.h"
#include "barriers/barrier_rules.h"

namespace gpuoverlap::barrier_planning {

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

// How a consumer reads a producer's output: a shader reads a shader resource, a copy (a
// readback) reads a copy source.
struct ConsumerRead {
  D3D12_RESOURCE_STATES state;
  D3D12_BARRIER_SYNC sync;
  D3D12_BARRIER_ACCESS access = D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
  D3D12_BARRIER_LAYOUT layout = D3D12_BARRIER_LAYOUT_SHADER_RESOURCE;  // a texture's
};

struct EnhancedFields {
  D3D12_BARRIER_TYPE type;
  D3D12_BARRIER_SYNC sync_before, sync_after;
  D3D12_BARRIER_ACCESS access_before, access_after;
  D3D12_BARRIER_LAYOUT layout_before, layout_after;
};

// barrier_planner_states.cpp
TrackedResource written_by(WorkloadKind writer, ResourceKind resource, bool depth);
TrackedResource after_producer(const PlannerWorkload& w,
                               const std::vector<PlannerTexture>& textures);
ConsumerRead read_by(WorkloadKind consumer);
bool readable_by(const ConsumerRead& read, D3D12_BARRIER_LAYOUT layout);
std::vector<BarrierFinding> check(const EnhancedFields& f, QueueType queue, ResourceKind resource,
                                  bool unordered_access);
bool rewrites_subresource(const PlannerWorkload& producer, const PlannerWorkload& consumer);
EnhancedBarrier make_enhanced(const EnhancedFields& f,
                              const std::optional<SubresourceRange>& range);

// barrier_planner_aliasing.cpp
std::string one_queue_per_heap(const std::string& heap);

// One plan_barriers call: the state of every output and texture subresource through the frame,
// in execution order, and the plan it fills.
class Planner {
 public:
  Planner(const std::vector<PlannerWorkload>& workloads,
          const std::vector<PlannerDependency>& dependencies,
          const std::vector<PlannerTexture>& textures, BarrierKind target_barrier,
          BarrierPlan& plan);

  void add(std::size_t index, const PlannerDependency& d);
  void finish();

 private:
  // barrier_planner.cpp
  void target_error(std::size_t draw, std::string rule, std::string message);
  void error(std::string rule, std::string message);
  void warning(std::string rule, std::string message);
  void add_findings(const std::vector<BarrierFinding>& findings);

  // barrier_planner_kinds.cpp
  void plan_uav(TrackedResource& r, DependencyPlan& out, Placement at);
  void plan_legacy(const PlannerDependency& d, TrackedResource& r, const ConsumerRead& read,
                   DependencyPlan& out, Placement at);
  void plan_enhanced(const PlannerDependency& d, TrackedResource& r, const ConsumerRead& read,
                     DependencyPlan& out, Placement at);
  void check_depth_match(const DependencyPlan& out, const std::string& said, bool depth_named,
                         bool render_target_named);

  // barrier_planner_subresources.cpp
  void resolve_subresources(const SubresourceRequest& q, DependencyPlan& out);
  std::vector<TrackedResource*> covered_subresources(const DependencyPlan& out);
  void check_split_range(const DependencyPlan& out);

  // barrier_planner_targets.cpp
  void write_until(std::size_t key);
  void transition_target(std::size_t w, const TrackedResource& sub, const TrackedResource& written,
                         const std::string& where);
  bool done_before(std::size_t reader, std::size_t w) const;
  void finish_read(TrackedResource& r, const DependencyPlan& out, const PlannerWorkload& c);

  // barrier_planner_aliasing.cpp
  void plan_aliasing();
  void hand_over(std::size_t from, std::size_t to, std::size_t w, bool in_frame,
                 std::vector<TargetTransition>& out);

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

}  // namespace gpuoverlap::barrier_planning
