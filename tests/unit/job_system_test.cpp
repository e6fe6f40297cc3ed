// The job system of a game frame's CPU side (jobs/job_system.h): every job exactly once, the
// chain in order, every worker accounted for, a stop in the middle of a frame. Run under TSan
// in CI's sanitizer build. No timing is asserted: only orders and counts.
#include "jobs/job_system.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "jobs/busy_work.h"

namespace gpuoverlap::jobs {
namespace {

// A deadline no healthy run reaches: the tests wait for events, never for time.
std::int64_t far_deadline() { return monotonic_raw_ns() + 60'000'000'000; }

CpuFrameSpec spec_of(std::uint32_t workers, std::uint32_t jobs, std::uint32_t critical,
                     WaitMode wait) {
  CpuFrameSpec spec;
  spec.workers = workers;
  spec.jobs_per_frame = jobs;
  spec.critical_jobs = critical;
  spec.cpu_ms_per_frame = 0.01 * jobs;  // 10 µs jobs
  spec.wait = wait;
  spec.spin_us = 20;
  return spec;
}

TEST(JobSystem, EveryJobOfEveryFrameRunsExactlyOnceInEveryWaitMode) {
  for (WaitMode wait :
       {WaitMode::spin, WaitMode::sleep, WaitMode::spin_then_sleep, WaitMode::yield})
    for (std::uint32_t workers : {1u, 3u})
      for (auto [jobs, critical] : {std::pair{1u, 0u}, {1u, 1u}, {17u, 0u}, {17u, 4u}}) {
        SCOPED_TRACE(std::string(to_string(wait)) + ", " + std::to_string(workers) + " workers, " +
                     std::to_string(jobs) + " jobs, chain " + std::to_string(critical));
        JobSystem system(spec_of(workers, jobs, critical, wait), 10.0);
        for (int frame = 0; frame < 40; ++frame) {
          system.begin_frame();
          EXPECT_TRUE(system.in_progress());
          const std::optional<FrameJobsResult> r = system.wait_frame(far_deadline());
          ASSERT_TRUE(r);
          EXPECT_FALSE(system.in_progress());
          ASSERT_EQ(r->runs_per_job.size(), jobs);
          for (std::uint8_t runs : r->runs_per_job) EXPECT_EQ(runs, 1);
          EXPECT_EQ(std::accumulate(r->jobs_by_worker.begin(), r->jobs_by_worker.end(), 0u), jobs);
          ASSERT_EQ(r->wake_us.size(), workers);
          ASSERT_EQ(r->busy_us.size(), workers);
          // Every job ran inside the frame: after its release, by its end.
          for (std::uint32_t j = 0; j < jobs; ++j) {
            EXPECT_GE(r->job_start_ns[j], r->release_ns);
            EXPECT_LE(r->job_start_ns[j], r->job_end_ns[j]);
            EXPECT_LE(r->job_end_ns[j], r->end_ns);
          }
          EXPECT_EQ(r->critical_path_us().has_value(), critical > 0);
          for (double wake : r->wake_us) EXPECT_GE(wake, 0);
        }
      }
}

TEST(JobSystem, TheChainRunsInOrderEachJobAfterTheOneBefore) {
  JobSystem system(spec_of(4, 30, 6, WaitMode::spin_then_sleep), 10.0);
  for (int frame = 0; frame < 30; ++frame) {
    system.begin_frame();
    const std::optional<FrameJobsResult> r = system.wait_frame(far_deadline());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->chain_length, 6u);
    for (std::uint32_t k = 1; k < 6; ++k) EXPECT_GE(r->job_start_ns[k], r->job_end_ns[k - 1]);
    // The chain's end is its last job's end, and the frame ends no earlier.
    EXPECT_EQ(r->critical_end_ns, r->job_end_ns[5]);
    EXPECT_LE(r->critical_end_ns, r->end_ns);
    EXPECT_GE(r->critical_handover_max_us(), 0);
  }
}

TEST(JobSystem, AWorkerThatNeverSawTheFrameCountsAsMissedWithALowerBound) {
  // One job, many sleeping workers: the frame may end before some of them wake. Whatever the
  // scheduler did, a worker either saw the frame or is counted as missed with end - release.
  JobSystem system(spec_of(8, 1, 0, WaitMode::sleep), 10.0);
  for (int frame = 0; frame < 50; ++frame) {
    system.begin_frame();
    const std::optional<FrameJobsResult> r = system.wait_frame(far_deadline());
    ASSERT_TRUE(r);
    std::uint32_t at_bound = 0;
    for (double wake : r->wake_us)
      if (wake == r->makespan_us()) ++at_bound;
    EXPECT_LE(r->missed_workers, at_bound);
    EXPECT_LE(r->missed_workers, 7u);  // the one that ran the job saw the frame
  }
}

TEST(JobSystem, AMissedDeadlineKeepsTheFrameAndStoppingMidFrameJoinsEveryThread) {
  for (WaitMode wait :
       {WaitMode::spin, WaitMode::sleep, WaitMode::spin_then_sleep, WaitMode::yield}) {
    CpuFrameSpec spec = spec_of(2, 2000, 2, wait);
    spec.cpu_ms_per_frame = 2000.0;  // 1 ms jobs: seconds of work, never waited for
    auto system = std::make_unique<JobSystem>(spec, calibrate_once().iterations_per_us);
    system->begin_frame();
    EXPECT_FALSE(system->wait_frame(monotonic_raw_ns()));  // a deadline already past
    EXPECT_TRUE(system->in_progress());
    system.reset();  // joins: running jobs finish, the rest never start
  }
}

TEST(JobSystem, PinnedWorkersLeaveTheFirstUsableCpuToThePollerAndRunEveryJob) {
  CpuFrameSpec spec = spec_of(3, 12, 2, WaitMode::spin_then_sleep);
  spec.pin_workers = true;
  JobSystem system(spec, 10.0);
  const std::vector<int> cpus = usable_cpu_ids();
  ASSERT_EQ(system.pinned_cpus().size(), 3u);
  for (int cpu : system.pinned_cpus()) {
    if (cpus.size() > 1) {
      EXPECT_NE(cpu, cpus.front()) << "the first usable CPU is the poller's";
      EXPECT_NE(std::find(cpus.begin(), cpus.end(), cpu), cpus.end());
    } else {
      EXPECT_EQ(cpu, -1) << "one CPU: nothing to pin to but the poller's";
    }
  }
  for (int frame = 0; frame < 20; ++frame) {
    system.begin_frame();
    const std::optional<FrameJobsResult> r = system.wait_frame(far_deadline());
    ASSERT_TRUE(r);
    for (std::uint8_t runs : r->runs_per_job) EXPECT_EQ(runs, 1);
  }
}

TEST(JobSystem, BusyWorkIsDeterministicAndTheCalibrationIsPositive) {
  EXPECT_EQ(busy_work(1000, 7), busy_work(1000, 7));
  EXPECT_NE(busy_work(1000, 7), busy_work(1000, 8));
  const BusyWorkCalibration c = calibrate_busy_work(3, 0.5);
  EXPECT_GT(c.iterations_per_us, 0);
  EXPECT_EQ(c.runs, 3u);
  EXPECT_GE(c.spread_pct, 0);
  // The process's calibration is measured once.
  EXPECT_EQ(&calibrate_once(), &calibrate_once());
  EXPECT_STREQ(c.clock, "thread CPU time") << "Linux has a thread CPU clock";
}

// A calibration that shares its CPU with a spinning thread for every run is timed on its own
// CPU clock: it finds about the rate of one that has the CPU alone, where the wall clock would
// find about half, and it says that its runs were shared. Runs sized for 30 ms of the wall
// clock: longer than most slices the scheduler gives one of two threads on a CPU (CFS's latency
// period, 6 ms x (1 + log2 of the CPUs) up to 24 ms; EEVDF's 3 ms slice). On a loaded machine
// the sizing is slowed too and a run can be as short as 6 ms: some runs may then have the CPU
// alone, which is why only some need be shared. The bound on the rate is loose: a hyper-thread
// sibling busy in one phase and not the other moves it by up to a third.
TEST(JobSystem, BusyWorkCalibrationSharingItsCpuIsNotSlower) {
  const std::vector<int> cpus = usable_cpu_ids();
  ASSERT_FALSE(cpus.empty());
  const int cpu = cpus.front();
  double alone = 0;
  std::thread([&] {
    ASSERT_TRUE(pin_current_thread(cpu));
    alone = calibrate_busy_work(3, 30.0).iterations_per_us;
  }).join();
  std::atomic<bool> started{false}, pinned{false}, stop{false};
  std::thread spinner([&] {
    pinned.store(pin_current_thread(cpu));
    started.store(true);
    std::uint64_t x = 1;
    while (pinned.load() && !stop.load(std::memory_order_relaxed)) x = busy_work(1000, x);
    (void)x;
  });
  const std::int64_t deadline_ns = monotonic_raw_ns() + 10'000'000'000;
  while (!started.load() && monotonic_raw_ns() < deadline_ns) std::this_thread::yield();
  BusyWorkCalibration shared;
  if (started.load() && pinned.load())
    std::thread([&] {
      if (pin_current_thread(cpu)) shared = calibrate_busy_work(3, 30.0);
    }).join();
  stop.store(true);
  spinner.join();
  ASSERT_TRUE(started.load() && pinned.load()) << "the spinner did not start on CPU " << cpu;
  ASSERT_GT(shared.runs, 0u) << "the calibration could not be pinned to CPU " << cpu;
  ASSERT_GT(alone, 0);
  // A run that shared its CPU is one whose wall clock counted the spinner's turns and whose CPU
  // clock did not. Not every run need share it: a run about as long as a scheduler slice may
  // get one whole on a loaded machine, so the best wall run is not asserted to be slower.
  EXPECT_GT(shared.shared_runs, 0u) << "the spinner took the CPU for part of the runs";
  EXPECT_GT(shared.iterations_per_us, 0.6 * alone) << "the CPU clock does not count its turns";
}

}  // namespace
}  // namespace gpuoverlap::jobs
