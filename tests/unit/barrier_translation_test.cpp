#include <gtest/gtest.h>

#include "barriers/vulkan/translation.h"

namespace gpuoverlap::vk {
namespace {

TEST(BarrierModel, TransitionFollowsProducerAndConsumerKinds) {
  auto t = transition_between(WorkloadKind::compute, WorkloadKind::compute);
  EXPECT_EQ(t.before, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  EXPECT_EQ(t.after, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  t = transition_between(WorkloadKind::graphics, WorkloadKind::compute);
  EXPECT_EQ(t.before, D3D12_RESOURCE_STATE_RENDER_TARGET);
  t = transition_between(WorkloadKind::compute, WorkloadKind::graphics);
  EXPECT_EQ(t.after, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE);
}

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
}  // namespace gpuoverlap::vk
