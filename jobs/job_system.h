// The job system of a game frame: worker threads that take the frame's jobs, the critical
// chain first, from one shared queue. The frame loop releases a frame's jobs (begin_frame) and
// waits for them (wait_frame) before it records and submits the frame's GPU work, as a render
// thread would. Plain C++ threads and atomics: no GPU, no model beyond cpu_spec.h.
//
// Contracts:
// - Every job of a frame runs exactly once (FrameJobsResult::runs_per_job says so for tests).
//   Claims carry the frame's generation, so a worker that read an old frame can never take a
//   job of a newer one as its own.
// - The critical jobs run in order, job k + 1 released when job k ends; any free worker takes a
//   released critical job before a parallel one.
// - begin_frame and wait_frame are called from one thread (the frame loop's), alternately.
// - The destructor stops the workers and joins them, also in the middle of a frame: a job
//   that is running finishes (at most one job's time), the frame's other jobs never start.
// - Every wait has a deadline (wait_frame) or ends at stop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/host_info.h"
#include "jobs/cpu_spec.h"

namespace gpuoverlap::jobs {

struct FrameJobsResult {
  std::int64_t release_ns = 0;  // begin_frame, CLOCK_MONOTONIC_RAW
  std::int64_t end_ns = 0;      // the last job's end
  // The chain's last job's end; 0 without a chain.
  std::int64_t critical_end_ns = 0;
  // Per worker: release to the moment the worker saw the frame (its wake-up latency, as
  // schbench reports it). A worker that had not seen the frame when its last job ended gets
  // end - release, a lower bound, and counts in missed_workers.
  std::vector<double> wake_us;
  std::vector<double> busy_us;  // per worker: time spent running this frame's jobs
  std::vector<std::uint32_t> jobs_by_worker;
  // Per worker: the CPU its last job of this frame ended on; -1 for a worker that ran none.
  // Against the frame loop's CPU: a worker there competes with the thread that starts frames.
  std::vector<int> cpu_by_worker;
  std::uint32_t missed_workers = 0;
  // How many times each job ran, by job index (critical jobs first): 1 each. And each job's
  // start and end (CLOCK_MONOTONIC_RAW), by index: the chain's order and its hand-over delays.
  std::vector<std::uint8_t> runs_per_job;
  std::vector<std::int64_t> job_start_ns, job_end_ns;
  std::uint32_t chain_length = 0;  // the critical jobs: indices [0, chain_length)

  double makespan_us() const { return static_cast<double>(end_ns - release_ns) / 1000.0; }
  std::optional<double> critical_path_us() const;
  double wake_max_us() const;
  // The longest delay between a critical job's release (the end of the one before it) and its
  // start: how long the chain waited for a worker. 0 without a chain of two or more.
  double critical_handover_max_us() const;
};

class JobSystem {
 public:
  // Starts spec.workers threads at normal priority; a job is spec.job_ms() of busy work at
  // `iterations_per_us` (busy_work.h). Contract: spec as the parser validates it.
  JobSystem(const CpuFrameSpec& spec, double iterations_per_us);
  ~JobSystem();
  JobSystem(const JobSystem&) = delete;
  JobSystem& operator=(const JobSystem&) = delete;

  // Releases the next frame's jobs and returns at once. Contract: no frame in progress.
  // Returns the release time (FrameJobsResult::release_ns), CLOCK_MONOTONIC_RAW.
  std::int64_t begin_frame();
  bool in_progress() const { return in_progress_; }
  // Waits until every job of the frame in progress has run, or until deadline_ns
  // (CLOCK_MONOTONIC_RAW): nullopt then, and the frame stays in progress. Contract: a frame is
  // in progress. How the calling thread waits is the scenario's (CpuFrameSpec::loop_wait):
  // asleep on a condition, spinning, or yielding between polls.
  std::optional<FrameJobsResult> wait_frame(std::int64_t deadline_ns);

  const CpuFrameSpec& spec() const { return spec_; }
  // With pin_workers: the CPU each worker was pinned to, -1 where pinning failed; empty
  // otherwise. Complete once the constructor returned.
  const std::vector<int>& pinned_cpus() const { return pinned_cpus_; }
  std::uint32_t pinning_failures() const { return pinned_failed_.load(std::memory_order_relaxed); }
  // Workers that could not keep off CpuFrameSpec::keep_off_cpus (the background's).
  std::uint32_t keep_off_failures() const {
    return keep_off_failed_.load(std::memory_order_relaxed);
  }
  std::uint64_t job_iterations() const { return job_iterations_; }
  // The scheduling the workers ran under, as each reported it on starting.
  std::optional<SchedulingSeen::Seen> worker_scheduling() const { return worker_scheduling_.get(); }
  // The workers' OS thread ids, in worker order; 0 for one not started yet. For reading what
  // the scheduler did to them from outside (read_thread_accounting_of).
  std::vector<std::int64_t> worker_thread_ids() const;

 private:
  struct alignas(64) WorkerSlot {
    std::atomic<std::uint32_t> woke_generation{0};
    std::atomic<std::int64_t> woke_ns{0};
    std::atomic<std::uint32_t> busy_generation{0};
    std::atomic<std::int64_t> busy_ns{0};
    std::atomic<std::uint32_t> jobs{0};
    std::atomic<std::int64_t> thread_id{0};  // the OS's, set once the worker runs
    std::atomic<int> last_cpu{-1};           // where its last job ended (sched_getcpu)
  };

  void worker_loop(std::size_t worker);
  bool try_run_one(std::uint32_t generation, std::size_t worker);
  void run_job(std::uint32_t generation, std::uint32_t job, std::size_t worker, bool critical);
  void wait_for_signal(std::uint32_t seen);

  const CpuFrameSpec spec_;
  const std::uint64_t job_iterations_;
  const std::uint32_t total_jobs_;
  const std::uint32_t critical_jobs_;
  const std::uint32_t parallel_jobs_;

  // generation << 32 | next parallel job; generation << 32 | released << 16 | taken.
  std::atomic<std::uint64_t> parallel_claim_{0};
  std::atomic<std::uint64_t> critical_state_{0};
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> done_count_{0};
  std::atomic<std::int64_t> release_ns_{0};
  std::atomic<std::int64_t> end_ns_{0};
  std::atomic<std::int64_t> critical_end_ns_{0};
  // Bumped (and notified) whenever work appears or the workers must stop: what they wait on.
  std::atomic<std::uint32_t> signal_{0};
  std::atomic<bool> stop_{false};
  std::unique_ptr<std::atomic<std::uint8_t>[]> runs_;
  std::unique_ptr<std::atomic<std::int64_t>[]> job_start_ns_, job_end_ns_;
  std::unique_ptr<WorkerSlot[]> slots_;

  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  std::uint32_t done_generation_ = 0;  // guarded by done_mutex_
  // done_generation_ for a frame loop that polls (CpuFrameSpec::loop_wait spin or yield):
  // stored, with release, after it.
  std::atomic<std::uint32_t> done_generation_polled_{0};

  std::uint32_t current_generation_ = 0;  // the frame loop's thread only
  bool in_progress_ = false;              // the frame loop's thread only
  std::vector<int> pinned_cpus_;
  std::atomic<std::uint32_t> pinned_failed_{0};
  std::atomic<std::uint32_t> keep_off_failed_{0};
  SchedulingSeen worker_scheduling_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuoverlap::jobs
