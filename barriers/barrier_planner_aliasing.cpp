// Textures that share a heap: the hand-overs (ALIASING barriers, or their enhanced form) that
// pass its memory from one texture to the next, and the rules of their order and queue.
#include <algorithm>
#include <string>

#include "barriers/barrier_planner_internal.h"

namespace gpuoverlap::barrier_planning {

// The textures of one heap are written and read on one queue: their hand-overs are recorded
// there, and a fence between queues would not order a hand-over against a use elsewhere.
std::string one_queue_per_heap(const std::string& heap) {
  return "the textures of heap '" + heap +
         "' are written and read on one queue, where their hand-overs are recorded";
}

// The hand-overs of every heap (TargetTransition), from the state each texture is left in
// by its last use. Contract: every write and read has been planned, so each texture's
// tracked subresource is where its last use left it.
void Planner::plan_aliasing() {
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
        if (texture == t && workloads_[reader].position > workloads_[*last].position) last = reader;
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
      } else if (workloads_[before.last_user].position >= workloads_[after.first_writer].position) {
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
void Planner::hand_over(std::size_t from, std::size_t to, std::size_t w, bool in_frame,
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

}  // namespace gpuoverlap::barrier_planning
