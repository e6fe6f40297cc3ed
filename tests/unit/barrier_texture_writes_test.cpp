// The barrier planner on writes into declared textures: where a texture starts the frame, the
// transition (or DISCARD) that brings a subresource back to its writer after a read, depth
// textures, dispatches and copies as writers, and the rules around a texture's writers.
#include <gtest/gtest.h>

#include "barrier_test_frames.h"
#include "barriers/barrier_planner.h"

namespace gpuoverlap::barrier_tests {
namespace {

// A depth pre-pass (a draw into a d32 texture) read by a dispatch on a compute queue, then
// drawn again over its read (with DISCARD, in the enhanced form).
TEST(Planner, ADepthBufferIsWrittenInDepthWriteAndReadAsAShaderResource) {
  const std::vector<PlannerWorkload> frame = {
      {"Z", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"SSAO", WorkloadKind::compute, 1, QueueType::compute, std::nullopt, 1},
      {"Z again", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0, true}, 2},
      {"R", WorkloadKind::compute, 0, QueueType::direct, std::nullopt, 3}};
  const std::vector<PlannerTexture> depth = {{"D", {1, 1}, "", true}};
  const std::vector<PlannerDependency> deps = {{0, 1, request(BarrierKind::legacy)},
                                               {1, 2, request(BarrierKind::legacy)},
                                               {2, 3, request(BarrierKind::legacy)}};
  // DISCARD is an enhanced barrier's flag.
  auto without_discard = frame;
  without_discard[2].target->discard = false;
  const auto legacy = plan_barriers(without_discard, deps, depth);
  EXPECT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  EXPECT_EQ(legacy.texture_start_states[0], D3D12_RESOURCE_STATE_DEPTH_WRITE);
  EXPECT_EQ(legacy.texture_start_layouts[0], D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE);
  // After the pre-pass, on its direct queue (a compute queue cannot name DEPTH_WRITE).
  const DependencyPlan& read = legacy.dependencies[0];
  EXPECT_EQ(read.barrier_queue, 0u);
  ASSERT_EQ(read.barriers.size(), 1u);
  const auto& t = std::get<D3D12_RESOURCE_BARRIER>(read.barriers[0].barrier);
  EXPECT_EQ(t.Transition.StateBefore, D3D12_RESOURCE_STATE_DEPTH_WRITE);
  EXPECT_EQ(t.Transition.StateAfter, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  // The second depth draw takes it back from the read.
  ASSERT_EQ(legacy.target_transitions.size(), 1u);
  const auto& back = std::get<D3D12_RESOURCE_BARRIER>(legacy.target_transitions[0].barrier);
  EXPECT_EQ(back.Transition.StateBefore, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  EXPECT_EQ(back.Transition.StateAfter, D3D12_RESOURCE_STATE_DEPTH_WRITE);

  auto enhanced_deps = deps;
  for (auto& d : enhanced_deps) d.request.kind = BarrierKind::enhanced;
  const auto enhanced = plan_barriers(frame, enhanced_deps, depth, BarrierKind::enhanced);
  EXPECT_TRUE(enhanced.findings.empty()) << enhanced.findings[0].finding.message;
  const auto& e = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[0].barriers[0].barrier));
  EXPECT_EQ(e.SyncBefore, D3D12_BARRIER_SYNC_DEPTH_STENCIL);
  EXPECT_EQ(e.AccessBefore, D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE);
  EXPECT_EQ(e.LayoutBefore, D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE);
  EXPECT_EQ(e.LayoutAfter, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  ASSERT_EQ(enhanced.target_transitions.size(), 1u);
  const auto& discard = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.target_transitions[0].barrier));
  EXPECT_EQ(discard.LayoutBefore, D3D12_BARRIER_LAYOUT_UNDEFINED);
  EXPECT_EQ(discard.LayoutAfter, D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE);
  EXPECT_EQ(discard.SyncAfter, D3D12_BARRIER_SYNC_DEPTH_STENCIL);
  EXPECT_EQ(discard.AccessAfter, D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE);
  EXPECT_EQ(discard.Flags, D3D12_TEXTURE_BARRIER_FLAG_DISCARD);
  EXPECT_EQ(enhanced.texture_final_layouts[0][0], D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
}

// D0 draws mip 0 of T, R (compute) reads it, D1 draws mip 0 again: the write after the read
// brings the mip back to RENDER_TARGET right before D1, from what R left, or with DISCARD.
TEST(Planner, ADrawAfterAReadOfItsSubresourceTransitionsItBackOrDiscardsIt) {
  std::vector<PlannerWorkload> frame = {
      {"D0", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"R", WorkloadKind::compute, 0, QueueType::direct, std::nullopt, 1},
      {"D1", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 2}};
  const std::vector<PlannerTexture> one = {{"T", {1, 1}}};
  const auto legacy =
      plan_barriers(frame, {{0, 1, request(BarrierKind::legacy)}}, one, BarrierKind::legacy);
  EXPECT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  ASSERT_EQ(legacy.target_transitions.size(), 1u);
  EXPECT_EQ(legacy.target_transitions[0].workload, 2u);
  const auto& back = std::get<D3D12_RESOURCE_BARRIER>(legacy.target_transitions[0].barrier);
  EXPECT_EQ(back.Transition.StateBefore, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  EXPECT_EQ(back.Transition.StateAfter, D3D12_RESOURCE_STATE_RENDER_TARGET);
  EXPECT_EQ(back.Transition.Subresource, 0u);

  auto texture_barrier = [](const BarrierPlan& plan) {
    return std::get<D3D12_TEXTURE_BARRIER>(
        std::get<EnhancedBarrier>(plan.target_transitions.at(0).barrier));
  };
  const auto kept =
      plan_barriers(frame, {{0, 1, request(BarrierKind::enhanced)}}, one, BarrierKind::enhanced);
  EXPECT_TRUE(kept.findings.empty()) << kept.findings[0].finding.message;
  const D3D12_TEXTURE_BARRIER from_read = texture_barrier(kept);
  EXPECT_EQ(from_read.LayoutBefore, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  EXPECT_EQ(from_read.AccessBefore, D3D12_BARRIER_ACCESS_SHADER_RESOURCE);
  EXPECT_EQ(from_read.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(from_read.LayoutAfter, D3D12_BARRIER_LAYOUT_RENDER_TARGET);
  EXPECT_EQ(from_read.AccessAfter, D3D12_BARRIER_ACCESS_RENDER_TARGET);
  EXPECT_EQ(from_read.SyncAfter, D3D12_BARRIER_SYNC_RENDER_TARGET);
  EXPECT_EQ(from_read.Flags, D3D12_TEXTURE_BARRIER_FLAG_NONE);
  EXPECT_EQ(from_read.Subresources.IndexOrFirstMipLevel, 0u);
  EXPECT_EQ(from_read.Subresources.NumMipLevels, 1u);

  // DISCARD: from UNDEFINED with no access, still after the reader's work (a write after a
  // read needs the execution order only).
  frame[2].target->discard = true;
  const auto discarded =
      plan_barriers(frame, {{0, 1, request(BarrierKind::enhanced)}}, one, BarrierKind::enhanced);
  EXPECT_TRUE(discarded.findings.empty()) << discarded.findings[0].finding.message;
  const D3D12_TEXTURE_BARRIER discard = texture_barrier(discarded);
  EXPECT_EQ(discard.LayoutBefore, D3D12_BARRIER_LAYOUT_UNDEFINED);
  EXPECT_EQ(discard.AccessBefore, D3D12_BARRIER_ACCESS_NO_ACCESS);
  EXPECT_EQ(discard.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(discard.Flags, D3D12_TEXTURE_BARRIER_FLAG_DISCARD);
  // Legacy barriers have no DISCARD: the finding names the draw.
  const auto refused =
      plan_barriers(frame, {{0, 1, request(BarrierKind::legacy)}}, one, BarrierKind::legacy);
  ASSERT_TRUE(plan_has(refused, "discard-legacy"));
  EXPECT_EQ(refused.findings[0].draw, std::optional<std::size_t>{2});

  // Nothing read between two draws: the first one's work is lost.
  frame[2].target->discard = false;
  EXPECT_TRUE(plan_has(plan_barriers(frame, {}, one), "target-rewrite"));
  // The read's barrier recorded on another queue than the second draw's.
  frame[2].queue = 1;
  frame[1].queue = 1;
  EXPECT_TRUE(
      plan_has(plan_barriers(frame, {{0, 1, request(BarrierKind::legacy)}}, one), "target-queue"));
}

// A render target read, then written as an unordered-access texture by a dispatch, then read
// by a draw (render target to shader resource to UAV): D0 draws mip 0, C reads it and writes
// mip 1, which P reads. Mip 1 starts the frame in RENDER_TARGET (a draw renders into the
// texture), so C needs it in UNORDERED_ACCESS first; P's barrier moves it on from there.
TEST(Planner, ADispatchWritesATextureInUnorderedAccessAndItsReaderTransitionsFromThere) {
  const std::vector<PlannerWorkload> frame = {
      {"D0", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"C", WorkloadKind::compute, 0, QueueType::direct, TextureTarget{0, 1, 0}, 1},
      {"P", WorkloadKind::graphics, 0, QueueType::direct, std::nullopt, 2}};
  const std::vector<PlannerTexture> two_mips = {{"T", {2, 1}}};
  const auto legacy = plan_barriers(
      frame, {{0, 1, request(BarrierKind::legacy)}, {1, 2, request(BarrierKind::legacy)}}, two_mips,
      BarrierKind::legacy);
  EXPECT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  EXPECT_EQ(legacy.texture_start_layouts,
            std::vector<D3D12_BARRIER_LAYOUT>{D3D12_BARRIER_LAYOUT_RENDER_TARGET});
  ASSERT_EQ(legacy.target_transitions.size(), 1u);
  EXPECT_EQ(legacy.target_transitions[0].workload, 1u);
  const auto& to_uav = std::get<D3D12_RESOURCE_BARRIER>(legacy.target_transitions[0].barrier);
  EXPECT_EQ(to_uav.Transition.Subresource, 1u);
  EXPECT_EQ(to_uav.Transition.StateBefore, D3D12_RESOURCE_STATE_RENDER_TARGET);
  EXPECT_EQ(to_uav.Transition.StateAfter, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  const DependencyPlan& read = legacy.dependencies[1];
  EXPECT_EQ(read.resource, ResourceKind::texture);
  EXPECT_EQ(read.texture, std::optional<std::size_t>{0});
  ASSERT_EQ(read.barriers.size(), 1u);
  const auto& to_srv = std::get<D3D12_RESOURCE_BARRIER>(read.barriers[0].barrier);
  EXPECT_EQ(to_srv.Transition.Subresource, 1u);
  EXPECT_EQ(to_srv.Transition.StateBefore, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  EXPECT_EQ(to_srv.Transition.StateAfter, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE);

  const auto enhanced = plan_barriers(
      frame, {{0, 1, request(BarrierKind::enhanced)}, {1, 2, request(BarrierKind::enhanced)}},
      two_mips, BarrierKind::enhanced);
  EXPECT_TRUE(enhanced.findings.empty()) << enhanced.findings[0].finding.message;
  const auto& uav = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.target_transitions.at(0).barrier));
  EXPECT_EQ(uav.LayoutBefore, D3D12_BARRIER_LAYOUT_RENDER_TARGET);
  EXPECT_EQ(uav.LayoutAfter, D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS);
  // Mip 1 is untouched since the frame start: the dispatch waits for no draw before it.
  EXPECT_EQ(uav.SyncBefore, D3D12_BARRIER_SYNC_NONE);
  EXPECT_EQ(uav.AccessBefore, D3D12_BARRIER_ACCESS_NO_ACCESS);
  EXPECT_EQ(uav.SyncAfter, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(uav.AccessAfter, D3D12_BARRIER_ACCESS_UNORDERED_ACCESS);
  const auto& srv = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[1].barriers.at(0).barrier));
  EXPECT_EQ(srv.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(srv.AccessBefore, D3D12_BARRIER_ACCESS_UNORDERED_ACCESS);
  EXPECT_EQ(srv.LayoutBefore, D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS);
  EXPECT_EQ(srv.LayoutAfter, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  EXPECT_EQ(srv.SyncAfter, D3D12_BARRIER_SYNC_PIXEL_SHADING);

  // A texture only dispatches write starts the frame in UNORDERED_ACCESS: no transition
  // before the first write, which a compute queue may hold.
  const std::vector<PlannerWorkload> async = {
      {"C", WorkloadKind::compute, 0, QueueType::compute, TextureTarget{0, 0, 0}, 0},
      {"R", WorkloadKind::compute, 0, QueueType::compute, std::nullopt, 1}};
  const auto compute_only = plan_barriers(async, {{0, 1, request(BarrierKind::enhanced)}},
                                          {{"U", {1, 1}}}, BarrierKind::enhanced);
  EXPECT_TRUE(compute_only.findings.empty()) << compute_only.findings[0].finding.message;
  EXPECT_TRUE(compute_only.target_transitions.empty());
  EXPECT_EQ(compute_only.texture_start_layouts,
            std::vector<D3D12_BARRIER_LAYOUT>{D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS});
  EXPECT_EQ(compute_only.texture_start_states,
            std::vector<D3D12_RESOURCE_STATES>{D3D12_RESOURCE_STATE_UNORDERED_ACCESS});
  EXPECT_EQ(compute_only.texture_unordered_access, std::vector<bool>{true});
  EXPECT_EQ(plan_barriers(mip_chain(2), {}, kChain).texture_unordered_access,
            std::vector<bool>{false});
  // Two dispatches into one subresource with no read between: the first write is lost.
  const std::vector<PlannerWorkload> twice = {
      {"C0", WorkloadKind::compute, 0, QueueType::compute, TextureTarget{0, 0, 0}, 0},
      {"C1", WorkloadKind::compute, 0, QueueType::compute, TextureTarget{0, 0, 0}, 1}};
  EXPECT_TRUE(plan_has(plan_barriers(twice, {}, {{"U", {1, 1}}}), "target-rewrite"));
}

// The rules around a texture's writers: a second write with nothing read between is refused
// whatever the writers' kinds; a workload cannot read its own target; a texture restored on a
// compute queue cannot be left in a graphics state; a texture no dispatch writes has no
// UNORDERED_ACCESS layout; and the start state belongs to the writers' queue, whichever index
// it has.
TEST(Planner, TextureWritersRules) {
  const std::vector<PlannerTexture> two_mips = {{"T", {2, 1}}};
  // A draw into mip 0, then a dispatch into it with no read between.
  const std::vector<PlannerWorkload> draw_then_dispatch = {
      {"D", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"C", WorkloadKind::compute, 0, QueueType::direct, TextureTarget{0, 0, 0}, 1}};
  EXPECT_TRUE(plan_has(plan_barriers(draw_then_dispatch, {}, two_mips), "target-rewrite"));
  // C reads mip 0 and writes it: feedback; writing mip 1 instead is fine.
  auto feedback =
      plan_barriers(draw_then_dispatch, {{0, 1, request(BarrierKind::legacy)}}, two_mips);
  EXPECT_TRUE(plan_has(feedback, "target-feedback"));
  auto other_mip = draw_then_dispatch;
  other_mip[1].target->mip = 1;
  const auto fine = plan_barriers(other_mip, {{0, 1, request(BarrierKind::legacy)}}, two_mips);
  EXPECT_TRUE(fine.findings.empty()) << fine.findings[0].finding.message;
  // The writers on queue 1 (a compute queue declared first is queue 0): no false target-queue.
  auto on_queue_1 = other_mip;
  for (PlannerWorkload& w : on_queue_1) w.queue = 1;
  for (const BarrierKind kind : {BarrierKind::legacy, BarrierKind::enhanced}) {
    const auto plan = plan_barriers(on_queue_1, {{0, 1, request(kind)}}, two_mips, kind);
    EXPECT_TRUE(plan.findings.empty()) << plan.findings[0].finding.message;
    EXPECT_EQ(plan.target_transitions.size(), 1u);
  }
  // A dispatch on a compute queue writes the texture; a draw on the direct queue reads it
  // (PIXEL_SHADER_RESOURCE), which the compute queue cannot restore next frame.
  const std::vector<PlannerWorkload> async = {
      {"C", WorkloadKind::compute, 1, QueueType::compute, TextureTarget{0, 0, 0}, 0},
      {"P", WorkloadKind::graphics, 0, QueueType::direct, std::nullopt, 1}};
  const auto restore =
      plan_barriers(async, {{0, 1, request(BarrierKind::legacy)}}, {{"U", {1, 1}}});
  ASSERT_TRUE(plan_has(restore, "texture-restore-queue"));
  EXPECT_EQ(restore.findings[0].draw, std::optional<std::size_t>{0});
  // Read by a dispatch on the direct queue instead: NON_PIXEL_SHADER_RESOURCE, which it can.
  auto async_dispatch = async;
  async_dispatch[1].kind = WorkloadKind::compute;
  const auto restorable =
      plan_barriers(async_dispatch, {{0, 1, request(BarrierKind::legacy)}}, {{"U", {1, 1}}});
  EXPECT_TRUE(restorable.findings.empty()) << restorable.findings[0].finding.message;
  // LayoutAfter UNORDERED_ACCESS on a texture only draws write.
  auto to_uav = request(BarrierKind::enhanced);
  to_uav.layout_after = D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS;
  to_uav.access_after = D3D12_BARRIER_ACCESS_UNORDERED_ACCESS;
  to_uav.reads_output = false;
  EXPECT_TRUE(plan_has(plan_barriers(mip_chain(2), {{0, 1, to_uav}}, kChain, BarrierKind::enhanced),
                       "resource-state"));
}

// W0 writes mip 0 of an r32f texture, M writes mip 1, W1 writes mip 0 again without reading
// it: a UAV barrier (legacy: the whole texture) or an enhanced TEXTURE barrier UNORDERED_ACCESS
// -> UNORDERED_ACCESS on mip 0 alone orders the two writes; without one the first is lost.
TEST(Planner, AUavBarrierOrdersTwoWritesOfOneTextureSubresource) {
  const std::vector<PlannerWorkload> frame = {
      {"W0", WorkloadKind::compute, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"M", WorkloadKind::compute, 0, QueueType::direct, TextureTarget{0, 1, 0}, 1},
      {"W1", WorkloadKind::compute, 0, QueueType::direct, TextureTarget{0, 0, 0}, 2}};
  const std::vector<PlannerTexture> two_mips = {{"T", {2, 1}}};
  auto not_read = [](BarrierKind kind) {
    BarrierRequest r = request(kind);
    r.reads_output = false;
    return r;
  };
  const auto legacy = plan_barriers(frame, {{0, 2, not_read(BarrierKind::uav)}}, two_mips);
  ASSERT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  ASSERT_EQ(legacy.dependencies[0].barriers.size(), 1u);
  const auto& uav = std::get<D3D12_RESOURCE_BARRIER>(legacy.dependencies[0].barriers[0].barrier);
  EXPECT_EQ(uav.Type, D3D12_RESOURCE_BARRIER_TYPE_UAV);
  EXPECT_TRUE(legacy.target_transitions.empty());  // mip 0 stays in UNORDERED_ACCESS

  const auto enhanced = plan_barriers(frame, {{0, 2, not_read(BarrierKind::enhanced)}}, two_mips,
                                      BarrierKind::enhanced);
  ASSERT_TRUE(enhanced.findings.empty()) << enhanced.findings[0].finding.message;
  const auto& t = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[0].barriers.at(0).barrier));
  EXPECT_EQ(t.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(t.SyncAfter, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(t.AccessBefore, D3D12_BARRIER_ACCESS_UNORDERED_ACCESS);
  EXPECT_EQ(t.AccessAfter, D3D12_BARRIER_ACCESS_UNORDERED_ACCESS);
  EXPECT_EQ(t.LayoutBefore, D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS);
  EXPECT_EQ(t.LayoutAfter, D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS);
  EXPECT_EQ(t.Subresources.IndexOrFirstMipLevel, 0u);
  EXPECT_EQ(t.Subresources.NumMipLevels, 1u);
  EXPECT_TRUE(enhanced.target_transitions.empty());

  // Nothing between the writes: the first one's work would be lost unmeasured.
  EXPECT_TRUE(plan_has(plan_barriers(frame, {}, two_mips), "target-rewrite"));
  // A UAV barrier cannot make the subresource readable, nor order a write of another mip.
  EXPECT_TRUE(
      plan_has(plan_barriers(frame, {{0, 2, request(BarrierKind::uav)}}, two_mips), "uav-texture"));
  EXPECT_TRUE(plan_has(plan_barriers(frame, {{0, 1, not_read(BarrierKind::uav)}}, two_mips),
                       "uav-texture"));
  // A render target is not in UNORDERED_ACCESS.
  std::vector<PlannerWorkload> drawn = frame;
  drawn[0].kind = WorkloadKind::graphics;
  EXPECT_TRUE(
      plan_has(plan_barriers(drawn, {{0, 2, not_read(BarrierKind::uav)}}, two_mips), "uav-state"));
}

// A copy into a declared texture's subresource on a compute queue, read by a dispatch there:
// the texture starts the frame in COPY_DEST (where only copies write it, a state a compute
// queue can hold and restore), and its reader's barrier leaves COPY_DEST.
TEST(Planner, ACopyIntoATextureLeavesItInCopyDestForItsReader) {
  const std::vector<PlannerWorkload> frame = {
      {"U", WorkloadKind::copy, 0, QueueType::compute, TextureTarget{0, 0, 0}, 0},
      {"R", WorkloadKind::compute, 0, QueueType::compute, std::nullopt, 1}};
  const std::vector<PlannerTexture> one = {{"T", {1, 1}}};
  const auto legacy = plan_barriers(frame, {{0, 1, request(BarrierKind::legacy)}}, one);
  ASSERT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  EXPECT_EQ(legacy.texture_copy_destination, std::vector<bool>{true});
  EXPECT_EQ(legacy.texture_unordered_access, std::vector<bool>{false});
  EXPECT_EQ(legacy.texture_start_states,
            std::vector<D3D12_RESOURCE_STATES>{D3D12_RESOURCE_STATE_COPY_DEST});
  EXPECT_TRUE(legacy.target_transitions.empty());  // it starts where the copy writes it
  const auto& t = std::get<D3D12_RESOURCE_BARRIER>(legacy.dependencies[0].barriers.at(0).barrier);
  EXPECT_EQ(t.Transition.StateBefore, D3D12_RESOURCE_STATE_COPY_DEST);
  EXPECT_EQ(t.Transition.StateAfter, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  const auto enhanced =
      plan_barriers(frame, {{0, 1, request(BarrierKind::enhanced)}}, one, BarrierKind::enhanced);
  ASSERT_TRUE(enhanced.findings.empty()) << enhanced.findings[0].finding.message;
  const auto& e = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[0].barriers.at(0).barrier));
  EXPECT_EQ(e.SyncBefore, D3D12_BARRIER_SYNC_COPY);
  EXPECT_EQ(e.AccessBefore, D3D12_BARRIER_ACCESS_COPY_DEST);
  EXPECT_EQ(e.LayoutBefore, D3D12_BARRIER_LAYOUT_COPY_DEST);
  EXPECT_EQ(e.LayoutAfter, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  // Drawn too, the texture starts in RENDER_TARGET: the copy's target transition takes it to
  // COPY_DEST first.
  std::vector<PlannerWorkload> drawn_too = frame;
  for (auto& w : drawn_too) w.queue_type = QueueType::direct;
  drawn_too.push_back(
      {"D", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 2});
  const auto both = plan_barriers(drawn_too, {{0, 1, request(BarrierKind::legacy)}}, one);
  ASSERT_TRUE(both.findings.empty()) << both.findings[0].finding.message;
  ASSERT_EQ(both.target_transitions.size(), 2u);
  const auto& to_copy = std::get<D3D12_RESOURCE_BARRIER>(both.target_transitions[0].barrier);
  EXPECT_EQ(to_copy.Transition.StateBefore, D3D12_RESOURCE_STATE_RENDER_TARGET);
  EXPECT_EQ(to_copy.Transition.StateAfter, D3D12_RESOURCE_STATE_COPY_DEST);
}

}  // namespace
}  // namespace gpuoverlap::barrier_tests
