#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "core/cpu_affinity.h"
#include "core/kept_memory.h"
#include "scenarios/frame_plan.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"
#include "scenarios/scenario_toml.h"

namespace gpuoverlap {
namespace {

// The scenario format's original example, verbatim: these fields must keep working as written.
constexpr const char* kThreeDispatchesExample = R"(name = "three-dispatches"
description = "C waits for A while B, longer than A, runs between them"
frames = 100
warmup_frames = 10
barrier = "legacy"            # default for dependencies: none | legacy | split (later: enhanced)

[queues.direct]
type = "direct"               # direct | compute
priority = "normal"           # normal | high | realtime

[[workload]]
name = "Compute A"
queue = "direct"
kind = "compute"              # compute | graphics
groups = 8                    # x 1024 threads (graphics: 1024 x groups pixels)
iterations = 64

[[workload]]
name = "Compute B"
queue = "direct"
kind = "compute"
groups = 8
iterations = 128

[[workload]]
name = "Compute C"
queue = "direct"
kind = "compute"
groups = 8
iterations = 64
depends_on = ["Compute A"]    # or [{ workload = "Compute A", barrier = "split" }]
)";

std::string error_of(const std::string& text) {
  auto result = parse_scenario(text, "test.toml");
  EXPECT_FALSE(result.ok()) << "expected a rejection of:\n" << text;
  return result.ok() ? std::string{} : result.error().message;
}

// A valid two-queue scenario to mutate in the error tests.
std::string two_queues(const std::string& extra_workload = "",
                       const std::string& c_deps = "[\"A\"]") {
  return R"(name = "t"
[queues.direct]
type = "direct"
[queues.compute]
type = "compute"
[[workload]]
name = "A"
queue = "direct"
[[workload]]
name = "B"
queue = "compute"
[[workload]]
name = "C"
queue = "direct"
depends_on = )" +
         c_deps + "\n" + extra_workload;
}

TEST(ScenarioParser, ParsesTheThreeDispatchesExampleAsWritten) {
  auto s = parse_scenario(kThreeDispatchesExample, "example.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->name, "three-dispatches");
  EXPECT_EQ(s->frames, 100u);
  EXPECT_EQ(s->warmup_frames, 10u);
  EXPECT_EQ(s->default_barrier, BarrierKind::legacy);
  ASSERT_EQ(s->queues.size(), 1u);
  EXPECT_EQ(s->queues[0].type, QueueType::direct);
  ASSERT_EQ(s->workloads.size(), 3u);
  EXPECT_EQ(s->workloads[1].iterations, 128u);
  ASSERT_EQ(s->workloads[2].depends_on.size(), 1u);
  EXPECT_EQ(s->workloads[2].depends_on[0].producer, 0u);
  EXPECT_EQ(s->workloads[2].depends_on[0].barrier.kind, BarrierKind::legacy);
}

TEST(ScenarioParser, DependencyTableOverridesTheBarrier) {
  std::string text = kThreeDispatchesExample;
  const std::string plain = R"(depends_on = ["Compute A"])";
  text.replace(text.find(plain), plain.size(),
               R"(depends_on = [{ workload = "Compute A", barrier = "split" }])");
  auto s = parse_scenario(text, "example.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->workloads[2].depends_on[0].barrier.kind, BarrierKind::split);
}

TEST(ScenarioParser, KeepsQueuesInFileOrder) {
  auto s = parse_scenario(R"(name = "t"
[queues.zeta]
type = "compute"
[queues.alpha]
type = "direct"
[[workload]]
name = "A"
queue = "alpha"
)",
                          "t.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->queues.size(), 2u);
  EXPECT_EQ(s->queues[0].name, "zeta");
  EXPECT_EQ(s->queues[1].name, "alpha");
  EXPECT_EQ(s->workloads[0].queue, 1u);
}

TEST(ScenarioParser, EveryPresetIsValidAndNamedAfterItsFile) {
  // MJP's five (three-dispatches-split is now -split-event) + 11 barrier presets + the game
  // frame, the non-intrusiveness and background-policies studies and the two
  // background-processing workflows + 12
  // preemption presets and the preemption matrix + the texture presets, each with its legacy
  // twin (mip-chain, render-target-discard, texture-read-after-render, upload-copy,
  // aliasing-handover, texture-rewrite, upload-texture, depth-prepass, readback).
  ASSERT_EQ(presets().size(), 52u);
  for (const Preset& p : presets()) {
    auto expanded = resolve_scenarios(std::string(p.name));
    ASSERT_TRUE(expanded.ok()) << p.name << ": " << expanded.error().message;
    for (const Scenario& s : *expanded) {
      // A study's or a matrix's scenarios are named "<preset>/...".
      EXPECT_EQ(s.study.empty() && expanded->size() == 1 ? s.name : s.name.substr(0, p.name.size()),
                p.name);
      EXPECT_FALSE(s.description.empty());
    }
  }
}

TEST(ScenarioParser, PresetsAreMjpsSetups) {
  auto def = resolve_scenario("default");
  ASSERT_TRUE(def.ok());
  ASSERT_EQ(def->workloads.size(), 8u);
  const char* names[] = {"Compute A", "Compute B",       "Compute C",       "Gfx A",
                         "Compute D", "Compute Queue A", "Compute Queue B", "Compute Queue C"};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(def->workloads[i].name, names[i]);
  EXPECT_EQ(def->workloads[3].kind, WorkloadKind::graphics);
  // Each depends on the previous one on its queue through a legacy barrier.
  for (std::size_t q = 0; q < def->queues.size(); ++q) {
    auto on_queue = def->workloads_on(q);
    for (std::size_t i = 1; i < on_queue.size(); ++i) {
      ASSERT_EQ(def->workloads[on_queue[i]].depends_on.size(), 1u);
      EXPECT_EQ(def->workloads[on_queue[i]].depends_on[0].producer, on_queue[i - 1]);
      EXPECT_EQ(def->workloads[on_queue[i]].depends_on[0].barrier.kind, BarrierKind::legacy);
    }
  }
  auto none = resolve_scenario("no-barriers");
  ASSERT_TRUE(none.ok());
  for (const auto& w : none->workloads)
    for (const auto& d : w.depends_on) EXPECT_EQ(d.barrier.kind, BarrierKind::none);
  auto high = resolve_scenario("high-priority-compute");
  ASSERT_TRUE(high.ok());
  EXPECT_EQ(high->queues[1].type, QueueType::compute);
  EXPECT_EQ(high->queues[1].priority, QueuePriority::high);
  auto split = resolve_scenario("three-dispatches-split-event");
  ASSERT_TRUE(split.ok());
  ASSERT_EQ(split->workloads.size(), 3u);
  EXPECT_GT(split->workloads[1].iterations, split->workloads[0].iterations);
  EXPECT_EQ(split->workloads[2].depends_on.at(0).producer, 0u);
  EXPECT_EQ(split->workloads[2].depends_on.at(0).barrier.kind, BarrierKind::split);
  EXPECT_EQ(split->workloads[2].depends_on.at(0).barrier.split_policy, SplitPolicy::event);
}

// The barrier variants differ from their base preset in the barrier only: same queues, same
// workloads, same dependency graph.
TEST(ScenarioParser, BarrierVariantsDifferOnlyInTheBarrier) {
  struct Variant {
    const char* suffix;
    BarrierKind kind;
    SplitPolicy policy;
    bool sync_all;
  };
  const Variant variants[] = {
      {"legacy", BarrierKind::legacy, SplitPolicy::event, false},
      {"split-event", BarrierKind::split, SplitPolicy::event, false},
      {"split-collapsed", BarrierKind::split, SplitPolicy::collapsed, false},
      {"enhanced", BarrierKind::enhanced, SplitPolicy::event, false},
      {"enhanced-sync-all", BarrierKind::enhanced, SplitPolicy::event, true}};
  for (const char* base : {"default", "three-dispatches"}) {
    auto reference = resolve_scenario(base);
    ASSERT_TRUE(reference.ok());
    for (const Variant& v : variants) {
      const std::string name = std::string(base) + "-" + v.suffix;
      SCOPED_TRACE(name);
      auto s = resolve_scenario(name);
      ASSERT_TRUE(s.ok()) << s.error().message;
      ASSERT_EQ(s->workloads.size(), reference->workloads.size());
      ASSERT_EQ(s->queues.size(), reference->queues.size());
      for (std::size_t w = 0; w < s->workloads.size(); ++w) {
        const auto& a = s->workloads[w];
        const auto& b = reference->workloads[w];
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.queue, b.queue);
        EXPECT_EQ(a.kind, b.kind);
        EXPECT_EQ(a.groups, b.groups);
        EXPECT_EQ(a.iterations, b.iterations);
        ASSERT_EQ(a.depends_on.size(), b.depends_on.size());
        for (std::size_t d = 0; d < a.depends_on.size(); ++d) {
          EXPECT_EQ(a.depends_on[d].producer, b.depends_on[d].producer);
          EXPECT_EQ(a.depends_on[d].barrier.kind, v.kind);
          if (is_split(v.kind)) {
            EXPECT_EQ(a.depends_on[d].barrier.split_policy, v.policy);
          }
          EXPECT_EQ(a.depends_on[d].barrier.sync_before.has_value(), v.sync_all);
          if (v.sync_all) {
            EXPECT_EQ(*a.depends_on[d].barrier.sync_before, D3D12_BARRIER_SYNC_ALL);
            EXPECT_EQ(*a.depends_on[d].barrier.sync_after, D3D12_BARRIER_SYNC_ALL);
          }
        }
      }
    }
  }
}

TEST(ScenarioParser, ReadsEnhancedAndSplitDetailsPerDependency) {
  auto s = parse_scenario(
      two_queues(
          "",
          R"([{ workload = "A", barrier = "enhanced", sync_before = "compute_shading", access_before = "unordered_access", sync_after = "compute_shading|pixel_shading", access_after = "shader_resource" }])"),
      "t.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const BarrierRequest& r = s->workloads[2].depends_on[0].barrier;
  EXPECT_EQ(r.kind, BarrierKind::enhanced);
  EXPECT_EQ(*r.sync_after, static_cast<D3D12_BARRIER_SYNC>(D3D12_BARRIER_SYNC_COMPUTE_SHADING |
                                                           D3D12_BARRIER_SYNC_PIXEL_SHADING));
  EXPECT_EQ(*r.access_before, D3D12_BARRIER_ACCESS_UNORDERED_ACCESS);
  auto policy = parse_scenario("split_policy = \"collapsed\"\nbarrier = \"split\"\n" + two_queues(),
                               "t.toml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->workloads[2].depends_on[0].barrier.split_policy, SplitPolicy::collapsed);
  auto states = parse_scenario(
      two_queues(
          "",
          R"([{ workload = "A", state_after = "non_pixel_shader_resource|pixel_shader_resource", reads_output = false }])"),
      "t.toml");
  ASSERT_TRUE(states.ok()) << states.error().message;
  EXPECT_EQ(*states->workloads[2].depends_on[0].barrier.state_after,
            D3D12_RESOURCE_STATE_ALL_SHADER_RESOURCE);
  EXPECT_EQ(states->workloads[2].depends_on[0].barrier.reads_output, false);
}

TEST(ScenarioParser, RejectsBarrierDetailsThatDoNotFitOrBreakTheRules) {
  auto dep = [](const std::string& table) { return error_of(two_queues("", "[" + table + "]")); };
  const std::string wrong_kind =
      dep(R"({ workload = "A", barrier = "legacy", sync_before = "all" })");
  EXPECT_NE(wrong_kind.find("describe enhanced barriers"), std::string::npos) << wrong_kind;
  const std::string unknown =
      dep(R"({ workload = "A", barrier = "enhanced", sync_after = "warp" })");
  EXPECT_NE(unknown.find("unknown sync_after 'warp'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("compute_shading"), std::string::npos) << unknown;  // lists the names
  const std::string policy =
      dep(R"({ workload = "A", barrier = "legacy", split_policy = "event" })");
  EXPECT_NE(policy.find("split_policy applies to split"), std::string::npos) << policy;
  // A rule of the planner, with file, line, scenario, dependency and rule id.
  const std::string rule = dep(R"({ workload = "A", barrier = "enhanced", type = "texture" })");
  EXPECT_NE(rule.find("test.toml:15:"), std::string::npos) << rule;
  EXPECT_NE(rule.find("scenario 't', dependency 'A' -> 'C'"), std::string::npos) << rule;
  EXPECT_NE(rule.find("[barrier-type-resource]"), std::string::npos) << rule;
}

// subresources = { mips = [first, count], slices = [first, count] } on a transition; the
// planner checks the range against the texture (barrier_rules_test.cpp).
TEST(ScenarioParser, ReadsSubresourcesAndRefusesMalformedOnes) {
  const std::string draw = R"(
[[workload]]
name = "G"
queue = "direct"
kind = "graphics"
[[workload]]
name = "R"
queue = "direct"
depends_on = )";
  auto scenario = [&](const std::string& table) { return two_queues(draw + "[" + table + "]"); };
  auto parsed = parse_scenario(
      scenario(R"({ workload = "G", barrier = "enhanced", subresources = { mips = [0, 1] } })"),
      "test.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const auto& request = parsed->workloads.back().depends_on.at(0).barrier;
  ASSERT_TRUE(request.subresources);
  EXPECT_EQ(request.subresources->mips, (SubresourceRequest::Span{0, 1}));
  EXPECT_FALSE(request.subresources->slices);
  auto refused = [&](const std::string& table, const std::string& reason) {
    const std::string message = error_of(scenario(table));
    EXPECT_NE(message.find(reason), std::string::npos) << table << "\n" << message;
    EXPECT_NE(message.find("test.toml:"), std::string::npos) << message;
  };
  refused(R"({ workload = "G", subresources = [0, 1] })", "must be a table");
  refused(R"({ workload = "G", subresources = { levels = [0, 1] } })", "unknown key 'levels'");
  refused(R"({ workload = "G", subresources = { mips = [0] } })", "[first, count]");
  refused(R"({ workload = "G", subresources = { mips = [0, "1"] } })", "[first, count]");
  refused(R"({ workload = "G", subresources = { mips = [0, 0] } })", "count is 0");
  refused(R"({ workload = "G", subresources = { slices = [-1, 1] } })", "first is -1");
  refused(R"({ workload = "G", barrier = "uav", subresources = { mips = [0, 1] } })",
          "barrier 'uav' has none");
  refused(R"({ workload = "G", barrier = "none", subresources = { mips = [0, 1] } })",
          "barrier 'none' has none");
  // The planner's rules, with their ids: a render target has one mip; a buffer none.
  refused(R"({ workload = "G", subresources = { mips = [0, 2] } })", "[subresource-range]");
  refused(R"({ workload = "A", subresources = { mips = [0, 1] } })", "[subresource-buffer]");
}

// [[texture]] declares a texture; a draw's target renders into one of its subresources.
TEST(ScenarioParser, ReadsTexturesAndDrawTargetsAndRefusesBadOnes) {
  auto with = [](const std::string& textures, const std::string& draw) {
    return two_queues(R"(
[[workload]]
name = "M0"
queue = "direct"
kind = "graphics"
)" + draw) +
           textures;
  };
  const std::string chain = R"(
[[texture]]
name = "chain"
format = "rgba16f"
width = 256
height = 64
mips = 3
slices = 2
)";
  auto parsed =
      parse_scenario(with(chain, "target = { texture = \"chain\", mip = 2, slice = 1 }\n"), "t");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->textures.size(), 1u);
  const TextureSpec& t = parsed->textures[0];
  EXPECT_EQ(t.format, TextureFormat::rgba16f);
  EXPECT_EQ(t.width, 256u);
  EXPECT_EQ(t.mips, 3u);
  EXPECT_EQ(t.slices, 2u);
  const auto& drawn = parsed->workloads.back().target;
  ASSERT_TRUE(drawn);
  EXPECT_EQ(drawn->mip, 2u);
  EXPECT_EQ(drawn->slice, 1u);
  auto refused = [&](const std::string& textures, const std::string& draw,
                     const std::string& reason) {
    const std::string message = error_of(with(textures, draw));
    EXPECT_NE(message.find(reason), std::string::npos) << textures << draw << "\n" << message;
    EXPECT_NE(message.find("test.toml:"), std::string::npos) << message;
  };
  const std::string target = "target = { texture = \"chain\" }\n";
  refused(R"(
[[texture]]
name = "chain"
format = "d24s8"
width = 4
height = 4
)",
          target, "unknown format 'd24s8'");
  // d32: a draw's depth attachment; a dispatch's unordered-access store cannot write it.
  const std::string depth =
      "\n[[texture]]\nname = \"chain\"\nformat = \"d32\"\nwidth = 64\nheight = 64\n";
  auto depth_drawn = parse_scenario(with(depth, target), "t");
  ASSERT_TRUE(depth_drawn) << depth_drawn.error().message;
  EXPECT_EQ(depth_drawn->textures[0].format, TextureFormat::d32);
  EXPECT_EQ(depth_drawn->plan->barriers.texture_start_states[0], D3D12_RESOURCE_STATE_DEPTH_WRITE);
  const std::string depth_dispatch =
      two_queues(
          "\n[[workload]]\nname = \"W\"\nqueue = \"direct\"\ntarget = { texture = \"chain\" }\n") +
      depth;
  EXPECT_NE(error_of(depth_dispatch).find("which is d32: a dispatch writes r32f textures only"),
            std::string::npos)
      << error_of(depth_dispatch);
  refused("\n[[texture]]\nname = \"chain\"\nwidth = 4\n", target, "needs 'height'");
  refused("\n[[texture]]\nname = \"chain\"\nwidth = 4\nheight = 4\nmips = 4\n", target,
          "must be in [1, 3]");  // 4 x 4 has 3 mips
  refused("\n[[texture]]\nname = \"chain\"\nwidth = 8192\nheight = 4\n", target,
          "must be in [1, 4096]");
  refused(chain + chain, target, "duplicate texture name 'chain'");
  refused(chain, "target = { texture = \"other\" }\n", "undeclared texture 'other'");
  refused(chain, "target = { texture = \"chain\", mip = 3 }\n", "has 3 mips");
  refused(chain, "target = { texture = \"chain\", slice = 2 }\n", "has 2 slices");
  refused(chain, "target = \"chain\"\n", "must be a table");
  refused(chain, target + "groups = 4\n", "'groups' does not apply");
  refused(chain, "target = { texture = \"chain\", discard = 1 }\n",
          "'discard' must be true or false");
  // A dispatch writes r32f textures only, a thread per pixel in groups of 64; a second write
  // into a subresource needs a read between.
  auto dispatch_into = [&](const std::string& format, std::uint32_t mip) {
    return two_queues(R"(
[[workload]]
name = "K"
queue = "direct"
target = { texture = "chain", mip = )" +
                      std::to_string(mip) + " }\n") +
           "[[texture]]\nname = \"chain\"\nformat = \"" + format +
           "\"\nwidth = 256\nheight = 64\nmips = 6\n";
  };
  EXPECT_NE(error_of(dispatch_into("rgba8", 0))
                .find("workload 'K' is a dispatch writing 'chain', which is rgba8: a dispatch "
                      "writes r32f textures only"),
            std::string::npos)
      << error_of(dispatch_into("rgba8", 0));
  EXPECT_NE(error_of(dispatch_into("r32f", 5))
                .find("workload 'K' writes mip 5 of 'chain', 16 pixels: a dispatch runs a thread "
                      "per pixel in groups of 64"),
            std::string::npos)
      << error_of(dispatch_into("r32f", 5));
  // 4096 x 1024 pixels: 65,536 groups of 64, one more than a dispatch may run.
  const std::string big = dispatch_into("r32f", 0);
  const std::string too_big =
      big.substr(0, big.find("width = 256")) + "width = 4096\nheight = 1024\nmips = 6\n";
  EXPECT_NE(error_of(too_big).find("4194304 pixels: more than 65535 groups of 64 threads"),
            std::string::npos)
      << error_of(too_big);
  {
    auto k = parse_scenario(dispatch_into("r32f", 2), "t");  // 64 x 16 pixels
    ASSERT_TRUE(k) << k.error().message;
    ASSERT_TRUE(k->workloads.back().target);
    EXPECT_EQ(k->workloads.back().target->mip, 2u);
    EXPECT_EQ(workload_shape(*k, k->workloads.size() - 1).threads, 64u * 16u);
  }
  EXPECT_NE(error_of(dispatch_into("r32f", 0) + "[[workload]]\nname = \"K2\"\nqueue = "
                                                "\"direct\"\ntarget = { texture = \"chain\", "
                                                "mip = 0 }\ngroups = 2\n")
                .find("it runs a thread per pixel of the target mip's, so 'groups' does not apply"),
            std::string::npos);
  const std::string twice = with(chain, target + R"(
[[workload]]
name = "M1"
queue = "direct"
kind = "graphics"
)" + target);
  const std::string rewritten = error_of(twice);
  EXPECT_NE(rewritten.find("workload 'M1': 'M1' renders into mip 0, slice 0 of 'chain', which an "
                           "earlier write left and nothing read since"),
            std::string::npos)
      << rewritten;
  EXPECT_NE(rewritten.find("[target-rewrite]"), std::string::npos);
  // A texture is restored at frame start on one queue: its draws share it.
  const std::string two_direct = R"(name = "t"
[queues.a]
type = "direct"
[queues.b]
type = "direct"
[[texture]]
name = "chain"
width = 64
height = 4
mips = 2
[[workload]]
name = "M0"
queue = "a"
kind = "graphics"
target = { texture = "chain", mip = 0 }
[[workload]]
name = "M1"
queue = "b"
kind = "graphics"
target = { texture = "chain", mip = 1 }
)";
  EXPECT_NE(error_of(two_direct)
                .find("test.toml:20: workload 'M1' writes 'chain' on queue 'b', 'M0' on queue "
                      "'a': a texture's writers share one queue"),
            std::string::npos)
      << error_of(two_direct);
}

TEST(ScenarioParser, ReadsHeapsOfAliasedTexturesAndRefusesBadOnes) {
  auto scenario = [](const std::string& second_texture, const std::string& second_draw) {
    return std::string(R"(name = "h"
[queues.direct]
type = "direct"
[[texture]]
name = "a"
width = 64
height = 64
heap = "transient"
)") + second_texture +
           R"(
[[workload]]
name = "Draw A"
queue = "direct"
kind = "graphics"
target = { texture = "a" }
[[workload]]
name = "Read A"
queue = "direct"
groups = 1
depends_on = ["Draw A"]
)" + second_draw;
  };
  const std::string b =
      "[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nheap = \"transient\"\n";
  const std::string draw_b =
      "[[workload]]\nname = \"Draw B\"\nqueue = \"direct\"\nkind = \"graphics\"\n"
      "target = { texture = \"b\" }\n";
  auto parsed = parse_scenario(scenario(b, draw_b), "h.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->textures[0].heap, "transient");
  EXPECT_EQ(parsed->textures[1].heap, "transient");
  EXPECT_EQ(parsed->plan->barriers.texture_aliased, (std::vector<bool>{true, true}));
  auto again = parse_scenario(to_toml(*parsed), "again.toml");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->textures, parsed->textures);

  // One texture alone in its heap (a misspelt name, most likely).
  std::string error = error_of(scenario(
      "[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nheap = \"transiant\"\n", draw_b));
  EXPECT_NE(error.find("texture 'a' is the only one in heap 'transient'"), std::string::npos)
      << error;
  EXPECT_NE(error.find("test.toml"), std::string::npos);
  // A texture of several subresources.
  error = error_of(scenario(
      "[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nmips = 2\nheap = \"transient\"\n",
      draw_b));
  EXPECT_NE(error.find("a texture in a heap has one of each"), std::string::npos) << error;
  // Nothing writes b.
  error = error_of(scenario(b, ""));
  EXPECT_NE(error.find("'b' in heap 'transient' is not written"), std::string::npos) << error;
  // A bad heap name.
  error = error_of(
      scenario("[[texture]]\nname = \"b\"\nwidth = 64\nheight = 64\nheap = \"\"\n", draw_b));
  EXPECT_NE(error.find("heap name '' is empty"), std::string::npos) << error;
  // 'Late' reads a after Draw B wrote b: a would still be read while b holds the memory.
  error =
      error_of(scenario(b, draw_b + "depends_on = [\"Draw A\"]\n[[workload]]\nname = \"Late\"\n"
                                    "queue = \"direct\"\ngroups = 1\ndepends_on = [\"Draw A\"]\n"));
  EXPECT_NE(error.find("[heap-overlap]"), std::string::npos) << error;
}

TEST(ScenarioParser, WarningsAreKeptNotFatal) {
  auto s = parse_scenario(
      two_queues("", R"([{ workload = "A", barrier = "enhanced", access_before = "common" }])"),
      "t.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("[access-before-common]"), std::string::npos) << s->warnings[0];
  EXPECT_NE(s->warnings[0].find("t.toml:15: warning:"), std::string::npos) << s->warnings[0];
}

TEST(ScenarioParser, RejectsUnknownKeysWithFileAndLine) {
  std::string text = two_queues();
  text.replace(text.find("[[workload]]\nname = \"B\""), 0,
               "[[workload]]\nname = \"X\"\nqueue = \"direct\"\ngrups = 3\n");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("test.toml:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'grups'"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:12:"), std::string::npos) << e;  // the line of 'grups'
}

TEST(ScenarioParser, RejectsUnknownWorkloadInDependsOn) {
  EXPECT_NE(error_of(two_queues("", "[\"Nope\"]")).find("unknown workload 'Nope'"),
            std::string::npos);
}

TEST(ScenarioParser, RejectsCyclesNamingThem) {
  const std::string e = error_of(R"(name = "t"
[queues.direct]
type = "direct"
[[workload]]
name = "A"
queue = "direct"
depends_on = ["B"]
[[workload]]
name = "B"
queue = "direct"
depends_on = ["A"]
)");
  EXPECT_NE(e.find("dependency cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("A -> B -> A"), std::string::npos) << e;
}

// A valid scenario with a [background] table holding `keys`.
std::string with_background(const std::string& keys) {
  return two_queues() + "\n[background]\n" + keys + "\n";
}

TEST(ScenarioBackground, EveryKeyIsReadAndDefaultsAreTheSpecs) {
  auto plain = parse_scenario(two_queues(), "t.toml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->background.has_value());
  auto defaults = parse_scenario(with_background(""), "t.toml");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  ASSERT_TRUE(defaults->background.has_value());
  EXPECT_EQ(defaults->background->mode, background::ProcessingMode::allowed);
  EXPECT_EQ(defaults->background->action, background::MeasurementsAction::keep_all);
  EXPECT_EQ(defaults->background->max_concurrent, 2u) << "the spec's 'at most two'";
  EXPECT_FALSE(defaults->background->developer_mode);
  EXPECT_EQ(defaults->background->unmanaged_threads, 0u);
  EXPECT_EQ(defaults->background->policy, ThreadPolicy::idle) << "the spec's idle priority";
  // Every policy of this OS is read.
  for (ThreadPolicy policy : thread_policies_here()) {
    auto with_policy = parse_scenario(
        with_background("policy = \"" + std::string(to_string(policy)) + "\""), "t.toml");
    ASSERT_TRUE(with_policy.ok()) << with_policy.error().message;
    EXPECT_EQ(with_policy->background->policy, policy);
  }
  // Placement, memory, cgroup and dispatch, and their defaults (the spec's runtime).
  EXPECT_EQ(defaults->background->cpus.kind, background::CpuPlacementKind::any);
  EXPECT_EQ(defaults->background->allocator, background::Allocator::system);
  EXPECT_FALSE(defaults->background->cgroup_idle);
  EXPECT_EQ(defaults->background->dispatch, background::Dispatch::any);
  const int first_cpu = usable_cpu_ids().front();
  auto placed = parse_scenario(
      with_background(fmt::format("cpus = [{}]\nallocator = \"keep\"\ncgroup_idle = true\n"
                                  "dispatch = \"gaps\"",
                                  first_cpu)),
      "t.toml");
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_EQ(placed->background->cpus.kind, background::CpuPlacementKind::list);
  EXPECT_EQ(placed->background->cpus.cpus, std::vector<int>{first_cpu});
  EXPECT_EQ(placed->background->allocator, background::Allocator::keep);
  EXPECT_TRUE(placed->background->cgroup_idle);
  EXPECT_EQ(placed->background->dispatch, background::Dispatch::gaps);
  for (const char* text : {"any", "siblings", "reserved:1"}) {
    auto any = background::parse_cpu_placement(text);
    ASSERT_TRUE(any.has_value()) << text;
    EXPECT_EQ(background::describe(*any), text);
  }
  auto s = parse_scenario(with_background(R"(mode = "disable_profiling_by_system"
action = "commit_results_high_priority"
action_every_frame = true
tasks = 5
continuous = false
max_concurrent = 3
developer_mode = true
converge_after_passes = 4
commit_timeout_ms = 1000
bind_committed = true
before_frames = 7
fold_iterations = false)"),
                          "t.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const auto& b = *s->background;
  EXPECT_EQ(b.mode, background::ProcessingMode::disable_profiling_by_system);
  EXPECT_EQ(b.action, background::MeasurementsAction::commit_results_high_priority);
  EXPECT_TRUE(b.action_every_frame);
  EXPECT_EQ(b.tasks, 5u);
  EXPECT_FALSE(b.continuous);
  EXPECT_EQ(b.max_concurrent, 3u);
  EXPECT_TRUE(b.developer_mode);
  EXPECT_EQ(b.converge_after_passes, 4u);
  EXPECT_EQ(b.commit_timeout_ms, 1000u);
  EXPECT_TRUE(b.bind_committed);
  EXPECT_EQ(b.before_frames, 7u);
  EXPECT_FALSE(b.fold_iterations);
  EXPECT_FALSE(defaults->background->bind_committed);
  EXPECT_TRUE(defaults->background->fold_iterations);
  EXPECT_EQ(defaults->background->alternate_frames, 0u);
  auto alternating =
      parse_scenario(with_background("unmanaged_threads = 2\nalternate_frames = 50"), "t.toml");
  ASSERT_TRUE(alternating.ok()) << alternating.error().message;
  EXPECT_EQ(alternating->background->alternate_frames, 50u);
  auto cores = parse_scenario(with_background("unmanaged_threads = \"cores\""), "t.toml");
  ASSERT_TRUE(cores.ok()) << cores.error().message;
  EXPECT_GE(cores->background->unmanaged_threads, 1u);
  auto pix =
      parse_scenario(with_background("workflow = \"single-frame-analysis\"\ndeveloper_mode = true\n"
                                     "training_frames = 1\nmax_passes = 4"),
                     "t.toml");
  ASSERT_TRUE(pix.ok()) << pix.error().message;
  EXPECT_EQ(pix->background->workflow, background::Workflow::single_frame_analysis);
  EXPECT_EQ(pix->background->max_passes, 4u);
}

TEST(ScenarioBackground, CommitAtFrameIsReadAndWrittenBack) {
  auto parsed = parse_scenario(with_background("commit_at_frame = 24"), "t.toml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_TRUE(parsed->background->commit_at_frame.has_value());
  EXPECT_EQ(*parsed->background->commit_at_frame, 24u);
  auto again = parse_scenario(to_toml(*parsed), "again.toml");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->background->commit_at_frame, parsed->background->commit_at_frame);
  auto none = parse_scenario(with_background("tasks = 2"), "t.toml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->background->commit_at_frame.has_value());
}

TEST(ScenarioBackground, RejectsWhatTheRuntimeOrTheWorkflowWouldRefuse) {
  struct Case {
    const char* keys;
    const char* message;
  };
  for (const Case& c : {
         Case{"colour = 1", "unknown key 'colour' in [background]"},
             Case{"mode = \"sometimes\"", "unknown mode 'sometimes'"},
             Case{"action = \"commit\"", "unknown action 'commit'"},
             Case{"workflow = \"pix\"", "unknown workflow 'pix'"},
             Case{"max_concurrent = 0", "must be in [1, 64]"},
             Case{"tasks = -1", "must be in [0, 100000]"},
             Case{"continuous = 1", "must be true or false"},
             Case{"unmanaged_threads = \"many\"", "or \"cores\""},
             Case{"mode = \"disable_background_work\"", "needs developer_mode = true"},
             Case{"action = \"commit_results_high_priority\"", "needs developer_mode = true"},
             Case{"workflow = \"benchmark-priming\"\nmode = \"allowed\"",
                  "sets the mode and action itself"},
             Case{"workflow = \"single-frame-analysis\"", "needs developer_mode = true"},
             Case{"unmanaged_threads = 2\naction = \"commit_results\"",
                  "does not apply with unmanaged_threads"},
             Case{"bind_committed = true", "nothing commits"},
             Case{"action = \"commit_results\"\nbefore_frames = 3",
                  "before_frames applies only with bind_committed"},
             Case{"unmanaged_threads = 2\nbind_committed = true",
                  "does not apply with unmanaged_threads"},
             Case{"workflow = \"benchmark-priming\"\nalternate_frames = 50",
                  "alternate_frames holds the background work"},
             Case{"action = \"commit_results\"\nbind_committed = true\nalternate_frames = 50",
                  "alternate_frames holds the background work"},
             Case{"alternate_frames = -1", "alternate_frames"},
             Case{"policy = \"fast\"", "unknown policy 'fast'"},
#if defined(_WIN32)
             Case{"policy = \"batch-nice19\"", "is not a policy of this OS"},
#else
           Case{"policy = \"eco\"", "is not a policy of this OS"},
#endif
             Case{"unmanaged_threads = 2\npolicy = \"normal\"",
                  "does not apply with unmanaged_threads"},
             Case{"cpus = \"reserved:0\"", "is not one of"},
             Case{"cpus = \"reserved:-1\"", "is not one of"},
             Case{"cpus = \"reserved:4096\"", "leaves the foreground fewer than two"},
             Case{"cpus = \"fast\"", "is not one of"}, Case{"cpus = \"3-1\"", "is not one of"},
             Case{"cpus = \"0,0\"", "is not one of"},
             Case{"cpus = [4095]", "is not one this process may use"},
             Case{"cpus = [-1]", "each CPU must be an integer"},
             Case{"dispatch = \"sometimes\"", "unknown dispatch 'sometimes'"},
             Case{"allocator = \"jemalloc\"", "unknown allocator 'jemalloc'"},
             Case{"cgroup_idle = 1", "must be true or false"},
             Case{"unmanaged_threads = 1\ndispatch = \"gaps\"",
                  "does not apply with unmanaged_threads"},
             Case{"unmanaged_threads = 1\ncpus = \"any\"", "does not apply with unmanaged_threads"},
             Case{"commit_at_frame = -1", "must be in [0, 10000000]"},
             Case{"commit_at_frame = \"end\"", "commit_at_frame"},
             Case{"commit_at_frame = 3\nworkflow = \"benchmark-priming\"",
                  "commit_at_frame asks for a commit of its own"},
             Case{"commit_at_frame = 3\naction = \"commit_results\"\nbind_committed = true",
                  "commit_at_frame asks for a commit of its own"},
             Case{"commit_at_frame = 3\nalternate_frames = 20",
                  "commit_at_frame asks for a commit of its own"},
             Case{"unmanaged_threads = 1\ncommit_at_frame = 3",
                  "does not apply with unmanaged_threads"},
       }) {
    const std::string e = error_of(with_background(c.keys));
    EXPECT_NE(e.find(c.message), std::string::npos) << c.keys << " -> " << e;
    EXPECT_NE(e.find("test.toml:"), std::string::npos) << e;
  }
}

constexpr const char* kStudy = R"(name = "st"
description = "a study"
foreground = "three-dispatches"
frames = 7
warmup_frames = 1
[[condition]]
name = "baseline"
[[condition]]
name = "managed"
[condition.background]
tasks = 3
[[condition]]
name = "control"
[condition.background]
unmanaged_threads = 2
)";

TEST(Study, ExpandsIntoOneScenarioPerConditionWithTheForegroundUnchanged) {
  ASSERT_TRUE(is_study(kStudy));
  EXPECT_FALSE(is_study(two_queues()));
  auto study = parse_study(kStudy, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  auto foreground = resolve_scenario("three-dispatches");
  ASSERT_TRUE(foreground.ok());
  const auto scenarios = expand_study(*study, *foreground);
  ASSERT_EQ(scenarios.size(), 3u);
  EXPECT_EQ(scenarios[0].name, "st/baseline");
  EXPECT_EQ(scenarios[1].name, "st/managed");
  EXPECT_EQ(scenarios[2].condition, "control");
  for (const Scenario& s : scenarios) {
    EXPECT_EQ(s.study, "st");
    EXPECT_EQ(s.frames, 7u);
    EXPECT_EQ(s.warmup_frames, 1u);
    ASSERT_EQ(s.workloads.size(), foreground->workloads.size());
    for (std::size_t w = 0; w < s.workloads.size(); ++w) {
      EXPECT_EQ(s.workloads[w].name, foreground->workloads[w].name);
      EXPECT_EQ(s.workloads[w].iterations, foreground->workloads[w].iterations);
      EXPECT_EQ(s.workloads[w].depends_on.size(), foreground->workloads[w].depends_on.size());
    }
  }
  EXPECT_FALSE(scenarios[0].background.has_value());
  EXPECT_EQ(scenarios[1].background->tasks, 3u);
  EXPECT_EQ(scenarios[2].background->unmanaged_threads, 2u);
}

// A condition this host cannot give what it asks (the other OS's policy, more CPUs reserved
// than it has) is valid in a study, left out of its rounds and named with why; the same keys
// in a scenario's [background] are refused (above).
TEST(Study, AConditionThisHostCannotRunIsNamedAsNotRunAndLeftOut) {
#if defined(_WIN32)
  const std::string other_os = "batch-nice19";
#else
  const std::string other_os = "eco";
#endif
  const std::string text = std::string(kStudy) + "[[condition]]\nname = \"other-os\"\n" +
                           "[condition.background]\npolicy = \"" + other_os + "\"\n" +
                           "[[condition]]\nname = \"too-many\"\n[condition.background]\n" +
                           "cpus = \"reserved:4096\"\nin_run_all = false\n";
  // in_run_all belongs to the study, not a condition's table.
  const auto misplaced = parse_study(text, "st.toml");
  ASSERT_FALSE(misplaced.ok());
  EXPECT_NE(misplaced.error().message.find("in_run_all"), std::string::npos)
      << misplaced.error().message;
  std::string fixed = text;
  fixed.erase(fixed.find("in_run_all = false\n"));
  fixed = "in_run_all = false\n" + fixed;
  auto study = parse_study(fixed, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  EXPECT_FALSE(study->in_run_all);
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  ASSERT_EQ(scenarios.size(), 3u) << "only the three conditions this host can run";
  for (const Scenario& s : scenarios) {
    EXPECT_NE(s.condition, "other-os");
    EXPECT_NE(s.condition, "too-many");
    ASSERT_EQ(s.study_not_run.size(), 2u);
    EXPECT_EQ(s.study_not_run[0].first, "other-os");
    EXPECT_NE(s.study_not_run[0].second.find("is not a policy of this OS"), std::string::npos)
        << s.study_not_run[0].second;
    EXPECT_EQ(s.study_not_run[1].first, "too-many");
    EXPECT_NE(s.study_not_run[1].second.find("fewer than two"), std::string::npos)
        << s.study_not_run[1].second;
  }
}

// The policy study is a preset of its own: `run --all` names it instead of running it.
TEST(Study, ThePolicyStudyIsListedButNotRunByRunAll) {
  auto suite = suite_scenarios();
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  for (const Scenario& s : suite->scenarios) EXPECT_NE(s.study, "background-policies") << s.name;
  ASSERT_EQ(suite->not_in_run_all.size(), 1u);
  EXPECT_NE(suite->not_in_run_all[0].find("gpuoverlap run background-policies"), std::string::npos);
  auto policies = resolve_scenarios("background-policies");
  ASSERT_TRUE(policies.ok()) << policies.error().message;
  std::set<std::string> conditions;
  for (const Scenario& s : *policies) conditions.insert(s.condition);
  for (const char* always : {"baseline", "null", "idle", "normal", "idle-gaps", "unmanaged-1"})
    EXPECT_TRUE(conditions.contains(always)) << always;
  // Memory is kept where this build's malloc is glibc's (not under a sanitizer).
  EXPECT_EQ(conditions.contains("idle-keep-memory"), kept_memory_unsupported_reason().empty());
}

TEST(Study, RoundsInterleaveTheConditionsAndShareTheFrames) {
  std::string text = kStudy;
  text.replace(text.find("frames = 7"), 10, "frames = 7\nrounds = 3");
  auto study = parse_study(text, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  ASSERT_EQ(scenarios.size(), 9u);
  std::vector<std::string> order;
  for (const Scenario& s : scenarios) {
    order.push_back(s.name);
    EXPECT_EQ(s.frames, 3u) << "ceil(7 / 3)";
    EXPECT_EQ(s.rounds, 3u);
  }
  EXPECT_EQ(order, (std::vector<std::string>{
                       "st/baseline/round-1", "st/managed/round-1", "st/control/round-1",
                       "st/control/round-2", "st/managed/round-2", "st/baseline/round-2",
                       "st/baseline/round-3", "st/managed/round-3", "st/control/round-3"}));
  EXPECT_EQ(frames_per_round(30, 6), 5u);
  EXPECT_EQ(frames_per_round(5, 6), 1u);
  EXPECT_EQ(frames_per_round(5, 1), 5u);
  text.replace(text.find("rounds = 3"), 10, "rounds = 0");
  EXPECT_FALSE(parse_study(text, "st.toml").ok());
}

TEST(Study, ABudgetAddsRoundsThatContinueTheInterleaving) {
  std::string text = kStudy;
  text.replace(text.find("frames = 7"), 10,
               "frames = 7\nrounds = 3\nbudget_s = 90\nmax_rounds = 5");
  auto study = parse_study(text, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  EXPECT_EQ(study->budget_s, 90.0);
  EXPECT_EQ(study->max_rounds, 5u);
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  for (const Scenario& s : scenarios) {
    EXPECT_EQ(s.study_budget_s, 90.0);
    EXPECT_EQ(s.study_max_rounds, 5u);
  }
  // Round 3 ran baseline, managed, control; round 4 runs them the other way round.
  const std::vector<Scenario> third(scenarios.end() - 3, scenarios.end());
  const auto fourth = next_study_round(third);
  ASSERT_EQ(fourth.size(), 3u);
  EXPECT_EQ(fourth[0].name, "st/control/round-4");
  EXPECT_EQ(fourth[2].name, "st/baseline/round-4");
  EXPECT_EQ(fourth[0].round, 4u);
  EXPECT_EQ(fourth[0].rounds, 3u) << "the planned rounds stay what the file said";
  EXPECT_EQ(fourth[0].frames, third[2].frames);
  EXPECT_EQ(fourth[1].background->tasks, 3u);
  // Defaults: 600 s and 100 rounds; a study of one round is never extended.
  auto plain = parse_study(kStudy, "st.toml");
  EXPECT_EQ(plain->budget_s, kDefaultStudyBudgetS);
  EXPECT_EQ(plain->max_rounds, kDefaultStudyMaxRounds);
  EXPECT_EQ(expand_study(*plain, *resolve_scenario("three-dispatches"))[0].study_budget_s, 0.0);
  // Fewer max_rounds than planned rounds, or a negative budget, is an error at its line.
  std::string fewer = text;
  fewer.replace(fewer.find("max_rounds = 5"), 14, "max_rounds = 2");
  auto refused = parse_study(fewer, "st.toml");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("st.toml:"), std::string::npos);
  EXPECT_NE(refused.error().message.find("max_rounds"), std::string::npos);
  std::string negative = text;
  negative.replace(negative.find("budget_s = 90"), 13, "budget_s = -1");
  EXPECT_FALSE(parse_study(negative, "st.toml").ok());
}

// round_ms: every condition's round, added rounds included, carries the time limit; a negative
// or out-of-range one is refused at its line.
TEST(Study, ARoundTimeLimitReachesEveryRoundAndIsChecked) {
  std::string text = kStudy;
  text.replace(text.find("frames = 7"), 10, "frames = 7\nrounds = 2\nround_ms = 750");
  auto study = parse_study(text, "st.toml");
  ASSERT_TRUE(study.ok()) << study.error().message;
  EXPECT_EQ(study->round_ms, 750u);
  const auto scenarios = expand_study(*study, *resolve_scenario("three-dispatches"));
  for (const Scenario& s : scenarios) EXPECT_EQ(s.study_round_ms, 750u) << s.name;
  const std::vector<Scenario> second(scenarios.end() - 3, scenarios.end());
  for (const Scenario& s : next_study_round(second)) EXPECT_EQ(s.study_round_ms, 750u);
  EXPECT_EQ(parse_study(kStudy, "st.toml")->round_ms, 0u);  // no limit by default
  for (const char* bad : {"round_ms = -1", "round_ms = 3600001", "round_ms = 1.5"}) {
    std::string refused_text = text;
    refused_text.replace(refused_text.find("round_ms = 750"), 14, bad);
    auto refused = parse_study(refused_text, "st.toml");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("st.toml:"), std::string::npos) << bad;
    EXPECT_NE(refused.error().message.find("round_ms"), std::string::npos) << bad;
  }
}

TEST(Study, RejectsStudiesWithoutExactlyOneBaselineOrWithDuplicateNames) {
  auto no_baseline = parse_study(R"(name = "st"
foreground = "default"
[[condition]]
name = "a"
[condition.background]
tasks = 1
)",
                                 "st.toml");
  ASSERT_FALSE(no_baseline.ok());
  EXPECT_NE(no_baseline.error().message.find("exactly one condition without [background]"),
            std::string::npos);
  auto twice = parse_study(R"(name = "st"
foreground = "default"
[[condition]]
name = "a"
[[condition]]
name = "a"
)",
                           "st.toml");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("st.toml:6: two conditions are named 'a'"),
            std::string::npos)
      << twice.error().message;
  auto none = parse_study("name = \"st\"\nforeground = \"default\"\n", "st.toml");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("needs [[condition]]"), std::string::npos);
  // A study is not a scenario, and says so.
  const std::string e = error_of(kStudy);
  EXPECT_NE(e.find("this is a study"), std::string::npos) << e;
}

// A null control runs the baseline's settings as a condition: it needs no [background], is
// not a second baseline, and its key takes one value.
TEST(Study, ANullControlIsAConditionOfItsOwnAndNotASecondBaseline) {
  const std::string head = "name = \"st\"\nforeground = \"default\"\n[[condition]]\nname = \"b\"\n";
  auto ok = parse_study(head + "[[condition]]\nname = \"aa\"\ncontrol = \"null\"\n", "st.toml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->conditions.size(), 2u);
  EXPECT_TRUE(ok->conditions[1].null_control);
  EXPECT_FALSE(ok->conditions[1].background);
  EXPECT_FALSE(ok->conditions[0].null_control);
  auto positive =
      parse_study(head + "[[condition]]\nname = \"aa\"\ncontrol = \"positive\"\n", "st.toml");
  ASSERT_FALSE(positive.ok());
  EXPECT_NE(positive.error().message.find("control must be \"null\""), std::string::npos)
      << positive.error().message;
  auto with_work = parse_study(
      head +
          "[[condition]]\nname = \"aa\"\ncontrol = \"null\"\n[condition.background]\ntasks = 1\n",
      "st.toml");
  ASSERT_FALSE(with_work.ok());
  EXPECT_NE(with_work.error().message.find("a null control has no [condition.background]"),
            std::string::npos)
      << with_work.error().message;
  auto only_null = parse_study(
      "name = \"st\"\nforeground = \"default\"\n[[condition]]\nname = \"aa\"\ncontrol = \"null\"\n",
      "st.toml");
  ASSERT_FALSE(only_null.ok()) << "a null control is no baseline";
  EXPECT_NE(only_null.error().message.find("exactly one condition without [background]"),
            std::string::npos);
}

TEST(Study, ResolvingTheNonIntrusivenessPresetGivesItsConditionsAndTheControlsDoses) {
  auto scenarios = resolve_scenarios("non-intrusiveness");
  ASSERT_TRUE(scenarios.ok()) << scenarios.error().message;
  ASSERT_EQ(scenarios->size(), 7u * 3u) << "seven conditions, three rounds";
  EXPECT_EQ((*scenarios)[0].name, "non-intrusiveness/baseline/round-1");
  EXPECT_EQ((*scenarios)[0].frames, 120u) << "360 frames per condition over 3 rounds";
  EXPECT_EQ((*scenarios)[0].study_round_ms, 1000u) << "or 1 s of them";
  EXPECT_EQ((*scenarios)[0].workloads.size(), 8u) << "the default preset's workloads";
  ASSERT_TRUE((*scenarios)[0].cpu) << "the foreground is the game frame";
  EXPECT_EQ((*scenarios)[0].cpu->wait, jobs::WaitMode::spin);
  EXPECT_EQ((*scenarios)[1].condition, "null");
  EXPECT_TRUE((*scenarios)[1].null_control) << "the A/A test: the baseline's settings again";
  EXPECT_FALSE((*scenarios)[1].background);
  EXPECT_FALSE((*scenarios)[0].null_control);
  EXPECT_EQ((*scenarios)[2].background->mode, background::ProcessingMode::allowed);
  EXPECT_EQ((*scenarios)[2].background->max_concurrent, 2u);
  EXPECT_EQ((*scenarios)[3].background->action,
            background::MeasurementsAction::commit_results_high_priority);
  EXPECT_EQ((*scenarios)[4].background->unmanaged_threads, 1u);
  EXPECT_EQ((*scenarios)[5].background->unmanaged_threads, 2u);
  EXPECT_GE((*scenarios)[6].background->unmanaged_threads, 1u) << "one per core";
  EXPECT_EQ((*scenarios)[0].study_budget_s, 36.0);
  auto other = resolve_scenarios("non-intrusiveness", "three-dispatches");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ((*other)[0].workloads.size(), 3u) << "--foreground replaces the foreground";
  EXPECT_FALSE(resolve_scenarios("default", "three-dispatches").ok())
      << "--foreground applies to studies only";
  EXPECT_FALSE(resolve_scenarios("non-intrusiveness", "no-such-thing").ok());
  EXPECT_FALSE(resolve_scenarios("non-intrusiveness", "non-intrusiveness").ok())
      << "a study cannot be a foreground";
}

TEST(ScenarioParser, AcceptsCrossQueueDependencies) {
  auto s = parse_scenario(two_queues("", "[\"B\"]"), "t.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->workloads[2].depends_on[0].producer, 1u);
}

TEST(ScenarioParser, RejectsWaitsThatCanNeverBeSignalled) {
  // X waits for Q on the compute queue, Q runs after P there, and P waits for Y, which runs
  // after X on the direct queue: no order of the two queues can satisfy every wait.
  const std::string e = error_of(R"(name = "t"
[queues.direct]
type = "direct"
[queues.compute]
type = "compute"
[[workload]]
name = "X"
queue = "direct"
depends_on = ["Q"]
[[workload]]
name = "Y"
queue = "direct"
[[workload]]
name = "P"
queue = "compute"
depends_on = ["Y"]
[[workload]]
name = "Q"
queue = "compute"
)");
  EXPECT_NE(e.find("can never be signalled"), std::string::npos) << e;
  EXPECT_NE(e.find("[unsatisfiable-wait]"), std::string::npos) << e;
  EXPECT_NE(e.find("'Q' runs after 'P' on queue 'compute'"), std::string::npos) << e;
  EXPECT_NE(e.find("test.toml:"), std::string::npos) << e;
}

TEST(ScenarioParser, RejectsAProducerDeclaredAfterItsConsumer) {
  const std::string e = error_of(R"(name = "t"
[queues.direct]
type = "direct"
[[workload]]
name = "A"
queue = "direct"
depends_on = ["B"]
[[workload]]
name = "B"
queue = "direct"
)");
  EXPECT_NE(e.find("declared after it"), std::string::npos) << e;
}

TEST(ScenarioParser, RejectsZeroAndAbsurdSizes) {
  auto with = [](const std::string& line) {
    return "name = \"t\"\n[queues.direct]\ntype = \"direct\"\n[[workload]]\nname = \"A\"\nqueue = "
           "\"direct\"\n" +
           line + "\n";
  };
  EXPECT_NE(error_of(with("groups = 0")).find("'groups' in workload 'A' is 0"), std::string::npos);
  // A dispatch runs at most 65535 workgroups of 64 threads: 4095 groups of 1024; a draw's
  // groups are rows, up to 4096.
  EXPECT_NE(error_of(with("groups = 4096")).find("must be in [1, 4095]"), std::string::npos);
  EXPECT_TRUE(parse_scenario(with("groups = 4095"), "t").ok());
  EXPECT_TRUE(parse_scenario(with("kind = \"graphics\"\ngroups = 4096"), "t").ok());
  EXPECT_NE(error_of(with("kind = \"graphics\"\ngroups = 100000")).find("must be in [1, 4096]"),
            std::string::npos);
  EXPECT_NE(error_of(with("iterations = 0")).find("'iterations'"), std::string::npos);
  EXPECT_NE(error_of(with("iterations = 99999999999")).find("'iterations'"), std::string::npos);
  EXPECT_NE(error_of(with("groups = \"8\"")).find("must be an integer"), std::string::npos);
  EXPECT_NE(error_of("name = \"t\"\nframes = 0\n[queues.direct]\ntype = "
                     "\"direct\"\n[[workload]]\nname = \"A\"\nqueue = \"direct\"\n")
                .find("'frames'"),
            std::string::npos);
}

// A copy: sized by bytes (at least what a consumer reads, whole words, at most 1 GiB), with
// nothing of a dispatch's size, no target and no dependencies; consumers read its output.
TEST(ScenarioParser, ReadsCopiesAndRefusesWhatDoesNotApply) {
  const std::string head =
      "name = \"t\"\n[queues.direct]\ntype = \"direct\"\n[queues.compute]\ntype = "
      "\"compute\"\n[[texture]]\nname = \"tex\"\nformat = \"r32f\"\nwidth = 64\nheight = 64\n";
  auto copy = [&](const std::string& lines) {
    return head + "[[workload]]\nname = \"U\"\nqueue = \"compute\"\nkind = \"copy\"\n" + lines +
           "\n[[workload]]\nname = \"R\"\nqueue = \"direct\"\ndepends_on = [\"U\"]\n";
  };
  auto parsed = parse_scenario(copy("bytes = 4096"), "t.toml");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->workloads[0].kind, WorkloadKind::copy);
  EXPECT_EQ(parsed->workloads[0].bytes, 4096u);
  EXPECT_EQ(parsed->workloads[0].groups, 0u);
  ASSERT_EQ(parsed->workloads[1].depends_on.size(), 1u);
  EXPECT_EQ(parse_scenario(copy(""), "t.toml")->workloads[0].bytes, kDefaultCopyBytes);
  auto refused = [&](const std::string& lines, const std::string& reason) {
    const std::string message = error_of(copy(lines));
    EXPECT_NE(message.find(reason), std::string::npos) << lines << ": " << message;
    EXPECT_EQ(message.rfind("test.toml:15: ", 0), 0u) << message;
  };
  refused("bytes = 4092", "must be in [4096, 1073741824]");
  refused("bytes = 1073741828", "must be in [4096, 1073741824]");
  refused("bytes = 4098", "not a whole number of 4-byte words");
  refused("groups = 2", "is a copy: 'groups' does not apply");
  refused("iterations = 2", "is a copy: 'iterations' does not apply");
  // Into a declared texture: exactly its subresource's bytes (64 x 64 r32f: 16384), no discard.
  auto into = parse_scenario(copy("target = { texture = \"tex\" }"), "t.toml");
  ASSERT_TRUE(into) << into.error().message;
  EXPECT_EQ(into->workloads[0].bytes, 64u * 64u * 4u);
  ASSERT_TRUE(into->workloads[0].target.has_value());
  EXPECT_TRUE(into->plan->barriers.texture_copy_destination[0]);
  EXPECT_EQ(into->plan->barriers.texture_start_states[0], D3D12_RESOURCE_STATE_COPY_DEST);
  auto exact = parse_scenario(copy("target = { texture = \"tex\" }\nbytes = 16384"), "t.toml");
  EXPECT_TRUE(exact) << exact.error().message;
  refused("bytes = 4096\ntarget = { texture = \"tex\" }", "which takes 16384 bytes");
  refused("target = { texture = \"tex\", discard = true }", "is a copy: 'discard' does not apply");
  std::string depth_head = head;
  depth_head.replace(depth_head.find("r32f"), 4, "d32");
  const std::string into_depth = depth_head +
                                 "[[workload]]\nname = \"U\"\nqueue = \"direct\"\nkind = "
                                 "\"copy\"\ntarget = { texture = \"tex\" }\n";
  EXPECT_NE(error_of(into_depth).find("which is d32: a depth texture is written by draws only"),
            std::string::npos)
      << error_of(into_depth);
  const std::string dispatch_with_bytes =
      head + "[[workload]]\nname = \"D\"\nqueue = \"direct\"\nbytes = 4096\n";
  EXPECT_NE(error_of(dispatch_with_bytes).find("is not a copy: 'bytes' sizes a copy only"),
            std::string::npos);
}

// A readback: a copy with depends_on reads its one producer's output into a readback buffer,
// as many bytes as that output has (a dispatch's 4 per thread, a draw's R32F render target, a
// declared texture's subresource).
TEST(ScenarioParser, ReadsReadbackCopiesSizedByTheirSource) {
  const std::string head =
      "name = \"t\"\n[queues.direct]\ntype = \"direct\"\n[queues.compute]\ntype = "
      "\"compute\"\n[[texture]]\nname = \"tex\"\nformat = \"rgba16f\"\nwidth = 64\nheight = "
      "32\nmips = 2\n"
      "[[workload]]\nname = \"D\"\nqueue = \"compute\"\ngroups = 3\n"
      "[[workload]]\nname = \"G\"\nqueue = \"direct\"\nkind = \"graphics\"\ngroups = 5\n"
      "[[workload]]\nname = \"T\"\nqueue = \"direct\"\nkind = \"graphics\"\ntarget = { texture = "
      "\"tex\", mip = 1 }\n";
  auto readback = [&](const std::string& lines) {
    return head + "[[workload]]\nname = \"R\"\nqueue = \"compute\"\nkind = \"copy\"\n" + lines;
  };
  const auto threads = [](std::uint32_t groups) { return groups_shape(groups).threads; };
  for (const auto& [source, bytes] : std::vector<std::pair<std::string, std::uint64_t>>{
           {"D", threads(3) * 4ull}, {"G", 1024ull * 5 * 4}, {"T", 32ull * 16 * 8}}) {
    auto parsed = parse_scenario(readback("depends_on = [\"" + source + "\"]\n"), "t.toml");
    ASSERT_TRUE(parsed) << parsed.error().message;
    const WorkloadSpec& copy = parsed->workloads.back();
    EXPECT_TRUE(is_readback(copy));
    EXPECT_EQ(copy.bytes, bytes) << source;
    // It round-trips: to_toml writes its dependency.
    auto again = parse_scenario(to_toml(*parsed), "again.toml");
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(again->workloads.back().depends_on.size(), 1u);
    EXPECT_EQ(again->workloads.back().bytes, bytes);
  }
  auto refused = [&](const std::string& toml, const std::string& reason) {
    const std::string message = error_of(toml);
    EXPECT_NE(message.find(reason), std::string::npos) << toml << ": " << message;
    EXPECT_EQ(message.rfind("test.toml:", 0), 0u) << message;
  };
  refused(readback("depends_on = [\"D\", \"G\"]\n"),
          "it reads back one workload's output, so 'depends_on' names exactly one");
  refused(readback("depends_on = [\"D\"]\ntarget = { texture = \"tex\" }\n"),
          "'target' does not apply");
  refused(readback("depends_on = [\"D\"]\nbytes = 4096\n"),
          "whose output takes " + std::to_string(threads(3) * 4) + " bytes");
  refused(readback("depends_on = [{ workload = \"D\", barrier = \"none\" }]\n"),
          "it reads that output, behind a barrier");
  refused(readback("depends_on = [{ workload = \"D\", reads_output = false }]\n"),
          "it reads that output, behind a barrier");
  refused(readback("depends_on = [\"D\"]\n") +
              "[[workload]]\nname = \"X\"\nqueue = \"compute\"\ndepends_on = [\"R\"]\n",
          "a readback: its output is read by the CPU, not by workloads");
}

// [cpu]: the frame's CPU side. Every bad table is refused with one file:line message before
// any GPU work; a good one reads back with per-worker amounts scaled by the workers.
std::string with_cpu(const std::string& table) {
  return "name = \"t\"\n[queues.direct]\ntype = \"direct\"\n[[workload]]\nname = \"A\"\nqueue = "
         "\"direct\"\n[cpu]\n" +
         table;
}

TEST(ScenarioParser, ReadsACpuTableAndScalesPerWorkerAmounts) {
  auto s = parse_scenario(with_cpu("workers = 4\njobs_per_worker = 3\ncpu_ms_per_worker = 2.5\n"
                                   "critical_jobs = 2\nwait = \"spin\"\nframe_period_ms = 8\n"
                                   "frames_in_flight = 1\npin_workers = true\n"),
                          "t.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s->cpu);
  EXPECT_EQ(s->cpu->workers, 4u);
  EXPECT_FALSE(s->cpu->workers_from_cores);
  EXPECT_EQ(s->cpu->jobs_per_frame, 12u);
  EXPECT_DOUBLE_EQ(s->cpu->cpu_ms_per_frame, 10.0);
  EXPECT_EQ(s->cpu->critical_jobs, 2u);
  EXPECT_EQ(s->cpu->wait, jobs::WaitMode::spin);
  EXPECT_EQ(s->cpu->frames_in_flight, 1u);
  EXPECT_TRUE(s->cpu->pin_workers);
  // The defaults: "cores" workers (the usable CPUs less the poller's), 60 jobs, 4 ms, a chain
  // of 3, spin then sleep, unpaced, two frames in flight.
  auto d = parse_scenario(with_cpu(""), "t.toml");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->cpu->workers_from_cores);
  EXPECT_EQ(d->cpu->workers, std::max(1u, jobs::usable_cpus() - 1));
  EXPECT_EQ(d->cpu->jobs_per_frame, 60u);
  EXPECT_EQ(d->cpu->wait, jobs::WaitMode::spin_then_sleep);
  EXPECT_EQ(d->cpu->frame_period_ms, 0.0);
  EXPECT_EQ(d->cpu->frames_in_flight, 2u);
  EXPECT_TRUE(parse_scenario(with_cpu("workers = \"cores\"\n"), "t.toml").ok());
}

TEST(ScenarioParser, RefusesBadCpuTablesWithFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"workers = 0\n", "test.toml:8: 'workers' in [cpu] must be an integer in [1, 1024]"},
      {"workers = -3\n", "test.toml:8: 'workers' in [cpu] must be an integer in [1, 1024]"},
      {"workers = 1025\n", "test.toml:8: 'workers' in [cpu] must be an integer in [1, 1024]"},
      {"workers = \"all\"\n", "test.toml:8: 'workers' in [cpu] must be an integer"},
      {"cpu_ms_per_frame = -1.0\n", "test.toml:8: 'cpu_ms_per_frame' in [cpu] is -1"},
      {"cpu_ms_per_frame = nan\n", "test.toml:8: 'cpu_ms_per_frame' in [cpu] is nan"},
      {"cpu_ms_per_frame = 0\n", "test.toml:8: 'cpu_ms_per_frame' in [cpu] must be more than 0"},
      {"cpu_ms_per_worker = inf\n", "test.toml:8: 'cpu_ms_per_worker' in [cpu] is inf"},
      {"jobs_per_frame = 0\n", "test.toml:8: 'jobs_per_frame' in [cpu] is 0"},
      {"jobs_per_worker = 0\n", "test.toml:8: 'jobs_per_worker' in [cpu] is 0"},
      {"jobs_per_frame = 10\njobs_per_worker = 2\n", "give 'jobs_per_frame' or 'jobs_per_worker'"},
      {"workers = 2\ncpu_ms_per_frame = 20\nframe_period_ms = 8\n",
       "test.toml:7: [cpu]: each worker's share of the CPU work (10 ms: 20 ms on 2 workers) is "
       "longer "
       "than frame_period_ms (8)"},
      {"workers = 8\njobs_per_frame = 4\ncpu_ms_per_frame = 20\ncritical_jobs = 2\n"
       "frame_period_ms = 8\n",
       "the chain of 2 critical jobs (10 ms) is longer than frame_period_ms (8)"},
      {"jobs_per_frame = 4\ncritical_jobs = 5\n", "critical_jobs (5) are some of the frame's jobs"},
      {"wait = \"yield\"\n",
       "test.toml:8: unknown wait 'yield' in [cpu] (spin | sleep | "
       "spin_then_sleep)"},
      {"wait = \"spin\"\nspin_us = 10\n", "test.toml:9: [cpu]: spin_us applies only with wait"},
      {"frames_in_flight = 3\n",
       "test.toml:8: 'frames_in_flight' in [cpu] is 3, must be in [1, 2]"},
      {"frame_period_ms = -8\n", "test.toml:8: 'frame_period_ms' in [cpu] is -8"},
      {"threads = 4\n", "test.toml:8: unknown key 'threads' in [cpu]"},
  };
  for (const auto& [table, message] : cases) {
    const std::string error = error_of(with_cpu(table));
    EXPECT_NE(error.find(message), std::string::npos) << table << " -> " << error;
    EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 0) << "one line: " << error;
  }
  EXPECT_NE(error_of("name = \"t\"\ncpu = 3\n[queues.direct]\ntype = \"direct\"\n[[workload]]\n"
                     "name = \"A\"\nqueue = \"direct\"\n")
                .find("test.toml:2: [cpu] must be a table"),
            std::string::npos);
}

TEST(ScenarioParser, RejectsOtherMistakesClearly) {
  EXPECT_NE(error_of(two_queues("[[workload]]\nname = \"A\"\nqueue = \"direct\"\n"))
                .find("duplicate workload name 'A'"),
            std::string::npos);
  EXPECT_NE(
      error_of(two_queues("[[workload]]\nname = \"G\"\nqueue = \"compute\"\nkind = \"graphics\"\n"))
          .find("only direct queues draw"),
      std::string::npos);
  EXPECT_NE(error_of(two_queues("[[workload]]\nname = \"Q\"\nqueue = \"copy\"\n"))
                .find("undeclared queue 'copy'"),
            std::string::npos);
  EXPECT_NE(error_of(two_queues("", "[{ workload = \"A\", barrier = \"fence\" }]"))
                .find("unknown barrier 'fence'"),
            std::string::npos);
  EXPECT_NE(error_of(two_queues("", "[\"A\", \"A\"]")).find("twice"), std::string::npos);
  EXPECT_NE(error_of("name = \"../evil\"\n[queues.d]\ntype = \"direct\"\n[[workload]]\nname = "
                     "\"A\"\nqueue = \"d\"\n")
                .find("output directory"),
            std::string::npos);
  EXPECT_NE(
      error_of("name = \"t\"\n[queues.d]\ntype = \"copy\"\n").find("unknown queue type 'copy'"),
      std::string::npos);
  EXPECT_NE(error_of("name = \"t\"\n[queues.d]\ntype = \"direct\"\npriority = \"urgent\"\n")
                .find("unknown priority"),
            std::string::npos);
  EXPECT_NE(
      error_of("name = \"t\"\n[queues.d]\ntype = \"direct\"\n").find("at least one [[workload]]"),
      std::string::npos);
}

TEST(ScenarioParser, ReportsTomlSyntaxErrorsWithLine) {
  const std::string e = error_of("name = \"t\"\n\nframes = = 3\n");
  EXPECT_NE(e.find("test.toml:3: TOML syntax"), std::string::npos) << e;
}

TEST(ScenarioParser, UnknownPresetSuggestsCloseNamesAndTheList) {
  auto typo = resolve_scenario("three-dispachtes");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("did you mean three-dispatches?"), std::string::npos)
      << typo.error().message;
  auto unknown = resolve_scenario("no-such-preset");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message.find("did you mean"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("gpuoverlap list"), std::string::npos);
}

TEST(ScenarioParser, MissingFileIsAnErrorWithTheSystemsReason) {
  auto s = load_scenario_file("/nonexistent/x.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("No such file or directory"), std::string::npos);
  // A path that does not exist is not looked up as a preset.
  auto by_path = resolve_scenario("scenarios/presets/nope.toml");
  ASSERT_FALSE(by_path.ok());
  EXPECT_NE(by_path.error().message.find("No such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace gpuoverlap
