// The background work beside the verdict: the commits waited for, the compiles each condition got
// done, the positive control's doses, and the frames' and compiles' exports they are read from.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "analysis/study_files.h"
#include "analysis/verdict.h"
#include "timeline/export.h"
#include "verdict_test_data.h"

namespace gpuoverlap::verdict_tests {
namespace {

TEST(Verdict, CommitWaitsAreSummedUpWithTheRoundsNeverSignalledAndThoseAskedAtTheEnd) {
  BackgroundProgress none;
  EXPECT_EQ(describe_commit_waits(none), "");
  BackgroundProgress one;
  one.commit_to_event_ms = {412.4};
  EXPECT_EQ(describe_commit_waits(one), "a commit waited for: 412 ms median over 1 round");
  BackgroundProgress three;
  three.commit_to_event_ms = {530, 412, 300};
  three.commits_not_signalled = 1;
  three.commits_asked_at_end = 2;
  EXPECT_EQ(describe_commit_waits(three),
            "a commit waited for: 412 ms median over 3 rounds (max 530), 1 of 4 rounds never "
            "signalled within commit_timeout_ms, 2 of 4 asked after the frames (every CPU free)");
  BackgroundProgress never;
  never.commits_not_signalled = 2;
  EXPECT_EQ(describe_commit_waits(never),
            "a commit waited for: 2 of 2 rounds never signalled within commit_timeout_ms");
}

TEST(Verdict, ProgressCountsCompletedCompilesAndCallsAnIdleSchedulerStarved) {
  auto baseline = game_rounds("baseline", std::nullopt, 1.0, 1.0, 0, 100);
  auto managed = game_rounds("managed", managed_spec(), 1.0, 1.0, 0, 200);
  // The control: a frame in five past the stutter line (a paced frame's pacing decides).
  auto control = game_rounds("unmanaged", unmanaged_spec(), 1.3, 1.0, 5, 300);
  // Each control round compiles 100 times over its frames; managed: once in all, or 50 times.
  auto add_compiles = [](std::vector<ScenarioOutcome>& rounds, std::size_t per_round,
                         bool managed) {
    for (ScenarioOutcome& o : rounds) {
      ScenarioTimeline& t = *o.timeline;
      t.time_origin_ns = 1'000'000'000;
      for (FrameRecord& f : t.frames) f.cpu_start_us = f.frame * 8000.0;
      for (std::size_t i = 0; i < per_round; ++i) {
        background::BackgroundTaskRecord task;
        task.managed = managed;
        task.queued_ns = t.time_origin_ns + static_cast<std::int64_t>(i) * 10'000'000;
        task.start_ns = task.queued_ns + 1'000'000;
        task.finish_ns = task.queued_ns + 5'000'000;
        task.outcome = "delivered";
        t.background_tasks.push_back(task);
      }
      background::BackgroundTaskRecord cancelled;
      cancelled.outcome = "cancelled";
      t.background_tasks.push_back(cancelled);
    }
  };
  add_compiles(control, 100, false);
  add_compiles(managed, 50, true);
  auto v = judge_study(all_of({&baseline, &managed, &control}), VerdictSettings{});
  ASSERT_TRUE(v.ok());
  const ConditionVerdict& m = v->conditions[0];
  EXPECT_EQ(m.progress.compiles, 6u * 50) << "completed only; the cancelled ones are not";
  EXPECT_NEAR(*m.progress.queue_to_done_p50_ms, 5.0, 1e-9);
  EXPECT_GT(m.progress.compiles_per_s, 0);
  // The same frames (their last one differs a little), twice the compiles.
  EXPECT_NEAR(v->conditions[1].progress.compiles_per_s / m.progress.compiles_per_s, 2.0, 1e-3);
  EXPECT_FALSE(m.starved);
  EXPECT_NE(v->summary.find("managed: non-intrusive, "), std::string::npos) << v->summary;
  EXPECT_NE(v->summary.find("(unmanaged, 4 threads: "), std::string::npos) << v->summary;

  auto idle = game_rounds("managed", managed_spec(), 1.0, 1.0, 0, 200);
  add_compiles(idle, 0, true);
  auto w = judge_study(all_of({&baseline, &idle, &control}), VerdictSettings{});
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->conditions[0].starved);
  EXPECT_EQ(w->conditions[0].decision, Decision::non_intrusive);
  EXPECT_NE(w->summary.find("managed: non-intrusive but starved"), std::string::npos) << w->summary;
  EXPECT_EQ(verdict_json(*w, VerdictSettings{})["conditions"][0]["starved"], true);
}

// The positive control at 1, 2 and 4 threads: the study says which dose it detects, and
// what that dose did.
TEST(Verdict, TheControlsDoseResponseNamesTheSmallestDoseDetected) {
  const std::vector<double> level(6, 1000.0);
  auto baseline = rounds_of("baseline", std::nullopt, level, 1.0, 10);
  auto managed = rounds_of("managed", managed_spec(), level, 1.0, 20);
  std::vector<std::vector<ScenarioOutcome>> controls;
  for (const auto& [threads, factor] :
       {std::pair{4u, 1.5}, std::pair{1u, 1.0}, std::pair{2u, 1.2}}) {
    background::BackgroundSpec spec = unmanaged_spec();
    spec.unmanaged_threads = threads;
    controls.push_back(
        rounds_of("unmanaged-" + std::to_string(threads), spec, level, factor, 100 * threads));
  }
  auto v = judge_study(all_of({&baseline, &managed, &controls[0], &controls[1], &controls[2]}),
                       VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->doses.size(), 3u);
  EXPECT_EQ(v->doses[0].threads, 1u) << "fewest threads first";
  EXPECT_EQ(v->doses[0].decision, Decision::non_intrusive);
  EXPECT_TRUE(v->doses[0].metric.empty());
  EXPECT_EQ(v->doses[1].threads, 2u);
  EXPECT_EQ(v->doses[1].decision, Decision::intrusive);
  EXPECT_EQ(v->doses[1].metric, "cpu_frame_us");
  EXPECT_NEAR(*v->doses[1].ratio_p50, 1.2, 0.01);
  EXPECT_EQ(v->detected_from_threads, 2u);
  EXPECT_TRUE(v->control_detected);
  EXPECT_NE(v->summary.find("control dose-response: 1 thread: non-intrusive; 2 threads: intrusive "
                            "(cpu_frame_us x1.2"),
            std::string::npos)
      << v->summary;
  EXPECT_NE(v->summary.find("the smallest dose detected is 2 normal-priority compile threads"),
            std::string::npos);
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_EQ(json["detected_from_threads"], 2);
  EXPECT_EQ(json["control_doses"][2]["threads"], 4);
  EXPECT_EQ(row_of(*v, "managed", "cpu_frame_us").decision, Decision::non_intrusive);
}

TEST(BackgroundActivity, CountsTheCompilesOverlappingEachFrame) {
  ScenarioTimeline t;
  t.time_origin_ns = 1'000'000;
  t.frames.push_back({.frame = 0, .cpu_start_us = 0, .cpu_frame_us = 100});    // [1.0, 1.1] ms
  t.frames.push_back({.frame = 1, .cpu_start_us = 200, .cpu_frame_us = 100});  // [1.2, 1.3] ms
  auto task = [](std::int64_t start_ns, std::int64_t finish_ns, bool managed, bool boosted) {
    background::BackgroundTaskRecord r;
    r.start_ns = start_ns, r.finish_ns = finish_ns, r.managed = managed, r.boosted = boosted;
    return r;
  };
  t.background_tasks = {task(900'000, 1'050'000, true, false),     // frame 0 only
                        task(1'050'000, 1'250'000, true, true),    // both
                        task(1'250'000, 1'400'000, false, false),  // frame 1 only
                        task(0, 1'100'000, true, false)};          // cancelled: never ran
  annotate_background_activity(t);
  EXPECT_EQ(t.frames[0].bg_managed, 2u);
  EXPECT_EQ(t.frames[0].bg_boosted, 1u);
  EXPECT_EQ(t.frames[0].bg_unmanaged, 0u);
  EXPECT_EQ(t.frames[1].bg_managed, 1u);
  EXPECT_EQ(t.frames[1].bg_boosted, 1u);
  EXPECT_EQ(t.frames[1].bg_unmanaged, 1u);
}

TEST(BackgroundExport, FramesAndBackgroundCsvUseTheRunsTimeOrigin) {
  Scenario s;
  s.name = "s";
  ScenarioTimeline t;
  t.time_origin_ns = 5'000'000;
  t.frames.push_back({.frame = 0, .cpu_start_us = -3, .cpu_frame_us = 100, .cpu_submit_us = 20});
  background::BackgroundTaskRecord r;
  r.id = 1, r.label = "compile #1 A, quoted", r.queued_ns = 4'000'000, r.start_ns = 4'500'000,
  r.finish_ns = 6'000'000, r.outcome = "delivered", r.worker = 0, r.idle_priority = true;
  t.background_tasks.push_back(r);
  const std::string frames = frames_csv(s, t);
  EXPECT_EQ(frames.substr(0, frames.find('\n')),
            "scenario,frame,cpu_start_us,cpu_frame_us,cpu_submit_us,submit_to_start_us,"
            "poll_gap_max_us,bg_managed,bg_boosted,bg_unmanaged,status,bg_held,"
            "frame_interval_us,stutter,gpu_span_us,cpu_phase_us,critical_path_us,wake_max_us,"
            "workers_missed,worker_busy_min_us,worker_busy_max_us,poll_scans,poller_cpu,"
            "loop_jobs_us,loop_submit_us,loop_tool_us,loop_gpu_wait_us,loop_pace_us,"
            "loop_woke_late_us,loop_run_delay_us,loop_on_cpu_us,loop_switches_voluntary,"
            "loop_switches_involuntary,loop_cpu,workers_run_delay_us,workers_run_delay_max_us,"
            "workers_on_cpu_us,poller_run_delay_us,workers_on_loop_cpu,poller_thread_id,"
            "poller_wake_us,harness_reschedule_points,calibrated,sched_loop_runnable_us,"
            "sched_loop_to_background_us,sched_workers_runnable_us,"
            "sched_workers_to_background_us,sched_loop_longest");
  EXPECT_NE(frames.find("s,0,-3.000,100.000,20.000,,,0,0,0,ok,0,,0,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n"),
            std::string::npos)
      << frames;
  const std::string bg = background_csv(s, t);
  EXPECT_NE(bg.find("s,1,managed,\"compile #1 A, quoted\",0,0,1,-1000.000,-500.000,1000.000,"
                    "delivered,0.000,0.000,1"),
            std::string::npos)
      << bg;
}

}  // namespace
}  // namespace gpuoverlap::verdict_tests
