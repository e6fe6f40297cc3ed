#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/cpu_affinity.h"
#include "scenario_test_texts.h"
#include "scenarios/scenario.h"
#include "scenarios/scenario_toml.h"

namespace gpuoverlap::scenario_tests {
namespace {

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

}  // namespace
}  // namespace gpuoverlap::scenario_tests
