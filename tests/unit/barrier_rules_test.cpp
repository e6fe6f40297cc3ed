// The D3D12 barrier rules (barriers/barrier_rules.h, barrier_planner.h): every rule has a case
// that breaks it and a case that keeps it, so a rule that stops firing or fires too often
// fails here.
#include "barriers/barrier_rules.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "barriers/barrier_planner.h"

namespace gpuoverlap {
namespace {

using S = D3D12_RESOURCE_STATES;

bool has_rule(const std::vector<BarrierFinding>& findings, const std::string& rule) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const BarrierFinding& f) { return f.rule == rule; });
}

std::vector<BarrierFinding> legacy(S before, S after, QueueType queue = QueueType::direct,
                                   ResourceKind resource = ResourceKind::buffer) {
  return check_legacy_transition(before, after, queue, resource);
}

TEST(LegacyRules, TheDefaultTransitionsAreValid) {
  EXPECT_TRUE(legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                     D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE, QueueType::compute)
                  .empty());
  EXPECT_TRUE(legacy(D3D12_RESOURCE_STATE_RENDER_TARGET, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE,
                     QueueType::direct, ResourceKind::texture)
                  .empty());
}

TEST(LegacyRules, WriteStatesAreExclusive) {
  const auto bad = legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                          static_cast<S>(D3D12_RESOURCE_STATE_COPY_DEST |
                                         D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE));
  EXPECT_TRUE(has_rule(bad, "legacy-write-combined"));
  // Read states combine freely.
  EXPECT_FALSE(has_rule(
      legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_ALL_SHADER_RESOURCE),
      "legacy-write-combined"));
}

TEST(LegacyRules, ATransitionMustChangeTheState) {
  EXPECT_TRUE(
      has_rule(legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_UNORDERED_ACCESS),
               "legacy-same-state"));
  EXPECT_FALSE(
      has_rule(legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE),
               "legacy-same-state"));
}

TEST(LegacyRules, ComputeQueuesCannotUseGraphicsStates) {
  EXPECT_TRUE(has_rule(legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                              D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE, QueueType::compute),
                       "queue-state"));
  EXPECT_FALSE(has_rule(legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                               D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE, QueueType::direct),
                        "queue-state"));
}

TEST(LegacyRules, StatesMustSuitTheResource) {
  EXPECT_TRUE(
      has_rule(legacy(D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_RENDER_TARGET),
               "resource-state"));
  EXPECT_TRUE(
      has_rule(legacy(D3D12_RESOURCE_STATE_RENDER_TARGET, D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                      QueueType::direct, ResourceKind::texture),
               "resource-state"));
  EXPECT_FALSE(has_rule(
      legacy(D3D12_RESOURCE_STATE_RENDER_TARGET, D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE,
             QueueType::direct, ResourceKind::texture),
      "resource-state"));
}

struct Enhanced {
  D3D12_BARRIER_TYPE type = D3D12_BARRIER_TYPE_BUFFER;
  D3D12_BARRIER_SYNC sync_before = D3D12_BARRIER_SYNC_COMPUTE_SHADING;
  D3D12_BARRIER_SYNC sync_after = D3D12_BARRIER_SYNC_COMPUTE_SHADING;
  D3D12_BARRIER_ACCESS access_before = D3D12_BARRIER_ACCESS_UNORDERED_ACCESS;
  D3D12_BARRIER_ACCESS access_after = D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
  D3D12_BARRIER_LAYOUT layout_before = D3D12_BARRIER_LAYOUT_UNDEFINED;
  D3D12_BARRIER_LAYOUT layout_after = D3D12_BARRIER_LAYOUT_UNDEFINED;
  QueueType queue = QueueType::direct;
  ResourceKind resource = ResourceKind::buffer;
  std::vector<BarrierFinding> check() const {
    return check_enhanced_barrier(type, sync_before, sync_after, access_before, access_after,
                                  layout_before, layout_after, queue, resource);
  }
};

// The render target's default enhanced barrier.
Enhanced texture_barrier() {
  Enhanced e;
  e.type = D3D12_BARRIER_TYPE_TEXTURE;
  e.resource = ResourceKind::texture;
  e.sync_before = D3D12_BARRIER_SYNC_RENDER_TARGET;
  e.access_before = D3D12_BARRIER_ACCESS_RENDER_TARGET;
  e.layout_before = D3D12_BARRIER_LAYOUT_RENDER_TARGET;
  e.layout_after = D3D12_BARRIER_LAYOUT_SHADER_RESOURCE;
  return e;
}

TEST(EnhancedRules, TheDefaultBarriersAreValid) {
  EXPECT_TRUE(Enhanced{}.check().empty());
  EXPECT_TRUE(texture_barrier().check().empty());
}

// A depth buffer's barrier: from the depth test's write, in DEPTH_STENCIL_WRITE, to a shader
// read. Depth scopes, accesses and layouts belong to the direct queue.
TEST(EnhancedRules, DepthBarriersNeedTheDepthScopeAndADirectQueue) {
  Enhanced depth = texture_barrier();
  depth.sync_before = D3D12_BARRIER_SYNC_DEPTH_STENCIL;
  depth.access_before = D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE;
  depth.layout_before = D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE;
  EXPECT_TRUE(depth.check().empty()) << depth.check()[0].message;
  Enhanced wrong_sync = depth;
  wrong_sync.sync_before = D3D12_BARRIER_SYNC_PIXEL_SHADING;
  EXPECT_TRUE(has_rule(wrong_sync.check(), "sync-access"));
  Enhanced wrong_layout = depth;
  wrong_layout.layout_before = D3D12_BARRIER_LAYOUT_RENDER_TARGET;
  EXPECT_TRUE(has_rule(wrong_layout.check(), "layout-access"));
  // Read by shaders in the read-only depth layout: allowed, on a direct queue only.
  Enhanced read_only = depth;
  read_only.layout_after = D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ;
  EXPECT_TRUE(read_only.check().empty()) << read_only.check()[0].message;
  Enhanced on_compute = read_only;
  on_compute.queue = QueueType::compute;
  EXPECT_TRUE(has_rule(on_compute.check(), "queue-layout"));
  EXPECT_TRUE(has_rule(on_compute.check(), "queue-sync"));
  EXPECT_TRUE(has_rule(on_compute.check(), "queue-access"));
  EXPECT_EQ(layout_for_legacy_state(D3D12_RESOURCE_STATE_DEPTH_WRITE),
            D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE);
  EXPECT_EQ(layout_for_legacy_state(D3D12_RESOURCE_STATE_DEPTH_READ |
                                    D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE),
            D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_READ);
  EXPECT_TRUE(has_rule(check_legacy_transition(D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                                               D3D12_RESOURCE_STATE_DEPTH_READ, QueueType::direct,
                                               ResourceKind::buffer),
                       "resource-state"));
}

TEST(EnhancedRules, BarrierTypeMustMatchTheResource) {
  Enhanced e;
  e.resource = ResourceKind::texture;
  EXPECT_TRUE(has_rule(e.check(), "barrier-type-resource"));
  Enhanced t = texture_barrier();
  t.resource = ResourceKind::buffer;
  EXPECT_TRUE(has_rule(t.check(), "barrier-type-resource"));
  EXPECT_FALSE(has_rule(Enhanced{}.check(), "barrier-type-resource"));
}

TEST(EnhancedRules, GlobalBarriersChangeNoLayout) {
  Enhanced e;
  e.type = D3D12_BARRIER_TYPE_GLOBAL;
  EXPECT_FALSE(has_rule(e.check(), "global-barrier-layout"));
  e.layout_after = D3D12_BARRIER_LAYOUT_SHADER_RESOURCE;
  EXPECT_TRUE(has_rule(e.check(), "global-barrier-layout"));
}

TEST(EnhancedRules, BufferBarriersHaveNoLayout) {
  Enhanced e;
  e.layout_before = D3D12_BARRIER_LAYOUT_COMMON;
  EXPECT_TRUE(has_rule(e.check(), "buffer-barrier-layout"));
  EXPECT_FALSE(has_rule(Enhanced{}.check(), "buffer-barrier-layout"));
}

TEST(EnhancedRules, LayoutsMustSuitTheQueue) {
  Enhanced t = texture_barrier();
  t.layout_after = D3D12_BARRIER_LAYOUT_DIRECT_QUEUE_SHADER_RESOURCE;
  EXPECT_FALSE(has_rule(t.check(), "queue-layout"));  // direct queue: fine
  t.queue = QueueType::compute;
  EXPECT_TRUE(has_rule(t.check(), "queue-layout"));  // and RENDER_TARGET before, too
  Enhanced c = texture_barrier();
  c.layout_after = D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_SHADER_RESOURCE;
  EXPECT_TRUE(has_rule(c.check(), "queue-layout"));  // compute layout on a direct queue
  Enhanced on_compute;
  on_compute.type = D3D12_BARRIER_TYPE_TEXTURE;
  on_compute.resource = ResourceKind::texture;
  on_compute.queue = QueueType::compute;
  on_compute.access_before = D3D12_BARRIER_ACCESS_SHADER_RESOURCE;
  on_compute.layout_before = D3D12_BARRIER_LAYOUT_COMPUTE_QUEUE_SHADER_RESOURCE;
  on_compute.layout_after = D3D12_BARRIER_LAYOUT_SHADER_RESOURCE;
  EXPECT_FALSE(has_rule(on_compute.check(), "queue-layout"));
}

TEST(EnhancedRules, ComputeQueuesRunNoGraphicsSyncOrAccess) {
  Enhanced e;
  e.queue = QueueType::compute;
  EXPECT_TRUE(e.check().empty());
  e.sync_after = D3D12_BARRIER_SYNC_PIXEL_SHADING;
  EXPECT_TRUE(has_rule(e.check(), "queue-sync"));
  Enhanced a;
  a.queue = QueueType::compute;
  a.sync_after = D3D12_BARRIER_SYNC_ALL;
  a.access_after = D3D12_BARRIER_ACCESS_INDEX_BUFFER;
  EXPECT_TRUE(has_rule(a.check(), "queue-access"));
  a.queue = QueueType::direct;
  EXPECT_FALSE(has_rule(a.check(), "queue-access"));
}

TEST(EnhancedRules, SyncMustBeAbleToPerformTheAccess) {
  Enhanced e;
  e.sync_after = D3D12_BARRIER_SYNC_COPY;  // a shader-resource read needs a shading scope
  EXPECT_TRUE(has_rule(e.check(), "sync-access"));
  Enhanced rt = texture_barrier();
  rt.sync_before = D3D12_BARRIER_SYNC_COMPUTE_SHADING;  // RENDER_TARGET access needs RT/DRAW/ALL
  EXPECT_TRUE(has_rule(rt.check(), "sync-access"));
  rt.sync_before = D3D12_BARRIER_SYNC_DRAW;
  EXPECT_FALSE(has_rule(rt.check(), "sync-access"));
  Enhanced none;
  none.sync_before = D3D12_BARRIER_SYNC_NONE;  // NONE needs NO_ACCESS
  EXPECT_TRUE(has_rule(none.check(), "sync-access"));
  none.access_before = D3D12_BARRIER_ACCESS_NO_ACCESS;
  EXPECT_FALSE(has_rule(none.check(), "sync-access"));
}

TEST(EnhancedRules, NoAccessAndSplitStandAlone) {
  Enhanced e;
  e.access_after = static_cast<D3D12_BARRIER_ACCESS>(D3D12_BARRIER_ACCESS_NO_ACCESS |
                                                     D3D12_BARRIER_ACCESS_SHADER_RESOURCE);
  EXPECT_TRUE(has_rule(e.check(), "no-access-combined"));
  Enhanced s;
  s.sync_after = static_cast<D3D12_BARRIER_SYNC>(D3D12_BARRIER_SYNC_SPLIT |
                                                 D3D12_BARRIER_SYNC_COMPUTE_SHADING);
  EXPECT_TRUE(has_rule(s.check(), "split-combined"));
  Enhanced ok;
  ok.sync_after = D3D12_BARRIER_SYNC_SPLIT;  // a BEGIN half
  EXPECT_FALSE(has_rule(ok.check(), "split-combined"));
  EXPECT_FALSE(has_rule(ok.check(), "no-access-combined"));
}

TEST(EnhancedRules, AccessMustSuitTheLayout) {
  Enhanced t = texture_barrier();
  t.layout_after = D3D12_BARRIER_LAYOUT_RENDER_TARGET;  // SHADER_RESOURCE access there
  EXPECT_TRUE(has_rule(t.check(), "layout-access"));
  t.layout_after = D3D12_BARRIER_LAYOUT_GENERIC_READ;
  EXPECT_FALSE(has_rule(t.check(), "layout-access"));
}

TEST(EnhancedRules, AccessBeforeCommonWarns) {
  Enhanced e;
  e.access_before = D3D12_BARRIER_ACCESS_COMMON;
  const auto findings = e.check();
  ASSERT_TRUE(has_rule(findings, "access-before-common"));
  for (const auto& f : findings) EXPECT_EQ(f.severity, BarrierFinding::Severity::warning);
  EXPECT_FALSE(has_rule(Enhanced{}.check(), "access-before-common"));
}

TEST(SyncCoverage, UmbrellaScopesIncludeTheirParts) {
  EXPECT_TRUE(sync_covers(D3D12_BARRIER_SYNC_ALL, D3D12_BARRIER_SYNC_RENDER_TARGET));
  EXPECT_TRUE(sync_covers(D3D12_BARRIER_SYNC_ALL_SHADING, D3D12_BARRIER_SYNC_COMPUTE_SHADING));
  EXPECT_TRUE(sync_covers(D3D12_BARRIER_SYNC_DRAW, D3D12_BARRIER_SYNC_PIXEL_SHADING));
  EXPECT_FALSE(sync_covers(D3D12_BARRIER_SYNC_DRAW, D3D12_BARRIER_SYNC_COMPUTE_SHADING));
  EXPECT_FALSE(sync_covers(D3D12_BARRIER_SYNC_NON_PIXEL_SHADING, D3D12_BARRIER_SYNC_PIXEL_SHADING));
}

// --- the planner: rules that need the producer, the consumer and the resource's state ---

std::vector<PlannerWorkload> two_queues() {
  return {{"A", WorkloadKind::compute, 0, QueueType::direct},
          {"G", WorkloadKind::graphics, 0, QueueType::direct},
          {"B", WorkloadKind::compute, 0, QueueType::direct},
          {"Q", WorkloadKind::compute, 1, QueueType::compute}};
}

BarrierRequest request(BarrierKind kind) {
  BarrierRequest r;
  r.kind = kind;
  return r;
}

bool plan_has(const BarrierPlan& plan, const std::string& rule) {
  return std::any_of(plan.findings.begin(), plan.findings.end(),
                     [&](const BarrierPlanFinding& f) { return f.finding.rule == rule; });
}

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

// A mip chain on a declared texture: each level's draw reads the level before. The planner tracks
// every subresource: a barrier covers by default the mip its producer drew, a draw needs its mip
// in RENDER_TARGET, and one barrier covers subresources of one layout.
std::vector<PlannerWorkload> mip_chain(std::size_t levels) {
  std::vector<PlannerWorkload> draws;
  for (std::size_t m = 0; m < levels; ++m)
    draws.push_back({"M" + std::to_string(m), WorkloadKind::graphics, 0, QueueType::direct,
                     TextureTarget{0, static_cast<std::uint32_t>(m), 0}, m});
  return draws;
}
const std::vector<PlannerTexture> kChain = {{"T", {3, 1}}};

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

}  // namespace
}  // namespace gpuoverlap
