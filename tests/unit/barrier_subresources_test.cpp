// The barrier planner on a texture's subresources: a dependency's range (inside the texture,
// covering the write, in one layout) and a mip chain tracked subresource by subresource.
#include <gtest/gtest.h>

#include "barrier_test_frames.h"
#include "barriers/barrier_planner.h"

namespace gpuoverlap::barrier_tests {
namespace {

// subresources: a texture's range, inside it, covering what the producer wrote; legacy barriers
// name each subresource by its index, enhanced TEXTURE barriers the range.
TEST(Planner, SubresourcesAreATexturesRangeThatCoversTheWrite) {
  using Span = SubresourceRequest::Span;
  auto with = [](BarrierKind kind, SubresourceRequest range) {
    auto r = request(kind);
    r.subresources = range;
    return r;
  };
  const SubresourceRequest mip0{Span{0, 1}, Span{0, 1}};
  const auto legacy = plan_barriers(two_queues(), {{1, 2, with(BarrierKind::legacy, mip0)}});
  EXPECT_TRUE(legacy.findings.empty());
  ASSERT_EQ(legacy.dependencies[0].barriers.size(), 1u);
  EXPECT_EQ(std::get<D3D12_RESOURCE_BARRIER>(legacy.dependencies[0].barriers[0].barrier)
                .Transition.Subresource,
            0u);
  ASSERT_TRUE(legacy.dependencies[0].subresources);
  EXPECT_EQ(*legacy.dependencies[0].subresources, (SubresourceRange{0, 1, 0, 1}));
  const auto split = plan_barriers(two_queues(), {{1, 2, with(BarrierKind::split, mip0)}});
  ASSERT_EQ(split.dependencies[0].barriers.size(), 2u);  // BEGIN and END of subresource 0
  EXPECT_EQ(std::get<D3D12_RESOURCE_BARRIER>(split.dependencies[0].barriers[1].barrier)
                .Transition.Subresource,
            0u);
  const auto enhanced =
      plan_barriers(two_queues(), {{1, 2, with(BarrierKind::enhanced, {Span{0, 1}, {}})}});
  EXPECT_TRUE(enhanced.findings.empty());
  const auto& t = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[0].barriers[0].barrier));
  EXPECT_EQ(t.Subresources.IndexOrFirstMipLevel, 0u);
  EXPECT_EQ(t.Subresources.NumMipLevels, 1u);
  EXPECT_EQ(t.Subresources.NumArraySlices, 1u);
  EXPECT_EQ(t.Subresources.NumPlanes, 1u);
  // Without the key: every subresource, as before.
  const auto all = plan_barriers(two_queues(), {{1, 2, request(BarrierKind::legacy)}});
  EXPECT_EQ(std::get<D3D12_RESOURCE_BARRIER>(all.dependencies[0].barriers[0].barrier)
                .Transition.Subresource,
            D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES);
  EXPECT_FALSE(all.dependencies[0].subresources);
  // A render target has one mip and one slice.
  EXPECT_TRUE(
      plan_has(plan_barriers(two_queues(), {{1, 2, with(BarrierKind::legacy, {Span{0, 2}, {}})}}),
               "subresource-range"));
  EXPECT_TRUE(
      plan_has(plan_barriers(two_queues(), {{1, 2, with(BarrierKind::enhanced, {{}, Span{1, 1}})}}),
               "subresource-range"));
  // A buffer has one subresource; a GLOBAL barrier names no resource.
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{0, 2, with(BarrierKind::legacy, mip0)}}),
                       "subresource-buffer"));
  auto global = with(BarrierKind::enhanced, mip0);
  global.type = D3D12_BARRIER_TYPE_GLOBAL;
  EXPECT_TRUE(plan_has(plan_barriers(two_queues(), {{1, 2, global}}), "subresource-global"));
}

// A mip chain on a declared texture (mip_chain, kChain): each level's draw reads the level
// before. The planner tracks every subresource: a barrier covers by default the mip its
// producer drew, a draw needs its mip in RENDER_TARGET, and one barrier covers subresources of
// one layout.
TEST(Planner, AMipChainTransitionsEachMipItsProducerDrew) {
  const auto legacy = plan_barriers(
      mip_chain(3), {{0, 1, request(BarrierKind::legacy)}, {1, 2, request(BarrierKind::legacy)}},
      kChain);
  EXPECT_TRUE(legacy.findings.empty()) << legacy.findings[0].finding.message;
  for (std::uint32_t level = 0; level < 2; ++level) {
    const DependencyPlan& d = legacy.dependencies[level];
    EXPECT_EQ(d.texture, std::optional<std::size_t>{0});
    ASSERT_EQ(d.barriers.size(), 1u);
    const auto& t = std::get<D3D12_RESOURCE_BARRIER>(d.barriers[0].barrier);
    EXPECT_EQ(t.Transition.Subresource, level);
    EXPECT_EQ(t.Transition.StateBefore, D3D12_RESOURCE_STATE_RENDER_TARGET);
    EXPECT_EQ(t.Transition.StateAfter, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE);
    EXPECT_EQ(d.layout_at_consumer, D3D12_BARRIER_LAYOUT_SHADER_RESOURCE);
  }
  ASSERT_EQ(legacy.texture_final_layouts.size(), 1u);
  EXPECT_EQ(legacy.texture_final_layouts[0],
            (std::vector<D3D12_BARRIER_LAYOUT>{D3D12_BARRIER_LAYOUT_SHADER_RESOURCE,
                                               D3D12_BARRIER_LAYOUT_SHADER_RESOURCE,
                                               D3D12_BARRIER_LAYOUT_RENDER_TARGET}));
  const auto enhanced = plan_barriers(
      mip_chain(3),
      {{0, 1, request(BarrierKind::enhanced)}, {1, 2, request(BarrierKind::enhanced)}}, kChain);
  EXPECT_TRUE(enhanced.findings.empty());
  const auto& t = std::get<D3D12_TEXTURE_BARRIER>(
      std::get<EnhancedBarrier>(enhanced.dependencies[1].barriers[0].barrier));
  EXPECT_EQ(t.Subresources.IndexOrFirstMipLevel, 1u);
  EXPECT_EQ(t.Subresources.NumMipLevels, 1u);
  EXPECT_EQ(t.LayoutBefore, D3D12_BARRIER_LAYOUT_RENDER_TARGET);
  EXPECT_EQ(t.SyncAfter, D3D12_BARRIER_SYNC_PIXEL_SHADING);
}

TEST(Planner, TextureRangesMustLeaveDrawsTheirTargetAndStandInOneLayout) {
  using Span = SubresourceRequest::Span;
  auto ranged = [](BarrierKind kind, SubresourceRequest range) {
    auto r = request(kind);
    r.subresources = range;
    return r;
  };
  // Every mip after M0's draw: M1 and M2 each go back to RENDER_TARGET right before they
  // draw, one TRANSITION of their own mip (what a whole-resource barrier costs).
  const auto whole = plan_barriers(mip_chain(3), {{0, 1, ranged(BarrierKind::legacy, {})}}, kChain);
  EXPECT_TRUE(whole.findings.empty()) << whole.findings[0].finding.message;
  ASSERT_EQ(whole.target_transitions.size(), 2u);
  for (std::uint32_t mip = 1; mip <= 2; ++mip) {
    const TargetTransition& back = whole.target_transitions[mip - 1];
    EXPECT_EQ(back.workload, mip);
    const auto& t = std::get<D3D12_RESOURCE_BARRIER>(back.barrier);
    EXPECT_EQ(t.Transition.Subresource, mip);
    EXPECT_EQ(t.Transition.StateBefore, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE);
    EXPECT_EQ(t.Transition.StateAfter, D3D12_RESOURCE_STATE_RENDER_TARGET);
  }
  EXPECT_EQ(whole.texture_final_layouts[0],
            (std::vector<D3D12_BARRIER_LAYOUT>{D3D12_BARRIER_LAYOUT_SHADER_RESOURCE,
                                               D3D12_BARRIER_LAYOUT_RENDER_TARGET,
                                               D3D12_BARRIER_LAYOUT_RENDER_TARGET}));
  // Mips 0 and 1 after M1's draw: mip 0 is a shader resource by then, mip 1 a render target.
  const auto mixed = plan_barriers(
      mip_chain(3),
      {{0, 1, request(BarrierKind::legacy)}, {1, 2, ranged(BarrierKind::legacy, {Span{0, 2}, {}})}},
      kChain);
  EXPECT_TRUE(plan_has(mixed, "subresource-states"));
  // A range without the mip M1 drew orders nothing.
  const auto uncovered = plan_barriers(
      mip_chain(3), {{1, 2, ranged(BarrierKind::enhanced, {Span{0, 1}, {}})}}, kChain);
  EXPECT_TRUE(plan_has(uncovered, "subresource-uncovered"));
  EXPECT_TRUE(
      plan_has(plan_barriers(mip_chain(3),
                             {{1, 2, ranged(BarrierKind::enhanced, {Span{1, 3}, {}})}}, kChain),
               "subresource-range"));
  // The mips M1 and M2 drew, after both: one barrier for both is fine.
  auto reader = mip_chain(3);
  reader.push_back({"R", WorkloadKind::compute, 0, QueueType::direct, std::nullopt, 3});
  const auto both = plan_barriers(
      reader,
      {{0, 1, request(BarrierKind::legacy)}, {2, 3, ranged(BarrierKind::legacy, {Span{1, 2}, {}})}},
      kChain);
  EXPECT_TRUE(both.findings.empty()) << both.findings[0].finding.message;
  EXPECT_EQ(both.dependencies[1].barriers.size(), 2u);  // one TRANSITION per mip
  // A split barrier from M0 to M2 over mips 0 and 1: M1 would draw into mip 1 between its
  // BEGIN and END; over mip 0 alone it is fine.
  EXPECT_TRUE(plan_has(
      plan_barriers(mip_chain(3), {{0, 2, ranged(BarrierKind::split, {Span{0, 2}, {}})}}, kChain),
      "split-range-draw"));
  const auto mip0 = plan_barriers(mip_chain(3), {{0, 2, request(BarrierKind::split)}}, kChain);
  EXPECT_TRUE(mip0.findings.empty()) << mip0.findings[0].finding.message;
}

}  // namespace
}  // namespace gpuoverlap::barrier_tests
