#include <gtest/gtest.h>

#include "scenarios/presets.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {
namespace {

// The example of the foundation issue, verbatim: these fields must keep working as written.
constexpr const char* kIssueExample = R"(name = "three-dispatches"
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

TEST(ScenarioParser, ParsesTheIssueExampleAsWritten) {
  auto s = parse_scenario(kIssueExample, "example.toml");
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
  EXPECT_EQ(s->workloads[2].depends_on[0].barrier, BarrierKind::legacy);
}

TEST(ScenarioParser, DependencyTableOverridesTheBarrier) {
  std::string text = kIssueExample;
  const std::string plain = R"(depends_on = ["Compute A"])";
  text.replace(text.find(plain), plain.size(),
               R"(depends_on = [{ workload = "Compute A", barrier = "split" }])");
  auto s = parse_scenario(text, "example.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->workloads[2].depends_on[0].barrier, BarrierKind::split);
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
  ASSERT_EQ(presets().size(), 5u);
  for (const Preset& p : presets()) {
    auto s = resolve_scenario(std::string(p.name));
    ASSERT_TRUE(s.ok()) << p.name << ": " << s.error().message;
    EXPECT_EQ(s->name, p.name);
    EXPECT_FALSE(s->description.empty());
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
      EXPECT_EQ(def->workloads[on_queue[i]].depends_on[0].barrier, BarrierKind::legacy);
    }
  }
  auto none = resolve_scenario("no-barriers");
  ASSERT_TRUE(none.ok());
  for (const auto& w : none->workloads)
    for (const auto& d : w.depends_on) EXPECT_EQ(d.barrier, BarrierKind::none);
  auto high = resolve_scenario("high-priority-compute");
  ASSERT_TRUE(high.ok());
  EXPECT_EQ(high->queues[1].type, QueueType::compute);
  EXPECT_EQ(high->queues[1].priority, QueuePriority::high);
  auto split = resolve_scenario("three-dispatches-split");
  ASSERT_TRUE(split.ok());
  ASSERT_EQ(split->workloads.size(), 3u);
  EXPECT_GT(split->workloads[1].iterations, split->workloads[0].iterations);
  EXPECT_EQ(split->workloads[2].depends_on.at(0).producer, 0u);
  EXPECT_EQ(split->workloads[2].depends_on.at(0).barrier, BarrierKind::split);
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

TEST(ScenarioParser, RejectsCrossQueueDependenciesUntilFencesExist) {
  const std::string e = error_of(two_queues("", "[\"B\"]"));
  EXPECT_NE(e.find("cross-queue"), std::string::npos) << e;
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
  EXPECT_NE(error_of(with("groups = 100000")).find("must be in [1, 4096]"), std::string::npos);
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
  EXPECT_NE(error_of(two_queues("", "[{ workload = \"A\", barrier = \"enhanced\" }]"))
                .find("not supported yet"),
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

TEST(ScenarioParser, UnknownPresetListsThePresets) {
  auto s = resolve_scenario("no-such-preset");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("three-dispatches-split"), std::string::npos);
}

TEST(ScenarioParser, MissingFileIsAnError) {
  auto s = load_scenario_file("/nonexistent/x.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace gpuoverlap
