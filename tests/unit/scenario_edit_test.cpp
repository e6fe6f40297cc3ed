// The live session's edits (scenarios/scenario_edit.h) and the scenario file writer they are
// checked through (scenarios/scenario_toml.h).
#include "scenarios/scenario_edit.h"

#include <gtest/gtest.h>

#include "background/background_spec.h"
#include "scenarios/presets.h"
#include "scenarios/scenario_toml.h"

namespace gpuoverlap {
namespace {

// Everything a scenario file says, field by field (not through to_toml, which is under test).
void expect_same_scenario(const Scenario& a, const Scenario& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.frames, b.frames);
  EXPECT_EQ(a.warmup_frames, b.warmup_frames);
  EXPECT_EQ(a.default_barrier, b.default_barrier);
  EXPECT_EQ(a.default_split_policy, b.default_split_policy);
  EXPECT_EQ(a.timestamps, b.timestamps);
  ASSERT_EQ(a.queues.size(), b.queues.size());
  for (std::size_t q = 0; q < a.queues.size(); ++q) {
    EXPECT_EQ(a.queues[q].name, b.queues[q].name);
    EXPECT_EQ(a.queues[q].type, b.queues[q].type);
    EXPECT_EQ(a.queues[q].priority, b.queues[q].priority);
  }
  EXPECT_EQ(a.textures, b.textures);
  ASSERT_EQ(a.workloads.size(), b.workloads.size());
  for (std::size_t w = 0; w < a.workloads.size(); ++w) {
    const WorkloadSpec &x = a.workloads[w], &y = b.workloads[w];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.target, y.target) << x.name;
    EXPECT_EQ(x.queue, y.queue);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.groups, y.groups);
    EXPECT_EQ(x.iterations, y.iterations);
    EXPECT_EQ(x.bytes, y.bytes) << x.name;
    ASSERT_EQ(x.depends_on.size(), y.depends_on.size()) << x.name;
    for (std::size_t d = 0; d < x.depends_on.size(); ++d) {
      const BarrierRequest &r = x.depends_on[d].barrier, &t = y.depends_on[d].barrier;
      EXPECT_EQ(x.depends_on[d].producer, y.depends_on[d].producer);
      EXPECT_EQ(barrier_label(r), barrier_label(t));
      EXPECT_EQ(r.reads_output, t.reads_output);
      EXPECT_EQ(r.state_before, t.state_before);
      EXPECT_EQ(r.state_after, t.state_after);
      EXPECT_EQ(r.type, t.type);
      EXPECT_EQ(r.sync_before, t.sync_before);
      EXPECT_EQ(r.sync_after, t.sync_after);
      EXPECT_EQ(r.access_before, t.access_before);
      EXPECT_EQ(r.access_after, t.access_after);
      EXPECT_EQ(r.layout_before, t.layout_before);
      EXPECT_EQ(r.layout_after, t.layout_after);
      EXPECT_EQ(r.subresources, t.subresources);
    }
  }
  ASSERT_EQ(a.background.has_value(), b.background.has_value());
  if (a.background) {
    EXPECT_EQ(background::to_json(*a.background), background::to_json(*b.background));
  }
  ASSERT_EQ(a.cpu.has_value(), b.cpu.has_value());
  if (a.cpu) {
    EXPECT_EQ(jobs::to_json(*a.cpu), jobs::to_json(*b.cpu));
  }
}

Scenario preset(const std::string& name) {
  auto s = resolve_scenario(name);
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? *s : Scenario{};
}

TEST(ScenarioToml, EveryFramePresetReadsBackAsItWasWritten) {
  std::size_t checked = 0;
  for (const Preset& p : presets()) {
    const std::string text(p.toml);
    if (is_study(text) || is_preemption(text)) continue;
    const Scenario original = preset(std::string(p.name));
    auto again = parse_scenario(to_toml(original), "written");
    ASSERT_TRUE(again) << p.name << ": " << again.error().message << "\n" << to_toml(original);
    again->source = original.source;
    expect_same_scenario(original, *again, std::string(p.name));
    ++checked;
  }
  // Every barrier lab variant, the defaults, the bgp presets and the texture presets.
  EXPECT_GE(checked, 17u);
}

TEST(ScenarioToml, DetailsOfEveryBarrierKindAndEveryBackgroundKeyReadBack) {
  constexpr const char* kText = R"(name = "all-the-details"
description = "quote \" backslash \\ and a tab\t"
frames = 7
warmup_frames = 0
barrier = "enhanced"
split_policy = "collapsed"
timestamps = false

[queues."the direct"]
type = "direct"
priority = "high"

[queues.compute]
type = "compute"
priority = "realtime"

[[workload]]
name = "A a"
queue = "the direct"
groups = 3
iterations = 5

[[workload]]
name = "B"
queue = "the direct"
kind = "graphics"
depends_on = [{ workload = "A a", barrier = "legacy", state_before = "non_pixel_shader_resource", state_after = "pixel_shader_resource", reads_output = true }]

[[workload]]
name = "C"
queue = "compute"
depends_on = ["B", { workload = "A a", barrier = "enhanced", sync_before = "compute_shading", sync_after = "compute_shading", access_before = "unordered_access", access_after = "unordered_access", type = "buffer" }]

[[workload]]
name = "D"
queue = "the direct"
depends_on = [{ workload = "A a", barrier = "enhanced-split", split_policy = "event" }, { workload = "B", barrier = "split", subresources = { mips = [0, 1] } }]

[background]
action = "commit_results"
tasks = 3
continuous = false
bind_committed = true
before_frames = 2
fold_iterations = false
)";
  auto original = parse_scenario(kText, "details");
  ASSERT_TRUE(original) << original.error().message;
  auto again = parse_scenario(to_toml(*original), "written");
  ASSERT_TRUE(again) << again.error().message << "\n" << to_toml(*original);
  expect_same_scenario(*original, *again, "details");
  EXPECT_EQ(toml_string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\u000A\\u0001\"");
}

TEST(ScenarioEdit, TheWordsOfEveryEditReadBackAsTheSameEdit) {
  for (const char* line :
       {"enable \"Compute A\"", "disable B", "groups \"Compute A\" 16", "iterations B 3",
        "queue B compute", "depend C \"Compute A\" split", "undepend C B", "barrier C B enhanced",
        "priority compute high", "timestamps off", "timestamps on"}) {
    auto edit = parse_edit(line);
    ASSERT_TRUE(edit) << line << ": " << edit.error().message;
    EXPECT_EQ(describe(*edit), line);
    auto again = parse_edit(describe(*edit));
    ASSERT_TRUE(again);
    EXPECT_EQ(describe(*again), line);
  }
  // depend without a barrier takes the scenario's default.
  auto depend = parse_edit("depend C B", BarrierKind::enhanced);
  ASSERT_TRUE(depend);
  EXPECT_EQ(depend->barrier, BarrierKind::enhanced);
  for (const char* bad : {"", "fly B", "groups B", "groups B many", "groups B -1", "barrier C B",
                          "barrier C B sideways", "priority q urgent", "timestamps maybe",
                          "enable \"never closed", "undepend C"}) {
    auto edit = parse_edit(bad);
    EXPECT_FALSE(edit) << "'" << bad << "' was taken as " << (edit ? describe(*edit) : "");
  }
}

TEST(ScenarioEdit, AnAcceptedEditChangesOnlyWhatItNames) {
  const Scenario start = preset("default");
  const EditableScenario draft = editable(start);
  auto iterations = apply_edit(draft, *parse_edit("iterations \"Compute B\" 3"), "default-edit-1");
  ASSERT_TRUE(iterations) << iterations.error().message;
  Scenario expected = start;
  expected.name = "default-edit-1";
  expected.workloads[1].iterations = 3;
  expect_same_scenario(expected, iterations->scenario, "iterations");
  EXPECT_TRUE(iterations->scenario.plan);  // validated: the frame plan is there

  // Dropping a dependency of the chain, then disabling the workload nothing depends on now.
  auto undepend = apply_edit(iterations->draft, *parse_edit("undepend \"Compute B\" \"Compute A\""),
                             "default-edit-2");
  ASSERT_TRUE(undepend) << undepend.error().message;
  auto disable = apply_edit(undepend->draft, *parse_edit("disable \"Compute A\""), "v3");
  ASSERT_TRUE(disable) << disable.error().message;
  ASSERT_EQ(disable->scenario.workloads.size(), start.workloads.size() - 1);
  EXPECT_EQ(disable->scenario.workloads[0].name, "Compute B");
  EXPECT_TRUE(disable->scenario.workloads[0].depends_on.empty());
  // Indices moved: Compute C (now 1) still depends on Compute B (now 0).
  ASSERT_EQ(disable->scenario.workloads[1].depends_on.size(), 1u);
  EXPECT_EQ(disable->scenario.workloads[1].depends_on[0].producer, 0u);
  // Enabling it again restores it as it was, in its place.
  auto enable = apply_edit(disable->draft, *parse_edit("enable \"Compute A\""), "v4");
  ASSERT_TRUE(enable) << enable.error().message;
  EXPECT_EQ(enable->scenario.workloads[0].name, "Compute A");
  EXPECT_EQ(enable->scenario.workloads.size(), start.workloads.size());

  auto settings = apply_edit(draft, *parse_edit("priority compute high"), "v5");
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(settings->scenario.queues[1].priority, QueuePriority::high);
  auto timestamps = apply_edit(settings->draft, *parse_edit("timestamps off"), "v6");
  ASSERT_TRUE(timestamps);
  EXPECT_FALSE(timestamps->scenario.timestamps);
  EXPECT_EQ(timestamps->scenario.queues[1].priority, QueuePriority::high);  // kept

  auto barrier = apply_edit(draft, *parse_edit("barrier \"Compute B\" \"Compute A\" split"), "v7");
  ASSERT_TRUE(barrier) << barrier.error().message;
  EXPECT_EQ(barrier->scenario.workloads[1].depends_on[0].barrier.kind, BarrierKind::split);
}

TEST(ScenarioEdit, ARefusedEditSaysTheRuleAndChangesNothing) {
  const EditableScenario draft = editable(preset("default"));
  struct Case {
    const char* edit;
    const char* rule;  // a part of the refusal
  };
  for (const Case& c : {
           Case{"iterations \"Compute B\" 0", "must be in [1,"},
           Case{"depend \"Compute A\" \"Compute D\"", "dependency cycle"},
           Case{"disable \"Compute A\"", "which is disabled"},
           Case{"queue \"Gfx A\" compute", "only direct queues draw"},
           Case{"depend \"Compute A\" \"Compute A\"", "depends on itself"},
           Case{"depend \"Compute B\" \"Compute A\"", "twice"},
           Case{"undepend \"Compute A\" \"Compute B\"", "does not depend on"},
           Case{"groups Nobody 3", "no workload 'Nobody'"},
           Case{"priority nowhere high", "no queue 'nowhere'"},
       }) {
    auto edit = parse_edit(c.edit);
    ASSERT_TRUE(edit) << c.edit;
    auto outcome = apply_edit(draft, *edit, "refused");
    ASSERT_FALSE(outcome) << c.edit << " was accepted";
    EXPECT_NE(outcome.error().message.find(c.rule), std::string::npos)
        << c.edit << ": " << outcome.error().message;
    // No line of a file the user never saw.
    EXPECT_EQ(outcome.error().message.find("the edited scenario:"), std::string::npos)
        << outcome.error().message;
  }
}

// A readback copy: its size follows its source's through an edit of the source, and its
// dependency is what it is (neither removed nor added to).
TEST(ScenarioEdit, AReadbackFollowsItsSourceAndKeepsItsDependency) {
  const EditableScenario draft = editable(preset("readback"));
  auto groups = apply_edit(draft, *parse_edit("groups Simulate 16"), "readback-edit-1");
  ASSERT_TRUE(groups) << groups.error().message;
  EXPECT_EQ(groups->scenario.workloads[3].bytes, std::uint64_t{groups_shape(16).threads} * 4);
  for (const char* refused :
       {"undepend \"Read back simulation\" Simulate", "depend \"Read back frame\" Simulate",
        "groups \"Read back frame\" 2"}) {
    auto outcome = apply_edit(draft, *parse_edit(refused), "refused");
    ASSERT_FALSE(outcome) << refused << " was accepted";
    EXPECT_NE(outcome.error().message.find("is a copy"), std::string::npos)
        << outcome.error().message;
  }
  auto barrier = apply_edit(draft, *parse_edit("barrier \"Read back simulation\" Simulate legacy"),
                            "readback-edit-2");
  ASSERT_TRUE(barrier) << barrier.error().message;
}

TEST(ScenarioEdit, ARuleThatOnlyTheSecondEditBreaksRefusesTheSecond) {
  const EditableScenario draft = editable(preset("default"));
  auto across = apply_edit(draft, *parse_edit("depend \"Compute A\" \"Compute Queue A\""), "v2");
  ASSERT_TRUE(across) << across.error().message;  // across queues: a fence orders them
  // Now on one queue, the producer is recorded after its consumer: it can never run first.
  auto moved = apply_edit(across->draft, *parse_edit("queue \"Compute Queue A\" direct"), "v3");
  ASSERT_FALSE(moved);
  EXPECT_NE(moved.error().message.find("declared after it on the same queue"), std::string::npos)
      << moved.error().message;
}

}  // namespace
}  // namespace gpuoverlap
