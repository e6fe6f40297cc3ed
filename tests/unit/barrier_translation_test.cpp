#include "backends/vulkan/barrier_translation.h"

#include <gtest/gtest.h>

namespace gpuoverlap::vk {
namespace {

TEST(LegacyTranslation, UnorderedAccessToNonPixelShaderResourceOnDirect) {
  const auto t = translate(
      {D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE},
      QueueType::direct);
  EXPECT_EQ(t.src.stages, VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT |
                              VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT |
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(t.src.access, VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  EXPECT_EQ(t.dst.stages,
            VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(t.dst.access, VK_ACCESS_2_SHADER_READ_BIT);
  EXPECT_EQ(t.dst.stages & VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, 0u);
}

TEST(LegacyTranslation, ComputeQueueUsesOnlyTheComputeStage) {
  const auto t = translate(
      {D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE},
      QueueType::compute);
  EXPECT_EQ(t.src.stages, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(t.dst.stages, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
}

TEST(LegacyTranslation, RenderTargetToPixelShaderResourceChangesLayout) {
  const auto t =
      translate({D3D12_RESOURCE_STATE_RENDER_TARGET, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE},
                QueueType::direct);
  EXPECT_EQ(t.src.stages, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT);
  EXPECT_EQ(t.src.access,
            VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT);
  EXPECT_EQ(t.dst.stages, VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT);
  EXPECT_EQ(t.old_layout, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
  EXPECT_EQ(t.new_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
}

TEST(LegacyTranslation, CommonIsAFullBarrierAndCopiesMapToTransfer) {
  const auto common = scope_for_state(D3D12_RESOURCE_STATE_COMMON, QueueType::direct);
  EXPECT_EQ(common.stages, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
  EXPECT_EQ(common.access, VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
  const auto dest = scope_for_state(D3D12_RESOURCE_STATE_COPY_DEST, QueueType::compute);
  EXPECT_EQ(dest.stages, VK_PIPELINE_STAGE_2_COPY_BIT);
  EXPECT_EQ(dest.access, VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

TEST(LegacyTranslation, GenericReadIsTheUnionOfItsReadStates) {
  const auto read = scope_for_state(D3D12_RESOURCE_STATE_GENERIC_READ, QueueType::direct);
  EXPECT_NE(read.stages & VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, 0u);
  EXPECT_NE(read.stages & VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, 0u);
  EXPECT_NE(read.stages & VK_PIPELINE_STAGE_2_COPY_BIT, 0u);
  EXPECT_NE(read.access & VK_ACCESS_2_SHADER_READ_BIT, 0u);
  EXPECT_NE(read.access & VK_ACCESS_2_TRANSFER_READ_BIT, 0u);
  EXPECT_EQ(read.access & (VK_ACCESS_2_SHADER_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT), 0u);
}

TEST(LegacyTranslation, NeverNamesStagesOfDisabledFeatures) {
  for (auto state :
       {D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE,
        D3D12_RESOURCE_STATE_GENERIC_READ}) {
    const auto s = scope_for_state(state, QueueType::direct);
    EXPECT_EQ(s.stages & (VK_PIPELINE_STAGE_2_GEOMETRY_SHADER_BIT |
                          VK_PIPELINE_STAGE_2_TESSELLATION_CONTROL_SHADER_BIT |
                          VK_PIPELINE_STAGE_2_TESSELLATION_EVALUATION_SHADER_BIT),
              0u);
  }
}

}  // namespace

TEST(EnhancedTranslation, SyncScopesMapToStagesPerQueue) {
  EXPECT_EQ(stages_for_sync(D3D12_BARRIER_SYNC_ALL, QueueType::compute),
            VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
  EXPECT_EQ(stages_for_sync(D3D12_BARRIER_SYNC_COMPUTE_SHADING, QueueType::direct),
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(stages_for_sync(D3D12_BARRIER_SYNC_PIXEL_SHADING, QueueType::direct),
            VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT);
  EXPECT_EQ(stages_for_sync(D3D12_BARRIER_SYNC_RENDER_TARGET, QueueType::direct),
            VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT);
  EXPECT_EQ(stages_for_sync(D3D12_BARRIER_SYNC_COPY, QueueType::compute),
            VK_PIPELINE_STAGE_2_COPY_BIT);
  EXPECT_EQ(stages_for_sync(D3D12_BARRIER_SYNC_ALL_SHADING, QueueType::compute),
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  const auto draw = stages_for_sync(D3D12_BARRIER_SYNC_DRAW, QueueType::direct);
  for (VkPipelineStageFlags2 stage :
       {VK_PIPELINE_STAGE_2_INDEX_INPUT_BIT, VK_PIPELINE_STAGE_2_PRE_RASTERIZATION_SHADERS_BIT,
        VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT})
    EXPECT_NE(draw & stage, 0u) << stage;
  EXPECT_EQ(draw & VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, 0u);
  EXPECT_EQ(stages_for_sync(D3D12_BARRIER_SYNC_NONE, QueueType::direct), VK_PIPELINE_STAGE_2_NONE);
}

// A depth buffer (d32): written by the depth test's stages, in the depth attachment layout;
// read by the depth test alone or with shaders in the read-only depth layout (which allows
// sampling), and by shaders alone in the shader-read layout.
TEST(LegacyTranslation, DepthWriteIsTheFragmentTestsInTheDepthAttachmentLayout) {
  const auto t =
      translate({D3D12_RESOURCE_STATE_DEPTH_WRITE, D3D12_RESOURCE_STATE_ALL_SHADER_RESOURCE},
                QueueType::direct);
  EXPECT_EQ(t.src.stages, VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT |
                              VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT);
  EXPECT_EQ(t.src.access, VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                              VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT);
  EXPECT_EQ(t.old_layout, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
  EXPECT_EQ(t.new_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
  EXPECT_EQ(t.dst.access, VK_ACCESS_2_SHADER_READ_BIT);

  const auto read =
      translate({D3D12_RESOURCE_STATE_DEPTH_WRITE,
                 D3D12_RESOURCE_STATE_DEPTH_READ | D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE},
                QueueType::direct);
  EXPECT_EQ(read.new_layout, VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL);
  EXPECT_EQ(read.dst.stages, VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT |
                                 VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT |
                                 VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT);
  EXPECT_EQ(read.dst.access,
            VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT | VK_ACCESS_2_SHADER_READ_BIT);
}

TEST(EnhancedTranslation, DepthSyncAccessesAndLayoutsMapToTheDepthAttachment) {
  EXPECT_EQ(
      stages_for_sync(D3D12_BARRIER_SYNC_DEPTH_STENCIL, QueueType::direct),
      VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT);
  EXPECT_EQ(access_for_barrier_access(D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE),
            VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT);
  EXPECT_EQ(access_for_barrier_access(D3D12_BARRIER_ACCESS_DEPTH_STENCIL_READ),
            VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT);
  EXPECT_EQ(layout_for_barrier_layout(D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE),
            VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
  EXPECT_EQ(layout_for_barrier_layout(D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ),
            VK_IMAGE_LAYOUT_DEPTH_STENCIL_READ_ONLY_OPTIMAL);
}

TEST(EnhancedTranslation, AccessesAndLayoutsMapAsDesigned) {
  EXPECT_EQ(access_for_barrier_access(D3D12_BARRIER_ACCESS_UNORDERED_ACCESS),
            VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
  EXPECT_EQ(access_for_barrier_access(D3D12_BARRIER_ACCESS_SHADER_RESOURCE),
            VK_ACCESS_2_SHADER_READ_BIT);
  EXPECT_EQ(access_for_barrier_access(D3D12_BARRIER_ACCESS_RENDER_TARGET),
            VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT);
  EXPECT_EQ(access_for_barrier_access(D3D12_BARRIER_ACCESS_NO_ACCESS), VK_ACCESS_2_NONE);
  EXPECT_EQ(access_for_barrier_access(D3D12_BARRIER_ACCESS_COMMON),
            VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
  EXPECT_EQ(layout_for_barrier_layout(D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS),
            VK_IMAGE_LAYOUT_GENERAL);
  EXPECT_EQ(layout_for_barrier_layout(D3D12_BARRIER_LAYOUT_RENDER_TARGET),
            VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
  EXPECT_EQ(layout_for_barrier_layout(D3D12_BARRIER_LAYOUT_SHADER_RESOURCE),
            VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
  EXPECT_EQ(layout_for_barrier_layout(D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_SHADER_RESOURCE),
            VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
  EXPECT_EQ(layout_for_barrier_layout(D3D12_BARRIER_LAYOUT_UNDEFINED), VK_IMAGE_LAYOUT_UNDEFINED);
}

// Translates one planned dependency of `kind` between a dispatch (or draw) and a dispatch on
// one direct queue.
DependencyOps ops_for(BarrierKind kind, SplitPolicy policy,
                      WorkloadKind producer = WorkloadKind::compute,
                      std::optional<SubresourceRequest> subresources = std::nullopt) {
  BarrierRequest request;
  request.kind = kind;
  request.split_policy = policy;
  request.subresources = subresources;
  const auto plan = plan_barriers(
      {{"P", producer, 0, QueueType::direct}, {"C", WorkloadKind::compute, 0, QueueType::direct}},
      {{0, 1, request}});
  EXPECT_FALSE(plan.has_errors());
  return translate(plan.dependencies.at(0));
}

TEST(SplitTranslation, EventPolicySetsAfterTheProducerAndWaitsWithTheSameDependency) {
  const auto ops = ops_for(BarrierKind::split, SplitPolicy::event);
  ASSERT_EQ(ops.set_event_after_producer.size(), 1u);
  ASSERT_EQ(ops.wait_event_before_consumer.size(), 1u);
  EXPECT_TRUE(ops.barriers_before_consumer.empty());
  EXPECT_TRUE(ops.barriers_after_producer.empty());
  const BarrierDesc& set = ops.set_event_after_producer[0];
  const BarrierDesc& wait = ops.wait_event_before_consumer[0];
  EXPECT_EQ(set.target, BarrierDesc::Target::buffer);
  EXPECT_EQ(set.src.stages, wait.src.stages);
  EXPECT_EQ(set.dst.stages, wait.dst.stages);
  EXPECT_EQ(set.src.access, wait.src.access);
  EXPECT_EQ(set.dst.access, wait.dst.access);
  EXPECT_EQ(wait.dst.access, VK_ACCESS_2_SHADER_READ_BIT);
}

TEST(SplitTranslation, CollapsedPolicyIsOneBarrierBeforeTheConsumer) {
  const auto collapsed = ops_for(BarrierKind::split, SplitPolicy::collapsed);
  EXPECT_TRUE(collapsed.set_event_after_producer.empty());
  EXPECT_TRUE(collapsed.wait_event_before_consumer.empty());
  ASSERT_EQ(collapsed.barriers_before_consumer.size(), 1u);
  // ... the very barrier a legacy transition records.
  const auto legacy = ops_for(BarrierKind::legacy, SplitPolicy::event);
  ASSERT_EQ(legacy.barriers_before_consumer.size(), 1u);
  EXPECT_EQ(collapsed.barriers_before_consumer[0].src.stages,
            legacy.barriers_before_consumer[0].src.stages);
  EXPECT_EQ(collapsed.barriers_before_consumer[0].dst.access,
            legacy.barriers_before_consumer[0].dst.access);
}

TEST(SplitTranslation, EnhancedSplitJoinsItsHalvesAcrossSplit) {
  const auto ops = ops_for(BarrierKind::enhanced_split, SplitPolicy::event, WorkloadKind::graphics);
  ASSERT_EQ(ops.set_event_after_producer.size(), 1u);
  const BarrierDesc& d = ops.set_event_after_producer[0];
  EXPECT_EQ(d.target, BarrierDesc::Target::image);
  EXPECT_EQ(d.src.stages, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT);
  EXPECT_EQ(d.dst.stages, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(d.old_layout, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
  EXPECT_EQ(d.new_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
}

// A barrier covers every mip and layer unless the dependency names its subresources; then
// Vulkan's range is D3D12's, whether one enhanced TEXTURE barrier names it or a legacy
// TRANSITION names the subresource's index.
TEST(SubresourceTranslation, TheImageRangeIsTheDependencysSubresources) {
  for (BarrierKind kind : {BarrierKind::legacy, BarrierKind::enhanced}) {
    const auto all = ops_for(kind, SplitPolicy::event, WorkloadKind::graphics);
    ASSERT_EQ(all.barriers_before_consumer.size(), 1u) << to_string(kind);
    const BarrierDesc& every = all.barriers_before_consumer[0];
    EXPECT_EQ(every.base_mip, 0u);
    EXPECT_EQ(every.mip_count, VK_REMAINING_MIP_LEVELS);
    EXPECT_EQ(every.layer_count, VK_REMAINING_ARRAY_LAYERS);
    const auto one = ops_for(kind, SplitPolicy::event, WorkloadKind::graphics,
                             SubresourceRequest{SubresourceRequest::Span{0, 1}, std::nullopt});
    ASSERT_EQ(one.barriers_before_consumer.size(), 1u) << to_string(kind);
    const BarrierDesc& named = one.barriers_before_consumer[0];
    EXPECT_EQ(named.base_mip, 0u);
    EXPECT_EQ(named.mip_count, 1u) << to_string(kind);
    EXPECT_EQ(named.base_layer, 0u);
    EXPECT_EQ(named.layer_count, 1u) << to_string(kind);
    EXPECT_EQ(named.new_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
  }
  // A split pair with a range: one event, each half with the range.
  const auto split = ops_for(BarrierKind::split, SplitPolicy::event, WorkloadKind::graphics,
                             SubresourceRequest{SubresourceRequest::Span{0, 1}, std::nullopt});
  ASSERT_EQ(split.set_event_after_producer.size(), 1u);
  ASSERT_EQ(split.wait_event_before_consumer.size(), 1u);
  EXPECT_EQ(split.set_event_after_producer[0].mip_count, 1u);
  EXPECT_EQ(split.wait_event_before_consumer[0].layer_count, 1u);
}

TEST(EnhancedTranslation, PreciseBarrierNamesOnlyTheStagesInvolved) {
  const auto precise = ops_for(BarrierKind::enhanced, SplitPolicy::event);
  ASSERT_EQ(precise.barriers_before_consumer.size(), 1u);
  EXPECT_EQ(precise.barriers_before_consumer[0].src.stages, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(precise.barriers_before_consumer[0].dst.stages, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  const auto uav = ops_for(BarrierKind::uav, SplitPolicy::event);
  ASSERT_EQ(uav.barriers_before_consumer.size(), 1u);
  EXPECT_EQ(uav.barriers_before_consumer[0].target, BarrierDesc::Target::memory);
  EXPECT_EQ(uav.barriers_before_consumer[0].src.access,
            VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
}

// An aliasing hand-over: the legacy ALIASING barrier is a full barrier taking the new image from
// UNDEFINED to its rest layout; the enhanced activation keeps its precise stages and, after a
// holder whose last access was a write, makes that write available (Vulkan has no chain
// through the release's stage NONE); after a read it adds nothing.
TEST(AliasingTranslation, HandOversOrderTheNewImageAfterTheHoldersLastWork) {
  D3D12_RESOURCE_BARRIER aliasing{};
  aliasing.Type = D3D12_RESOURCE_BARRIER_TYPE_ALIASING;
  const BarrierDesc full =
      translate(TargetTransition{2, 1, aliasing, 0, D3D12_BARRIER_LAYOUT_RENDER_TARGET}, {1, 1},
                QueueType::direct);
  EXPECT_EQ(full.target, BarrierDesc::Target::image);
  EXPECT_EQ(full.src.stages, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
  EXPECT_EQ(full.src.access, VK_ACCESS_2_MEMORY_WRITE_BIT);
  EXPECT_EQ(full.dst.stages, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
  EXPECT_EQ(full.old_layout, VK_IMAGE_LAYOUT_UNDEFINED);
  EXPECT_EQ(full.new_layout, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);

  D3D12_TEXTURE_BARRIER activate{};
  activate.SyncBefore = D3D12_BARRIER_SYNC_COMPUTE_SHADING;
  activate.SyncAfter = D3D12_BARRIER_SYNC_COMPUTE_SHADING;
  activate.AccessBefore = D3D12_BARRIER_ACCESS_NO_ACCESS;
  activate.AccessAfter = D3D12_BARRIER_ACCESS_UNORDERED_ACCESS;
  activate.LayoutBefore = D3D12_BARRIER_LAYOUT_UNDEFINED;
  activate.LayoutAfter = D3D12_BARRIER_LAYOUT_UNORDERED_ACCESS;
  activate.Subresources = kAllSubresources;
  activate.Flags = D3D12_TEXTURE_BARRIER_FLAG_DISCARD;
  TargetTransition after_write{2,
                               1,
                               EnhancedBarrier{activate},
                               0,
                               D3D12_BARRIER_LAYOUT_UNDEFINED,
                               D3D12_BARRIER_ACCESS_UNORDERED_ACCESS};
  const BarrierDesc written = translate(after_write, {1, 1}, QueueType::compute);
  EXPECT_EQ(written.src.stages, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(written.src.access, VK_ACCESS_2_SHADER_WRITE_BIT);
  EXPECT_EQ(written.old_layout, VK_IMAGE_LAYOUT_UNDEFINED);
  EXPECT_EQ(written.new_layout, VK_IMAGE_LAYOUT_GENERAL);
  after_write.aliasing_access = D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
  EXPECT_EQ(translate(after_write, {1, 1}, QueueType::compute).src.access, VkAccessFlags2{0});
}

}  // namespace gpuoverlap::vk
