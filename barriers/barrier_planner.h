// From the scenario's barrier requests to the D3D12 barriers each dependency records, with
// every default derived and every rule checked (barrier_rules.h), before any GPU work.
//
// The planner tracks the state (legacy) and layout/access (enhanced) of each producer's output
// through the frame, in execution order, as D3D12's debug layer does: a second consumer of an
// output already in a readable state needs no barrier (recorded as a note), a StateBefore or
// LayoutBefore that differs from the tracked one is an error. At the end of the frame each
// render target goes back to RENDER_TARGET, and each declared texture to its start layout (the
// executor does that before the next frame), except textures that share a heap: their
// hand-overs bring them in and out (TargetTransition).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "barriers/barrier_model.h"
#include "barriers/barrier_rules.h"
#include "resources/texture.h"

namespace gpuoverlap {

struct PlannerWorkload {
  std::string name;
  WorkloadKind kind = WorkloadKind::compute;
  std::size_t queue = 0;
  QueueType queue_type = QueueType::direct;
  // A draw into (or a dispatch's unordered-access write of, or a copy into) a declared
  // texture's subresource: its output, instead of its own render target or buffer.
  std::optional<TextureTarget> target;
  // Its place in the frame's execution order (scenarios/frame_plan.h): when it draws, against
  // the barriers recorded before and after it.
  std::size_t position = 0;
};

// A declared texture ([[texture]]): its name for messages and its subresources.
struct PlannerTexture {
  std::string name;
  TextureExtent extent;
  // The heap it shares with other textures (resources/texture.h); empty: memory of its own.
  std::string heap;
  // A depth texture (d32): a draw writes it in DEPTH_WRITE (layout DEPTH_STENCIL_WRITE)
  // instead of RENDER_TARGET.
  bool depth = false;
};

struct PlannerDependency {
  std::size_t producer = 0;
  std::size_t consumer = 0;
  BarrierRequest request;
};

enum class Placement { after_producer, before_consumer };

struct PlacedBarrier {
  Placement placement = Placement::before_consumer;
  D3D12Barrier barrier;
};

struct DependencyPlan {
  std::size_t producer = 0, consumer = 0;
  BarrierKind kind = BarrierKind::legacy;
  SplitPolicy split_policy = SplitPolicy::event;
  bool cross_queue = false;       // producer and consumer on different queues: a fence joins them
  std::size_t barrier_queue = 0;  // the scenario queue whose command list records the barriers
  QueueType barrier_queue_type = QueueType::direct;
  bool reads_output = true;  // the consumer (its shader, or a readback copy) reads the output
  ResourceKind resource = ResourceKind::buffer;  // the producer's output
  // The declared texture the producer rendered into (index into the planner's textures); none:
  // the producer's own output.
  std::optional<std::size_t> texture;
  TextureExtent extent;  // a texture's mips and slices
  // The subresources the barriers cover, where the dependency names them (textures only);
  // none: all of them.
  std::optional<SubresourceRange> subresources;
  // A texture's layout when the consumer reads it (what its descriptor must name).
  D3D12_BARRIER_LAYOUT layout_at_consumer = D3D12_BARRIER_LAYOUT_UNDEFINED;
  std::vector<PlacedBarrier> barriers;  // in recording order
  std::string note;                     // why no barrier was recorded, when none was
};

// A write into a declared texture's subresource that a read (or the frame start) left in
// another state: the barrier that brings it to the writer's layout, RENDER_TARGET for a draw
// (DEPTH_STENCIL_WRITE into a depth texture), UNORDERED_ACCESS for a dispatch and COPY_DEST for
// a copy, recorded right before the writer on its queue (a write
// after a read). Legacy: a TRANSITION of that subresource from the state the read
// left; enhanced: a TEXTURE barrier from the reader's sync, access and layout, or, for a
// target that discards, from UNDEFINED with NO_ACCESS and D3D12_TEXTURE_BARRIER_FLAG_DISCARD.
//
// An aliasing hand-over is recorded the same way, before the first write into a texture that
// shares a heap (see BarrierPlan::texture_aliased), as barriers on the texture that held the
// heap and on the one that takes it:
//   legacy:   a TRANSITION of the holder back to its start state (where it waits while
//             inactive), then an ALIASING barrier from it to the new texture; the D3D12 backend
//             then discards the new texture (DiscardResource), which D3D12 requires of a newly
//             activated render target or depth stencil (every declared texture is one);
//   enhanced: the holder from its last sync and access to SYNC_NONE / NO_ACCESS (its layout
//             kept), then the new texture from NO_ACCESS and LAYOUT_UNDEFINED to its start
//             layout with DISCARD, waiting for the holder's last sync.
// Contract (the parser's rules): every texture of a heap has one subresource and a writer.
struct TargetTransition {
  std::size_t workload = 0;  // the draw, dispatch or copy that writes the subresource
  std::size_t texture = 0;   // index into the planner's textures: the resource it names
  D3D12Barrier barrier;      // its resource left null: `texture`, filled in by the backend
  // Set on the barrier that activates `texture` in an aliasing hand-over (both forms): the
  // texture that held the heap (an ALIASING barrier's pResourceBefore).
  std::optional<std::size_t> aliasing_from;
  // Legacy ALIASING barrier only: the layout the activated texture rests in while inactive
  // (its start layout), where a translation that must name layouts (Vulkan) brings it from
  // UNDEFINED; the enhanced form names it as its LayoutAfter.
  D3D12_BARRIER_LAYOUT aliasing_layout = D3D12_BARRIER_LAYOUT_UNDEFINED;
  // Enhanced activation only: the holder's last access (its release barrier's AccessBefore).
  // D3D12 orders the release's flush before the activation; a translation whose barriers do
  // not chain through SYNC_NONE (Vulkan) makes the holder's last writes available in the
  // activation's own first scope instead.
  D3D12_BARRIER_ACCESS aliasing_access = D3D12_BARRIER_ACCESS_NO_ACCESS;
};

struct BarrierPlanFinding {
  std::size_t dependency = 0;  // index into the planner's input dependencies
  BarrierFinding finding;
  // A finding about a draw's target (target-*, discard-*): that draw; `dependency` is then
  // meaningless.
  std::optional<std::size_t> draw;
};

struct BarrierPlan {
  std::vector<DependencyPlan> dependencies;  // same order as the input
  std::vector<BarrierPlanFinding> findings;  // errors and warnings
  // Per workload: the layout its render target ends the frame in (UNDEFINED for buffers);
  // the executor brings it back to RENDER_TARGET before the next frame.
  std::vector<D3D12_BARRIER_LAYOUT> final_layouts;
  // Per declared texture, per subresource (subresource_index order): the layout and the
  // legacy state it ends the frame in; the executor brings each back to its start layout
  // (an aliased texture excepted: texture_aliased).
  std::vector<std::vector<D3D12_BARRIER_LAYOUT>> texture_final_layouts;
  std::vector<std::vector<D3D12_RESOURCE_STATES>> texture_final_states;
  // Per declared texture: where every subresource starts the frame (the executor restores it
  // there, on the queue of the texture's writers). RENDER_TARGET where a draw renders into the
  // texture or nothing writes it; UNORDERED_ACCESS where dispatches and no draws write it;
  // COPY_DEST where only copies do (a compute queue can hold both).
  std::vector<D3D12_BARRIER_LAYOUT> texture_start_layouts;
  std::vector<D3D12_RESOURCE_STATES> texture_start_states;
  // Per declared texture: a dispatch writes it, so the backends create it for unordered access
  // (a Vulkan storage image, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS); the others go without.
  std::vector<bool> texture_unordered_access;
  // Per declared texture: a copy writes it, so the backends create it as a copy's destination
  // (a Vulkan TRANSFER_DST image).
  std::vector<bool> texture_copy_destination;
  // Per declared texture: placed in a heap with others, so it holds the memory only between
  // the hand-over that activates it and the one that hands the heap on. The executor never
  // restores it at a frame start (that would write memory another texture holds).
  std::vector<bool> texture_aliased;
  // Per declared texture: the aliased texture that holds its heap when a frame starts (the
  // one the frame activates last; the frame's first hand-over takes the heap from it). The
  // backends create it in texture_final_states (before the first frame it is where the
  // hand-over expects it); every other aliased texture starts in texture_start_states.
  std::vector<bool> texture_holds_heap_at_start;
  std::vector<TargetTransition> target_transitions;  // in execution order of their writers
  bool has_errors() const;
};

// Where a cross-queue dependency records its barrier: on the producer's queue, right after the
// producer and before its fence is signalled, when the output is a render target (its layout
// belongs to the producer's queue) or the consumer is on a compute queue (which cannot touch
// graphics states); otherwise on the consumer's queue, right after the fence wait.
bool barrier_after_producer(const PlannerWorkload& producer, const PlannerWorkload& consumer);

// `dependencies` must be in recording order of their barriers: a barrier recorded after its
// producer (barrier_after_producer, split BEGIN halves aside) sorts right after that producer,
// any other right before its consumer, in an execution order of the workloads
// (scenarios/frame_plan.h computes it). A cross-queue dependency may not be split (events do
// not cross queues).
// Every subresource of a declared texture starts the frame where its writers write it
// (BarrierPlan::texture_start_layouts); a draw into one
// that a read left in another state gets a TargetTransition of kind `target_barrier` (legacy
// or enhanced; split kinds as their whole form), and a barrier on a texture covers the
// subresource its producer drew (by default just that one) in one state (subresource-states).
// Rules: a draw may not rewrite a subresource nothing read since the last draw
// (target-rewrite), nor one whose last reader ran on another queue (target-queue); DISCARD
// needs enhanced barriers (discard-legacy). Textures of one heap are used one after another in
// the frame (heap-overlap), on one queue (heap-queue).
BarrierPlan plan_barriers(const std::vector<PlannerWorkload>& workloads,
                          const std::vector<PlannerDependency>& dependencies,
                          const std::vector<PlannerTexture>& textures = {},
                          BarrierKind target_barrier = BarrierKind::legacy);

}  // namespace gpuoverlap
