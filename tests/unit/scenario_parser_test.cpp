#include <gtest/gtest.h>

#include "scenario_test_texts.h"
#include "scenarios/frame_plan.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::scenario_tests {
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
  // frame, the non-intrusiveness and background-policies studies, the three engine-styles
  // studies and the two background-processing workflows + 12
  // preemption presets and the preemption matrix + the texture presets, each with its legacy
  // twin (mip-chain, render-target-discard, texture-read-after-render, upload-copy,
  // aliasing-handover, texture-rewrite, upload-texture, depth-prepass, readback).
  ASSERT_EQ(presets().size(), 55u);
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
// planner checks the range against the texture (barrier_subresources_test.cpp).
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
}  // namespace gpuoverlap::scenario_tests
