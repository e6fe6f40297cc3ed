// The barrier planner across queues: which queue records a dependency's barriers, and the
// readers on another queue that a rewrite or a later layout change must wait for.
#include <gtest/gtest.h>

#include "barrier_test_frames.h"
#include "barriers/barrier_planner.h"

namespace gpuoverlap::barrier_tests {
namespace {

TEST(Planner, CrossQueueBarriersGoWhereTheQueueCanRecordThem) {
  // A (direct) -> Q (compute queue): recorded on the direct queue before the fence.
  const auto plan = plan_barriers(two_queues(), {{0, 3, request(BarrierKind::legacy)}});
  EXPECT_TRUE(plan.findings.empty());
  EXPECT_TRUE(plan.dependencies[0].cross_queue);
  EXPECT_EQ(plan.dependencies[0].barrier_queue, 0u);
  EXPECT_EQ(plan.dependencies[0].barriers[0].placement, Placement::after_producer);
  // Q (compute) -> B (direct), a buffer: recorded on the consumer's direct queue.
  const auto back = plan_barriers(two_queues(), {{3, 2, request(BarrierKind::legacy)}});
  EXPECT_EQ(back.dependencies[0].barrier_queue, 0u);
  EXPECT_EQ(back.dependencies[0].barriers[0].placement, Placement::before_consumer);
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{0, 3, request(BarrierKind::split)}}),
                       "split-cross-queue"));
}

// A texture drawn on a direct queue, read by a dispatch on a compute queue, then drawn again on
// the direct queue: the second draw must wait for that read (a fence from the reader, or from
// later work of its queue), or it may overwrite what the compute queue still reads.
TEST(Planner, ARewriteWaitsForReadersOnOtherQueues) {
  const std::vector<PlannerWorkload> frame = {
      {"Draw", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"Read on compute", WorkloadKind::compute, 1, QueueType::compute, std::nullopt, 1},
      {"Later on compute", WorkloadKind::compute, 1, QueueType::compute, std::nullopt, 2},
      {"Redraw", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 3}};
  const std::vector<PlannerTexture> colour = {{"T", {1, 1}}};
  for (BarrierKind kind : {BarrierKind::legacy, BarrierKind::enhanced}) {
    const auto racing = plan_barriers(frame, {{0, 1, request(kind)}}, colour);
    ASSERT_TRUE(plan_has(racing, "cross-queue-rewrite"));
    for (const auto& f : racing.findings) {
      if (f.finding.rule == "cross-queue-rewrite") {
        EXPECT_NE(f.finding.message.find("'Redraw' depend on 'Read on compute'"), std::string::npos)
            << f.finding.message;
      }
    }
    // Waiting for the reader, or for later work of its queue, orders the read first.
    EXPECT_FALSE(
        plan_has(plan_barriers(frame, {{0, 1, request(kind)}, {1, 3, request(kind)}}, colour),
                 "cross-queue-rewrite"));
    EXPECT_FALSE(
        plan_has(plan_barriers(frame, {{0, 1, request(kind)}, {2, 3, request(kind)}}, colour),
                 "cross-queue-rewrite"));
  }
  // A reader on the writer's own queue is ordered by the queue and the write's barrier.
  std::vector<PlannerWorkload> one_queue = frame;
  one_queue[1].queue = 0;
  one_queue[1].queue_type = QueueType::direct;
  EXPECT_FALSE(plan_has(plan_barriers(one_queue, {{0, 1, request(BarrierKind::legacy)}}, colour),
                        "cross-queue-rewrite"));
}

// A texture drawn on a direct queue and read by a dispatch on a compute queue: a later barrier
// on the direct queue that changes its layout (here into COPY_SOURCE for a readback) must come
// after that read, through a dependency; a draw reading it after a barrier scoped to compute
// shading gets a barrier of its own; depth layouts and states belong to depth textures.
TEST(Planner, ALaterLayoutChangeWaitsForReadersOnOtherQueues) {
  std::vector<PlannerWorkload> frame = {
      {"Draw", WorkloadKind::graphics, 0, QueueType::direct, TextureTarget{0, 0, 0}, 0},
      {"Read on compute", WorkloadKind::compute, 1, QueueType::compute, std::nullopt, 1},
      {"Read back", WorkloadKind::copy, 0, QueueType::direct, std::nullopt, 2}};
  const std::vector<PlannerTexture> colour = {{"T", {1, 1}}};
  for (BarrierKind kind : {BarrierKind::legacy, BarrierKind::enhanced}) {
    const auto racing =
        plan_barriers(frame, {{0, 1, request(kind)}, {0, 2, request(kind)}}, colour);
    EXPECT_TRUE(plan_has(racing, "cross-queue-reader"));
    // Read back after the compute read (a fence from it): fine.
    const auto ordered = plan_barriers(
        frame, {{0, 1, request(kind)}, {1, 2, request(kind)}, {0, 2, request(kind)}}, colour);
    EXPECT_FALSE(plan_has(ordered, "cross-queue-reader"));
  }
  // A pixel shader after a barrier whose SyncAfter is the compute stage: not yet ordered.
  frame[2] = {"Shade", WorkloadKind::graphics, 0, QueueType::direct, std::nullopt, 2};
  const auto shaded = plan_barriers(
      frame, {{0, 1, request(BarrierKind::enhanced)}, {0, 2, request(BarrierKind::enhanced)}},
      colour);
  EXPECT_TRUE(shaded.findings.empty()) << shaded.findings[0].finding.message;
  ASSERT_EQ(shaded.dependencies[1].barriers.size(), 1u);
  const auto& t = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(shaded.dependencies[1].barriers[0].barrier));
  EXPECT_EQ(t.SyncBefore, D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_EQ(t.SyncAfter, D3D12_BARRIER_SYNC_PIXEL_SHADING);
  // With SyncAfter ALL_SHADING the first barrier serves both readers.
  auto all_shading = request(BarrierKind::enhanced);
  all_shading.sync_after = D3D12_BARRIER_SYNC_ALL_SHADING;
  const auto one =
      plan_barriers(frame, {{0, 1, all_shading}, {0, 2, request(BarrierKind::enhanced)}}, colour);
  EXPECT_TRUE(one.findings.empty()) << one.findings[0].finding.message;
  EXPECT_TRUE(one.dependencies[1].barriers.empty());

  auto depth_read = request(BarrierKind::legacy);
  depth_read.state_after = static_cast<D3D12_RESOURCE_STATES>(
      D3D12_RESOURCE_STATE_DEPTH_READ | D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  EXPECT_TRUE(plan_has(plan_barriers(frame, {{0, 1, depth_read}}, colour), "resource-state"));
  const std::vector<PlannerTexture> depth = {{"D", {1, 1}, "", true}};
  EXPECT_FALSE(plan_has(plan_barriers(frame, {{0, 1, depth_read}}, depth), "resource-state"));
  auto depth_layout = request(BarrierKind::enhanced);
  depth_layout.layout_after = D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ;
  frame[1].queue = 0;  // a direct queue can name it
  frame[1].queue_type = QueueType::direct;
  EXPECT_TRUE(plan_has(plan_barriers(frame, {{0, 1, depth_layout}}, colour), "resource-state"));
  EXPECT_FALSE(plan_has(plan_barriers(frame, {{0, 1, depth_layout}}, depth), "resource-state"));
}

}  // namespace
}  // namespace gpuoverlap::barrier_tests
