// Where a condition's frame time went (analysis/time_account.h), and the host's bursts
// (analysis/host_bursts.h) that may not decide a verdict alone.
#include <gtest/gtest.h>

#include "analysis/study_files.h"
#include "analysis/verdict.h"
#include "verdict_test_data.h"

namespace gpuoverlap::verdict_tests {
namespace {

// The frame loop's phases of every frame, adding up to its interval: the jobs 5 ms, the GPU
// 1.5 ms, the rest small, the pace what is left of 8 ms, and `woke_late_us` after it.
void set_loop_phases(std::vector<ScenarioOutcome>& rounds, double woke_late_us,
                     double run_delay_us) {
  for (ScenarioOutcome& o : rounds)
    for (FrameRecord& f : o.timeline->frames) {
      f.loop_jobs_us = 5000, f.loop_submit_us = 200, f.loop_tool_us = 100;
      f.loop_gpu_wait_us = 1500, f.loop_pace_us = 1150;
      f.loop_woke_late_us = woke_late_us + (f.frame % 3) * 10.0 + o.scenario.round;
      f.frame_interval_us = 7950 + *f.loop_woke_late_us;
      f.loop_run_delay_us = run_delay_us + (f.frame % 2) * 5.0;
    }
}

TEST(TimeAccount, ThePhaseThatMovedIsWhereTheTimeWentAndTheLateFramesItOverlapped) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.005, 0, 3, 120, 1);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.005, 0, 3, 120, 2);
  set_loop_phases(baseline, 50, 20);
  set_loop_phases(managed, 1350, 1200);
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_TRUE(v->conditions[0].time_account);
  const TimeAccount& a = *v->conditions[0].time_account;
  EXPECT_NEAR(a.interval.shift_us, 1300, 0.01);
  ASSERT_EQ(a.phases.size(), 6u);
  double phase_shifts_us = 0;
  for (const PhaseShift& p : a.phases) phase_shifts_us += p.shift_us;
  EXPECT_NEAR(phase_shifts_us, a.interval.shift_us, 0.01) << "the shifts add up";
  const PhaseShift& woke = a.phases[5];
  EXPECT_EQ(woke.phase, "woke_late");
  EXPECT_NEAR(woke.shift_us, 1300, 0.01);
  ASSERT_TRUE(woke.low_us && woke.high_us) << "three round pairs";
  EXPECT_LE(*woke.low_us, 1300.01);
  EXPECT_GE(*woke.high_us, 1299.99);
  ASSERT_TRUE(a.run_delay);
  EXPECT_NEAR(a.run_delay->shift_us, 1180, 0.01);
  EXPECT_EQ(a.frames, 360u);
  EXPECT_EQ(a.late_frames, 360u) << "every frame past 8.4 ms";
  EXPECT_EQ(a.late_overlapping_background, 360u);
  EXPECT_EQ(a.line,
            "frame interval +1.30 ms (mean): the frame loop waited +1.18 ms for a CPU (runnable "
            "but not running); the phase that grew most: waking late after the pacing sleep, "
            "+1.30 ms [1.30, 1.30]; 100 % of late frames (360 of 360) overlapped a background "
            "task");
  // A wait for a CPU under half the change is not the cause: the phase leads.
  TimeAccount scheduled_promptly = a;
  scheduled_promptly.run_delay->shift_us = 30;
  EXPECT_EQ(describe_time_account(scheduled_promptly),
            "frame interval +1.30 ms (mean): most of it waking late after the pacing sleep, "
            "+1.30 ms [1.30, 1.30]; runnable but not running +0.03 ms; 100 % of late frames "
            "(360 of 360) overlapped a background task");
  EXPECT_NE(v->summary.find(a.line), std::string::npos) << v->summary;
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_EQ(json["conditions"][0]["time_account"]["line"], a.line);
  EXPECT_EQ(json["conditions"][0]["time_account"]["phases"][5]["phase"], "woke_late");
  // Frames without the loop's phases (results of an older version, or none measured) have no
  // account, and the verdict stands as before.
  auto plain_baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.005, 0, 3, 120, 1);
  auto plain = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.005, 0, 3, 120, 2);
  auto without = judge_study(all_of({&plain_baseline, &plain}), VerdictSettings{});
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->conditions[0].time_account);
  EXPECT_TRUE(verdict_json(*without, VerdictSettings{})["conditions"][0]["time_account"].is_null());
}

// The frame loop's CPU against the compile threads': a compile thread on the frame loop's CPU
// in one round of three is named in the sentence, and frames no compile ran in are not counted.
TEST(TimeAccount, SaysInHowManyIntervalsTheFrameLoopSharedItsCpuWithACompileThread) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.005, 0, 3, 120, 1);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.005, 0, 3, 120, 2);
  set_loop_phases(baseline, 50, 20);
  set_loop_phases(managed, 1350, 1200);
  constexpr std::int64_t kOriginNs = 1'000'000'000'000;
  for (ScenarioOutcome& o : managed) {
    o.timeline->time_origin_ns = kOriginNs;
    for (FrameRecord& f : o.timeline->frames) {
      f.cpu_start_us = 8000.0 * f.frame;
      f.loop_cpu = 3;
    }
    // One compile from before the first frame to just before frame 60's start: on CPU 3 in
    // round 1, CPU 5 in the others. Frame 61's interval (from frame 60's start less a little)
    // still holds its end; the intervals after it have no compile running.
    background::BackgroundTaskRecord task;
    task.start_ns = kOriginNs - 1'000'000;
    task.finish_ns = kOriginNs + 8000LL * 60 * 1000 - 1000;
    task.thread.cpu_start = task.thread.cpu_end = o.scenario.round == 1 ? 3 : 5;
    o.timeline->background_tasks.push_back(task);
  }
  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  const TimeAccount& a = *v->conditions[0].time_account;
  EXPECT_EQ(a.intervals_with_compiles, 3u * 62) << "frames 0 to 61 of each round";
  EXPECT_EQ(a.intervals_sharing_cpu, 62u) << "round 1's";
  EXPECT_TRUE(
      a.line.ends_with("; in 62 of 186 intervals the frame loop ran on a CPU a compile "
                       "thread ran on"))
      << a.line;
  // The workers' CPUs: one on the frame loop's in every 4th managed frame, never in the
  // baseline's.
  for (ScenarioOutcome& o : baseline)
    for (FrameRecord& f : o.timeline->frames) f.workers_on_loop_cpu = 0;
  for (ScenarioOutcome& o : managed)
    for (FrameRecord& f : o.timeline->frames) f.workers_on_loop_cpu = f.frame % 4 == 0 ? 1 : 0;
  auto with_workers = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(with_workers.ok());
  const TimeAccount& w = *with_workers->conditions[0].time_account;
  EXPECT_EQ(w.frames_with_worker_cpus, 360u);
  EXPECT_EQ(w.frames_worker_on_loop_cpu, 90u);
  EXPECT_EQ(w.baseline_frames_with_worker_cpus, 360u);
  EXPECT_EQ(w.baseline_frames_worker_on_loop_cpu, 0u);
  EXPECT_TRUE(
      w.line.ends_with("; a worker ran on the frame loop's CPU in 25 % of frames "
                       "(baseline 0 %)"))
      << w.line;
}

// Four rounds; in round 4 the host stalls the baseline's jobs (6 frames whose CPU phase takes
// 30 ms for 5, their workers waiting for a CPU), and the managed condition has a share of late
// frames per round that decides it intrusive over four rounds but not over the other three.
TEST(HostBursts, AreNamedCountedAndMayNotDecideAVerdictAlone) {
  auto baseline = paced_rounds("baseline", std::nullopt, false, 1.0, 0, 0.0, 0, 4, 120, 7);
  auto managed = paced_rounds("managed", managed_spec(), false, 1.0, 0, 0.0, 0, 4, 120, 8);
  for (auto* rounds : {&baseline, &managed})
    for (ScenarioOutcome& o : *rounds)
      for (FrameRecord& f : o.timeline->frames) {
        f.workers_on_cpu_us = 15 * 5000.0;
        f.workers_run_delay_us = 150.0, f.workers_run_delay_max_us = 10.0;
      }
  // The workers' figures of a frame's jobs are in the next frame's record (its interval).
  for (FrameRecord& f : baseline[3].timeline->frames) {
    if (f.frame >= 40 && f.frame < 46) f.cpu_phase_us = 30'000, f.frame_interval_us = 30'000;
    if (f.frame >= 41 && f.frame < 47) f.workers_run_delay_max_us = 24'000;
  }
  FrameRecord& paused = baseline[3].timeline->frames[60];  // neither waiting nor running
  paused.cpu_phase_us = 20'000;
  // The machine's steal per round: only the burst round's is summed.
  for (std::size_t r = 0; r < baseline.size(); ++r) baseline[r].host_steal_ms = 10.0 * (r + 1);
  const double late_share[] = {0.30, 0.10, 0.20, 0.35};
  for (std::size_t r = 0; r < managed.size(); ++r)
    for (FrameRecord& f : managed[r].timeline->frames)
      if (f.frame < late_share[r] * 120) f.frame_interval_us = 9000;

  VerdictSettings unguarded;
  unguarded.guard_host_bursts = false;
  auto all_rounds = judge_study(all_of({&baseline, &managed}), unguarded);
  ASSERT_TRUE(all_rounds.ok()) << all_rounds.error().message;
  ASSERT_EQ(all_rounds->conditions[0].decision, Decision::intrusive) << all_rounds->summary;
  std::vector<const ScenarioOutcome*> first_three;
  for (auto* rounds : {&baseline, &managed})
    for (std::size_t r = 0; r < 3; ++r) first_three.push_back(&(*rounds)[r]);
  auto calm = judge_study(first_three, unguarded);
  ASSERT_TRUE(calm.ok());
  ASSERT_EQ(calm->conditions[0].decision, Decision::inconclusive) << "the premise: round 4 decides";

  auto v = judge_study(all_of({&baseline, &managed}), VerdictSettings{});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_TRUE(v->burst_reference);
  EXPECT_NEAR(v->burst_reference->line_us(), 15'000, 100) << "3 x the baseline's 5 ms median";
  EXPECT_EQ(v->baseline_bursts.frames, 7u);
  EXPECT_EQ(v->baseline_bursts.rounds, (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(v->baseline_bursts.waited_for_cpu, 6u);
  EXPECT_EQ(v->baseline_bursts.off_cpu, 1u);
  EXPECT_EQ(v->conditions[0].bursts.frames, 0u);
  EXPECT_EQ(v->conditions[0].decision, Decision::inconclusive);
  EXPECT_EQ(v->conditions[0].burst_note,
            "intrusive only with round 4, where the host burst with nothing else running; "
            "without it: inconclusive");
  EXPECT_EQ(v->baseline_bursts.steal_ms_in_burst_rounds, 40.0);
  EXPECT_FALSE(v->conditions[0].bursts.steal_ms_in_burst_rounds) << "no bursts, no figure";
  EXPECT_NE(v->summary.find("baseline: 7 host bursts (CPU phase past 15.0 ms) in round 4: 6 "
                            "waited for a CPU, 1 off a CPU; hypervisor steal in that round: 40 ms"),
            std::string::npos)
      << v->summary;
  for (const VerdictRow& row : v->rows) {
    if (row.condition == "managed" && row.role == EndpointRole::primary) {
      EXPECT_NE(row.decision, Decision::intrusive) << row.metric;
    }
  }
  const nlohmann::json json = verdict_json(*v, VerdictSettings{});
  EXPECT_EQ(json["baseline_host_bursts"]["frames"], 7);
  EXPECT_EQ(json["baseline_host_bursts"]["waited_for_cpu"], 6);
  EXPECT_EQ(json["baseline_host_bursts"]["steal_ms_in_burst_rounds"], 40.0);
  EXPECT_EQ(json["conditions"][0]["burst_note"], v->conditions[0].burst_note);
  EXPECT_EQ(json["burst_line_us"], v->burst_reference->line_us());
}

}  // namespace
}  // namespace gpuoverlap::verdict_tests
