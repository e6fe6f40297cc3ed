#include <gtest/gtest.h>

#include "core/thread_policy.h"
#include "scenario_test_texts.h"
#include "scenarios/scenario.h"
#include "scenarios/scenario_toml.h"

namespace gpuoverlap::scenario_tests {
namespace {

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

TEST(ScenarioParser, ReadsHowTheFrameLoopWaitsForTheGpu) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, jobs::LoopWait>>{
           {"", jobs::LoopWait::block},
           {"gpu_wait = \"block\"\n", jobs::LoopWait::block},
           {"gpu_wait = \"spin\"\n", jobs::LoopWait::spin},
           {"gpu_wait = \"yield\"\n", jobs::LoopWait::yield}}) {
    auto s = parse_scenario(with_cpu(text), "t.toml");
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->cpu->gpu_wait, expected) << text;
    EXPECT_EQ(s->cpu->loop_wait, jobs::LoopWait::block) << "the jobs' wait is its own key";
    auto again = parse_scenario(to_toml(*s), "again.toml");
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->cpu->gpu_wait, expected) << to_toml(*s);
  }
  auto bad = parse_scenario(with_cpu("gpu_wait = \"nap\"\n"), "t.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown gpu_wait 'nap' in [cpu] (block | spin | yield)"),
            std::string::npos)
      << bad.error().message;
}

TEST(ScenarioParser, ReadsEveryWayAnIdleWorkerWaitsAndWritesItBack) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, jobs::WaitMode>>{
           {"wait = \"spin\"\n", jobs::WaitMode::spin},
           {"wait = \"sleep\"\n", jobs::WaitMode::sleep},
           {"wait = \"spin_then_sleep\"\n", jobs::WaitMode::spin_then_sleep},
           {"wait = \"yield\"\n", jobs::WaitMode::yield}}) {
    auto s = parse_scenario(with_cpu(text), "t.toml");
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->cpu->wait, expected) << text;
    auto again = parse_scenario(to_toml(*s), "again.toml");
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->cpu->wait, expected) << to_toml(*s);
  }
}

TEST(ScenarioParser, ReadsHowTheFrameLoopWaitsForItsJobs) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, jobs::LoopWait>>{
           {"", jobs::LoopWait::block},
           {"loop_wait = \"block\"\n", jobs::LoopWait::block},
           {"loop_wait = \"spin\"\n", jobs::LoopWait::spin},
           {"loop_wait = \"yield\"\n", jobs::LoopWait::yield}}) {
    auto s = parse_scenario(with_cpu(text), "t.toml");
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->cpu->loop_wait, expected) << text;
    // Written back as it was read.
    auto again = parse_scenario(to_toml(*s), "again.toml");
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->cpu->loop_wait, expected) << to_toml(*s);
  }
  auto bad = parse_scenario(with_cpu("loop_wait = \"nap\"\n"), "t.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown loop_wait 'nap' in [cpu] (block | spin | yield)"),
            std::string::npos)
      << bad.error().message;
}

TEST(ScenarioParser, ACustomSliceIsReadWhereTheKernelKeepsOneAndRefusedWithFileAndLine) {
  auto out_of_range = parse_scenario(with_cpu("slice_ms = 500\n"), "t.toml");
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.error().message.find("t.toml:8: 'slice_ms' in [cpu] is 500, must be in "
                                              "[0.1, 100]"),
            std::string::npos)
      << out_of_range.error().message;
  auto s = parse_scenario(with_cpu("slice_ms = 0.5\n"), "t.toml");
  if (custom_slice_unsupported_reason().empty()) {
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->cpu->slice_ms, 0.5);
    auto again = parse_scenario(to_toml(*s), "again.toml");
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->cpu->slice_ms, 0.5);
  } else {
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("t.toml:8: [cpu]: slice_ms: this host takes no custom slice"),
              std::string::npos)
        << s.error().message;
  }
  EXPECT_FALSE(parse_scenario(with_cpu(""), "t.toml")->cpu->slice_ms);
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
      {"wait = \"nap\"\n",
       "test.toml:8: unknown wait 'nap' in [cpu] (spin | sleep | "
       "spin_then_sleep | yield)"},
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

}  // namespace
}  // namespace gpuoverlap::scenario_tests
