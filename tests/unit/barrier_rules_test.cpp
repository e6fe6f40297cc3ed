// The D3D12 barrier rules (barriers/barrier_rules.h) on one barrier each: every rule has a case
// that breaks it and a case that keeps it, so a rule that stops firing or fires too often
// fails here. The planner's rules (barrier_planner.h) are tested in barrier_planner_test.cpp
// and the barrier_*_test.cpp files beside it.
#include "barriers/barrier_rules.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpuoverlap::barrier_tests {
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

}  // namespace
}  // namespace gpuoverlap::barrier_tests
