// The barrier planner on textures that share a heap: the hand-overs before each first write
// (legacy ALIASING, or the enhanced release and DISCARD activation) and the rules of their
// order and queue.
#include <gtest/gtest.h>

#include "barrier_test_frames.h"
#include "barriers/barrier_planner.h"

namespace gpuoverlap::barrier_tests {
namespace {

// Two render targets in one heap: D0 draws A, R0 reads it, D1 draws B (same memory), R1 reads
// it. Before D1 the heap goes from A to B, and before D0 (the next frame) from B back to A.
std::vector<PlannerWorkload> aliased_frame() {
  return {{"D0", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
          {"R0", WorkloadKind::compute, 0, QueueType::direct, std::nullopt, 1},
          {"D1", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{1, 0, 0}, 2},
          {"R1", WorkloadKind::compute, 0, QueueType::direct, std::nullopt, 3}};
}
const std::vector<PlannerTexture> kHeap = {{"A", {1, 1}, "h"}, {"B", {1, 1}, "h"}};
const std::vector<PlannerDependency> kAliasedReads = {{0, 1, {BarrierKind::legacy}},
                                                      {2, 3, {BarrierKind::legacy}}};

TEST(Planner, TexturesOfOneHeapAreHandedOverBeforeEachFirstWrite) {
  const auto legacy = plan_barriers(aliased_frame(), kAliasedReads, kHeap, BarrierKind::legacy);
  ASSERT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  EXPECT_EQ(legacy.texture_aliased, (std::vector<bool>{true, true}));
  // B is activated last in the frame: it holds the heap when the next one starts.
  EXPECT_EQ(legacy.texture_holds_heap_at_start, (std::vector<bool>{false, true}));
  // Legacy, per hand-over: the holder back to RENDER_TARGET from its reader's state, then
  // ALIASING to the new texture; D0's hand-over first (it runs first).
  ASSERT_EQ(legacy.target_transitions.size(), 4u);
  const std::size_t writers[] = {0, 0, 2, 2};
  const std::size_t textures[] = {1, 0, 0, 1};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(legacy.target_transitions[i].workload, writers[i]) << i;
    EXPECT_EQ(legacy.target_transitions[i].texture, textures[i]) << i;
  }
  for (const std::size_t i : {0u, 2u}) {
    const auto& back = std::get<D3D12_RESOURCE_BARRIER>(legacy.target_transitions[i].barrier);
    EXPECT_EQ(back.Type, D3D12_RESOURCE_BARRIER_TYPE_TRANSITION);
    EXPECT_EQ(back.Transition.StateBefore, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
    EXPECT_EQ(back.Transition.StateAfter, D3D12_RESOURCE_STATE_RENDER_TARGET);
    EXPECT_FALSE(legacy.target_transitions[i].aliasing_from);
  }
  for (const std::size_t i : {1u, 3u}) {
    const auto& aliasing = std::get<D3D12_RESOURCE_BARRIER>(legacy.target_transitions[i].barrier);
    EXPECT_EQ(aliasing.Type, D3D12_RESOURCE_BARRIER_TYPE_ALIASING);
    EXPECT_EQ(legacy.target_transitions[i].aliasing_from, textures[i - 1]);
    EXPECT_EQ(legacy.target_transitions[i].aliasing_layout, D3D12_BARRIER_LAYOUT_RENDER_TARGET);
    EXPECT_EQ(describe(legacy.target_transitions[i].barrier), "ALIASING");
  }
  // A rests in RENDER_TARGET after its hand-over; B ends the frame where its reader left it,
  // which is where the next frame's first hand-over takes it from.
  EXPECT_EQ(legacy.texture_final_states[0][0], D3D12_RESOURCE_STATE_RENDER_TARGET);
  EXPECT_EQ(legacy.texture_final_states[1][0], D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);

  // Enhanced: the holder to SYNC_NONE / NO_ACCESS in its layout, the new texture from
  // UNDEFINED with DISCARD after the holder's last work.
  std::vector<PlannerDependency> enhanced_reads = kAliasedReads;
  for (auto& d : enhanced_reads) d.request.kind = BarrierKind::enhanced;
  const auto enhanced =
      plan_barriers(aliased_frame(), enhanced_reads, kHeap, BarrierKind::enhanced);
  ASSERT_TRUE(enhanced.findings.empty()) << enhanced.findings[0].finding.message;
  ASSERT_EQ(enhanced.target_transitions.size(), 4u);
  const auto texture = [&](std::size_t i) {
    return std::get<D3D12_TEXTURE_BARRIER>(
        std::get<EnhancedBarrier>(enhanced.target_transitions[i].barrier));
  };
  const D3D12_TEXTURE_BARRIER release = texture(2), acquire = texture(3);
  EXPECT_EQ(enhanced.target_transitions[2].texture, 0u);
  EXPECT_EQ(release.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(release.AccessBefore, D3D12_BARRIER_ACCESS_SHADER_RESOURCE);
  EXPECT_EQ(release.SyncAfter, D3D12_BARRIER_SYNC_NONE);
  EXPECT_EQ(release.AccessAfter, D3D12_BARRIER_ACCESS_NO_ACCESS);
  EXPECT_EQ(release.LayoutBefore, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  EXPECT_EQ(release.LayoutAfter, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  EXPECT_EQ(enhanced.target_transitions[3].texture, 1u);
  EXPECT_EQ(enhanced.target_transitions[3].aliasing_from, std::optional<std::size_t>{0});
  EXPECT_EQ(acquire.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(acquire.AccessBefore, D3D12_BARRIER_ACCESS_NO_ACCESS);
  EXPECT_EQ(acquire.LayoutBefore, D3D12_BARRIER_LAYOUT_UNDEFINED);
  EXPECT_EQ(acquire.SyncAfter, D3D12_BARRIER_SYNC_RENDER_TARGET);
  EXPECT_EQ(acquire.AccessAfter, D3D12_BARRIER_ACCESS_RENDER_TARGET);
  EXPECT_EQ(acquire.LayoutAfter, D3D12_BARRIER_LAYOUT_RENDER_TARGET);
  EXPECT_EQ(acquire.Flags, D3D12_TEXTURE_BARRIER_FLAG_DISCARD);
  // Textures of their own have no hand-over and are restored as before.
  const auto apart = plan_barriers(aliased_frame(), kAliasedReads,
                                   {{"A", {1, 1}, ""}, {"B", {1, 1}, ""}}, BarrierKind::legacy);
  EXPECT_TRUE(apart.target_transitions.empty());
  EXPECT_EQ(apart.texture_aliased, (std::vector<bool>{false, false}));
}

// Three dispatch-only textures in one heap on a compute queue, the last one written and never
// read: the hand-overs chain A -> B -> C and C -> A across frames, C holds the heap when a frame
// starts, A and B end it at rest (UNORDERED_ACCESS) and C where its write left it; the
// activation after C carries its last access (a write), which Vulkan must make available.
TEST(Planner, AHeapOfThreeTexturesHandsOverInTurnAndAcrossFrames) {
  const std::vector<PlannerWorkload> frame = {
      {"WA", WorkloadKind::compute, 0, QueueType::compute, TextureTarget{0, 0, 0}, 0},
      {"RA", WorkloadKind::compute, 0, QueueType::compute, std::nullopt, 1},
      {"WB", WorkloadKind::compute, 0, QueueType::compute, TextureTarget{1, 0, 0}, 2},
      {"RB", WorkloadKind::compute, 0, QueueType::compute, std::nullopt, 3},
      {"WC", WorkloadKind::compute, 0, QueueType::compute, TextureTarget{2, 0, 0}, 4}};
  const std::vector<PlannerTexture> heap = {
      {"A", {1, 1}, "h"}, {"B", {1, 1}, "h"}, {"C", {1, 1}, "h"}};
  const std::vector<PlannerDependency> reads = {{0, 1, {BarrierKind::legacy}},
                                                {2, 3, {BarrierKind::legacy}}};
  const auto legacy = plan_barriers(frame, reads, heap, BarrierKind::legacy);
  ASSERT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  EXPECT_EQ(legacy.texture_holds_heap_at_start, (std::vector<bool>{false, false, true}));
  std::vector<std::pair<std::size_t, std::size_t>> chain;  // (from, to) per ALIASING barrier
  for (const TargetTransition& t : legacy.target_transitions)
    if (t.aliasing_from) chain.emplace_back(*t.aliasing_from, t.texture);
  EXPECT_EQ(chain, (std::vector<std::pair<std::size_t, std::size_t>>{{2, 0}, {0, 1}, {1, 2}}));
  // C's last use was its write, in UNORDERED_ACCESS, its rest state: no transition before the
  // frame's first ALIASING barrier; A and B go back to rest from their readers' state.
  EXPECT_EQ(legacy.target_transitions.size(), 5u);
  for (std::size_t t = 0; t < 3; ++t)
    EXPECT_EQ(legacy.texture_final_states[t][0], D3D12_RESOURCE_STATE_UNORDERED_ACCESS) << t;
  std::vector<PlannerDependency> enhanced_reads = reads;
  for (auto& d : enhanced_reads) d.request.kind = BarrierKind::enhanced;
  const auto enhanced = plan_barriers(frame, enhanced_reads, heap, BarrierKind::enhanced);
  ASSERT_TRUE(enhanced.findings.empty()) << enhanced.findings[0].finding.message;
  const TargetTransition& first_activation = enhanced.target_transitions.at(1);
  ASSERT_EQ(first_activation.aliasing_from, std::optional<std::size_t>{2});
  EXPECT_EQ(first_activation.aliasing_access, D3D12_BARRIER_ACCESS_UNORDERED_ACCESS);
  const auto& activate =
      std::get<D3D12_TEXTURE_BARRIER>(std::get<EnhancedBarrier>(first_activation.barrier));
  EXPECT_EQ(activate.LayoutAfter, D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS);
  EXPECT_EQ(activate.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
}

TEST(Planner, TexturesOfOneHeapAreUsedOneAfterAnotherOnOneQueue) {
  // R1 reads A after D1 wrote B: A would still be used while B holds the memory.
  auto late_read = aliased_frame();
  late_read[1].position = 3;
  late_read[2].position = 1;
  late_read[3].position = 2;
  const auto overlap = plan_barriers(late_read, kAliasedReads, kHeap, BarrierKind::legacy);
  ASSERT_TRUE(plan_has(overlap, "heap-overlap"));
  EXPECT_EQ(overlap.findings[0].draw, std::optional<std::size_t>{2});
  EXPECT_TRUE(overlap.target_transitions.empty());  // no hand-over planned on a refused heap
  // B written on another queue than A.
  auto two_queues_frame = aliased_frame();
  two_queues_frame[2].queue = two_queues_frame[3].queue = 1;
  EXPECT_TRUE(plan_has(plan_barriers(two_queues_frame, kAliasedReads, kHeap), "heap-queue"));
  // A read on another queue than its writer's.
  auto cross_read = aliased_frame();
  cross_read[1].queue = 1;
  cross_read[1].queue_type = QueueType::compute;
  EXPECT_TRUE(plan_has(plan_barriers(cross_read, kAliasedReads, kHeap), "heap-queue"));
}

}  // namespace
}  // namespace gpuoverlap::barrier_tests
