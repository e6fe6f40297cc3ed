// The barrier planner (barriers/barrier_planner.h) on buffers and on workloads' own render
// targets: each kind's defaults and split halves, a second reader, readbacks, and the rules that
// compare a request with the tracked state, the producer and the consumer.
#include "barriers/barrier_planner.h"

#include <gtest/gtest.h>

#include "barrier_test_frames.h"

namespace gpuoverlap::barrier_tests {
namespace {

TEST(Planner, DefaultsFollowTheKindsAndAreClean) {
  const auto plan = plan_barriers(
      two_queues(), {{0, 2, request(BarrierKind::legacy)}, {1, 2, request(BarrierKind::enhanced)}});
  EXPECT_TRUE(plan.findings.empty());
  ASSERT_EQ(plan.dependencies[0].barriers.size(), 1u);
  const auto& t = std::get<D3D12_RESOURCE_BARRIER>(plan.dependencies[0].barriers[0].barrier);
  EXPECT_EQ(t.Transition.StateBefore, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  EXPECT_EQ(t.Transition.StateAfter, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  const auto& e = std::get<EnhancedBarrier>(plan.dependencies[1].barriers[0].barrier);
  const auto& tex = std::get<D3D12_TEXTURE_BARRIER>(e);
  EXPECT_EQ(tex.LayoutBefore, D3D12_BARRIER_LAYOUT_RENDER_TARGET);
  EXPECT_EQ(tex.LayoutAfter, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  EXPECT_EQ(tex.SyncAfter, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(plan.final_layouts[1], D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  // A draw leaves RENDER_TARGET; a pixel shader reads PIXEL_SHADER_RESOURCE (MJP's states).
  const auto draw = plan_barriers(two_queues(), {{1, 2, request(BarrierKind::legacy)}});
  const auto& rt = std::get<D3D12_RESOURCE_BARRIER>(draw.dependencies[0].barriers[0].barrier);
  EXPECT_EQ(rt.Transition.StateBefore, D3D12_RESOURCE_STATE_RENDER_TARGET);
  EXPECT_EQ(rt.Transition.StateAfter, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  const auto into_draw = plan_barriers(two_queues(), {{0, 1, request(BarrierKind::legacy)}});
  EXPECT_EQ(std::get<D3D12_RESOURCE_BARRIER>(into_draw.dependencies[0].barriers[0].barrier)
                .Transition.StateAfter,
            D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE);
}

TEST(Planner, SplitPairsAreBeginAfterTheProducerAndEndBeforeTheConsumer) {
  auto split = request(BarrierKind::split);
  auto enhanced_split = request(BarrierKind::enhanced_split);
  const auto plan = plan_barriers(two_queues(), {{0, 2, split}, {1, 2, enhanced_split}});
  EXPECT_TRUE(plan.findings.empty());
  const auto& legacy_pair = plan.dependencies[0].barriers;
  ASSERT_EQ(legacy_pair.size(), 2u);
  EXPECT_EQ(legacy_pair[0].placement, Placement::after_producer);
  EXPECT_EQ(std::get<D3D12_RESOURCE_BARRIER>(legacy_pair[0].barrier).Flags,
            D3D12_RESOURCE_BARRIER_FLAG_BEGIN_ONLY);
  EXPECT_EQ(std::get<D3D12_RESOURCE_BARRIER>(legacy_pair[1].barrier).Flags,
            D3D12_RESOURCE_BARRIER_FLAG_END_ONLY);
  const auto& pair = plan.dependencies[1].barriers;
  ASSERT_EQ(pair.size(), 2u);
  const auto& begin = std::get<D3D12_TEXTURE_BARRIER>(std::get<EnhancedBarrier>(pair[0].barrier));
  const auto& end = std::get<D3D12_TEXTURE_BARRIER>(std::get<EnhancedBarrier>(pair[1].barrier));
  EXPECT_EQ(begin.SyncAfter, D3D12_BARRIER_SYNC_SPLIT);
  EXPECT_EQ(end.SyncBefore, D3D12_BARRIER_SYNC_SPLIT);
}

TEST(Planner, ASecondReaderNeedsNoSecondTransition) {
  const auto plan = plan_barriers(
      two_queues(), {{0, 1, request(BarrierKind::legacy)}, {0, 2, request(BarrierKind::legacy)}});
  EXPECT_TRUE(plan.findings.empty());
  // G reads as PIXEL_SHADER_RESOURCE; B needs NON_PIXEL: a read-to-read transition.
  ASSERT_EQ(plan.dependencies[1].barriers.size(), 1u);
  const auto again = plan_barriers(
      two_queues(), {{0, 2, request(BarrierKind::legacy)}, {0, 2, request(BarrierKind::legacy)}});
  EXPECT_TRUE(again.dependencies[1].barriers.empty());
  EXPECT_FALSE(again.dependencies[1].note.empty());
}

// Readbacks: a copy reads its producer's output as a copy source (COPY_SOURCE; enhanced SYNC_COPY
// / ACCESS_COPY_SOURCE, a texture in LAYOUT_COPY_SOURCE), which a shader reader after it must
// move out of; a UAV barrier cannot serve a copy.
TEST(Planner, AReadbackReadsItsSourceAsACopySource) {
  const std::vector<PlannerWorkload> frame = {
      {"Draw", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"Read back", WorkloadKind::copy, 0, QueueType::direct, std::nullopt, 1},
      {"Shade", WorkloadKind::compute, 0, QueueType::direct, std::nullopt, 2},
      {"Dispatch", WorkloadKind::compute, 1, QueueType::compute, std::nullopt, 3},
      {"Read back buffer", WorkloadKind::copy, 1, QueueType::compute, std::nullopt, 4}};
  const std::vector<PlannerTexture> texture = {{"T", {1, 1}}};
  auto deps = [](BarrierKind kind) {
    return std::vector<PlannerDependency>{
        {0, 1, request(kind)}, {0, 2, request(kind)}, {3, 4, request(kind)}};
  };
  const auto legacy = plan_barriers(frame, deps(BarrierKind::legacy), texture);
  EXPECT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  const auto& to_copy =
      std::get<D3D12_RESOURCE_BARRIER>(legacy.dependencies[0].barriers[0].barrier);
  EXPECT_EQ(to_copy.Transition.StateBefore, D3D12_RESOURCE_STATE_RENDER_TARGET);
  EXPECT_EQ(to_copy.Transition.StateAfter, D3D12_RESOURCE_STATE_COPY_SOURCE);
  EXPECT_EQ(legacy.dependencies[0].layout_at_consumer, D3D12_BARRIER_LAYOUT_COPY_SOURCE);
  // The shader reader after the readback: COPY_SOURCE is no shader resource.
  const auto& to_shader =
      std::get<D3D12_RESOURCE_BARRIER>(legacy.dependencies[1].barriers[0].barrier);
  EXPECT_EQ(to_shader.Transition.StateBefore, D3D12_RESOURCE_STATE_COPY_SOURCE);
  EXPECT_EQ(to_shader.Transition.StateAfter, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  const auto& buffer = std::get<D3D12_RESOURCE_BARRIER>(legacy.dependencies[2].barriers[0].barrier);
  EXPECT_EQ(buffer.Transition.StateBefore, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  EXPECT_EQ(buffer.Transition.StateAfter, D3D12_RESOURCE_STATE_COPY_SOURCE);

  const auto enhanced = plan_barriers(frame, deps(BarrierKind::enhanced), texture);
  EXPECT_TRUE(enhanced.findings.empty()) << enhanced.findings[0].finding.message;
  const auto& t = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[0].barriers[0].barrier));
  EXPECT_EQ(t.SyncAfter, D3D12_BARRIER_SYNC_COPY);
  EXPECT_EQ(t.AccessAfter, D3D12_BARRIER_ACCESS_COPY_SOURCE);
  EXPECT_EQ(t.LayoutAfter, D3D12_BARRIER_LAYOUT_COPY_SOURCE);
  const auto& back_to_shader = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[1].barriers[0].barrier));
  EXPECT_EQ(back_to_shader.LayoutBefore, D3D12_BARRIER_LAYOUT_COPY_SOURCE);
  EXPECT_EQ(back_to_shader.AccessBefore, D3D12_BARRIER_ACCESS_COPY_SOURCE);
  EXPECT_EQ(back_to_shader.LayoutAfter, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  const auto& b = std::get<D3D12_BUFFER_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[2].barriers[0].barrier));
  EXPECT_EQ(b.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(b.SyncAfter, D3D12_BARRIER_SYNC_COPY);
  EXPECT_EQ(b.AccessAfter, D3D12_BARRIER_ACCESS_COPY_SOURCE);

  // A layout a copy cannot read from, and a UAV barrier before a copy.
  auto shader_layout = request(BarrierKind::enhanced);
  shader_layout.layout_after = D3D12_BARRIER_LAYOUT_SHADER_RESOURCE;
  shader_layout.access_after = D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
  const auto wrong = plan_barriers(frame, {{0, 1, shader_layout}}, texture);
  EXPECT_TRUE(plan_has(wrong, "consumer-access"));
  EXPECT_TRUE(
      plan_has(plan_barriers(frame, {{3, 4, request(BarrierKind::uav)}}, texture), "uav-copy"));
}

TEST(Planner, StateBeforeMustBeTheTrackedState) {
  auto r = request(BarrierKind::legacy);
  r.state_before = D3D12_RESOURCE_STATE_COPY_DEST;
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{0, 2, r}}), "state-mismatch"));
  r.state_before = D3D12_RESOURCE_STATE_UNORDERED_ACCESS;
  EXPECT_FALSE(plan_has(plan_barriers(two_queues(), {{0, 2, r}}), "state-mismatch"));
}

TEST(Planner, StateAfterMustLetTheConsumerRead) {
  auto r = request(BarrierKind::legacy);
  r.state_after = D3D12_RESOURCE_STATE_COPY_SOURCE;
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{0, 2, r}}), "consumer-state"));
  r.reads_output = false;  // the consumer does not read: any state will do
  EXPECT_FALSE(plan_has(plan_barriers(two_queues(), {{0, 2, r}}), "consumer-state"));
}

TEST(Planner, UavBarriersNeedAnUnorderedAccessBuffer) {
  EXPECT_TRUE(
      plan_has(plan_barriers(two_queues(), {{1, 2, request(BarrierKind::uav)}}), "uav-texture"));
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{0, 2, request(BarrierKind::legacy)},
                                                    {0, 2, request(BarrierKind::uav)}}),
                       "uav-state"));
  EXPECT_TRUE(plan_barriers(two_queues(), {{0, 2, request(BarrierKind::uav)}}).findings.empty());
}

// A copy leaves its output buffer as a copy's destination: a legacy TRANSITION from COPY_DEST,
// an enhanced BUFFER barrier from SYNC_COPY / ACCESS_COPY_DEST, on either queue type; a UAV
// barrier, which orders unordered-access writes, does not apply.
TEST(Planner, ACopysOutputGoesFromCopyDestToItsReader) {
  const std::vector<PlannerWorkload> copies = {
      {"U", WorkloadKind::copy, 0, QueueType::direct, std::nullopt, 0},
      {"R", WorkloadKind::compute, 0, QueueType::direct, std::nullopt, 1},
      {"V", WorkloadKind::copy, 1, QueueType::compute, std::nullopt, 2},
      {"S", WorkloadKind::compute, 1, QueueType::compute, std::nullopt, 3}};
  const auto legacy_plan = plan_barriers(
      copies, {{0, 1, request(BarrierKind::legacy)}, {2, 3, request(BarrierKind::legacy)}});
  EXPECT_TRUE(legacy_plan.findings.empty());
  for (const DependencyPlan& d : legacy_plan.dependencies) {
    EXPECT_EQ(d.resource, ResourceKind::buffer);
    ASSERT_EQ(d.barriers.size(), 1u);
    const auto& t = std::get<D3D12_RESOURCE_BARRIER>(d.barriers[0].barrier);
    EXPECT_EQ(t.Transition.StateBefore, D3D12_RESOURCE_STATE_COPY_DEST);
    EXPECT_EQ(t.Transition.StateAfter, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  }
  const auto enhanced_plan = plan_barriers(
      copies, {{0, 1, request(BarrierKind::enhanced)}, {2, 3, request(BarrierKind::enhanced)}});
  EXPECT_TRUE(enhanced_plan.findings.empty());
  for (const DependencyPlan& d : enhanced_plan.dependencies) {
    ASSERT_EQ(d.barriers.size(), 1u);
    const auto& b =
        std::get<D3D12_BUFFER_BARRIER>(std::get<EnhancedBarrier>(d.barriers[0].barrier));
    EXPECT_EQ(b.SyncBefore, D3D12_BARRIER_SYNC_COPY);
    EXPECT_EQ(b.AccessBefore, D3D12_BARRIER_ACCESS_COPY_DEST);
    EXPECT_EQ(b.SyncAfter, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
    EXPECT_EQ(b.AccessAfter, D3D12_BARRIER_ACCESS_SHADER_RESOURCE);
  }
  // SyncBefore must include the copy's own work.
  auto shading = request(BarrierKind::enhanced);
  shading.sync_before = D3D12_BARRIER_SYNC_COMPUTE_SHADING;
  EXPECT_TRUE(plan_has(plan_barriers(copies, {{0, 1, shading}}), "producer-sync"));
  EXPECT_TRUE(plan_has(plan_barriers(copies, {{0, 1, request(BarrierKind::uav)}}), "uav-state"));
}

TEST(Planner, EnhancedSyncAndAccessMustCoverProducerAndConsumer) {
  auto r = request(BarrierKind::enhanced);
  r.sync_before = D3D12_BARRIER_SYNC_COPY;
  r.access_before = D3D12_BARRIER_ACCESS_COPY_DEST;
  const auto bad = plan_barriers(two_queues(), {{0, 2, r}});
  EXPECT_TRUE(plan_has(bad, "producer-sync"));
  EXPECT_TRUE(plan_has(bad, "producer-access"));
  auto after = request(BarrierKind::enhanced);
  after.sync_after = D3D12_BARRIER_SYNC_PIXEL_SHADING;
  after.access_after = D3D12_BARRIER_ACCESS_COPY_SOURCE;
  const auto bad_after = plan_barriers(two_queues(), {{0, 2, after}});
  EXPECT_TRUE(plan_has(bad_after, "consumer-sync"));
  EXPECT_TRUE(plan_has(bad_after, "consumer-access"));
  auto all = request(BarrierKind::enhanced);
  all.sync_before = all.sync_after = D3D12_BARRIER_SYNC_ALL;
  EXPECT_TRUE(plan_barriers(two_queues(), {{0, 2, all}}).findings.empty());
}

TEST(Planner, LayoutBeforeMustBeTheTrackedLayout) {
  auto r = request(BarrierKind::enhanced);
  r.layout_before = D3D12_BARRIER_LAYOUT_COMMON;
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{1, 2, r}}), "layout-mismatch"));
  r.layout_before = D3D12_BARRIER_LAYOUT_RENDER_TARGET;
  EXPECT_FALSE(plan_has(plan_barriers(two_queues(), {{1, 2, r}}), "layout-mismatch"));
}

TEST(Planner, AGlobalBarrierCannotMakeARenderTargetReadable) {
  auto r = request(BarrierKind::enhanced);
  r.type = D3D12_BARRIER_TYPE_GLOBAL;
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{1, 2, r}}), "global-barrier-layout"));
  EXPECT_FALSE(plan_has(plan_barriers(two_queues(), {{0, 2, r}}), "global-barrier-layout"));
}

TEST(Planner, NoBarrierWithReadsIsARaceAndImpossibleOnARenderTarget) {
  auto r = request(BarrierKind::none);
  EXPECT_TRUE(plan_barriers(two_queues(), {{0, 2, r}}).findings.empty());  // no read, no race
  r.reads_output = true;
  const auto race = plan_barriers(two_queues(), {{0, 2, r}});
  ASSERT_TRUE(plan_has(race, "none-race"));
  EXPECT_FALSE(race.has_errors());  // a warning: the user asked for it
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{1, 2, r}}), "none-texture-read"));
}

}  // namespace
}  // namespace gpuoverlap::barrier_tests
