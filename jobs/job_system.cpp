#include "jobs/job_system.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/cpu_relax.h"
#include "core/thread_accounting.h"
#include "core/thread_policy.h"
#include "core/wake_signal.h"
#include "jobs/busy_work.h"

namespace gpuoverlap::jobs {

namespace {

constexpr std::uint32_t generation_of(std::uint64_t word) {
  return static_cast<std::uint32_t>(word >> 32);
}
constexpr std::uint32_t released_of(std::uint64_t critical) {
  return static_cast<std::uint32_t>((critical >> 16) & 0xffff);
}
constexpr std::uint32_t taken_of(std::uint64_t critical) {
  return static_cast<std::uint32_t>(critical & 0xffff);
}

// Each worker's work results land here, once per thread at exit, so the arithmetic has an
// observable result without the workers sharing a cache line while they work.
std::atomic<std::uint64_t> g_worker_result_sink{0};

}  // namespace

std::optional<double> FrameJobsResult::critical_path_us() const {
  if (critical_end_ns == 0) return std::nullopt;
  return static_cast<double>(critical_end_ns - release_ns) / 1000.0;
}

double FrameJobsResult::critical_handover_max_us() const {
  double worst = 0;
  // Critical jobs are the first indices; their count is where the chain's starts stop
  // following its ends, which the caller knows: job k + 1 of the chain starts after job k.
  for (std::size_t k = 1; k < chain_length && k < job_start_ns.size(); ++k)
    worst = std::max(worst, static_cast<double>(job_start_ns[k] - job_end_ns[k - 1]) / 1000.0);
  return worst;
}

double FrameJobsResult::wake_max_us() const {
  return wake_us.empty() ? 0 : *std::max_element(wake_us.begin(), wake_us.end());
}

JobSystem::JobSystem(const CpuFrameSpec& spec, double iterations_per_us)
    : spec_(spec),
      job_iterations_(static_cast<std::uint64_t>(
          std::max(1.0, std::round(spec.job_ms() * 1000.0 * iterations_per_us)))),
      total_jobs_(spec.jobs_per_frame),
      critical_jobs_(std::min(spec.critical_jobs, spec.jobs_per_frame)),
      parallel_jobs_(spec.jobs_per_frame - std::min(spec.critical_jobs, spec.jobs_per_frame)),
      runs_(new std::atomic<std::uint8_t>[spec.jobs_per_frame]),
      job_start_ns_(new std::atomic<std::int64_t>[spec.jobs_per_frame]),
      job_end_ns_(new std::atomic<std::int64_t>[spec.jobs_per_frame]),
      slots_(new WorkerSlot[spec.workers]) {
  for (std::uint32_t j = 0; j < total_jobs_; ++j) {
    runs_[j].store(0, std::memory_order_relaxed);
    job_start_ns_[j].store(0, std::memory_order_relaxed);
    job_end_ns_[j].store(0, std::memory_order_relaxed);
  }
  // Placement is decided here, before any worker runs, so pinned_cpus_ needs no lock.
  if (spec.pin_workers) {
    std::vector<int> cpus = usable_cpu_ids();
    std::erase_if(cpus, [&](int cpu) {
      return std::find(spec.keep_off_cpus.begin(), spec.keep_off_cpus.end(), cpu) !=
             spec.keep_off_cpus.end();
    });
    for (std::size_t w = 0; w < spec.workers; ++w)
      pinned_cpus_.push_back(cpus.size() > 1 ? cpus[1 + w % (cpus.size() - 1)] : -1);
  }
  threads_.reserve(spec.workers);
  for (std::size_t w = 0; w < spec.workers; ++w)
    threads_.emplace_back([this, w] {
      name_this_thread(("worker " + std::to_string(w)).c_str());
      if (!pinned_cpus_.empty() && pinned_cpus_[w] >= 0 && !pin_current_thread(pinned_cpus_[w]))
        pinned_failed_.fetch_add(1, std::memory_order_relaxed);
      // Unpinned, a worker still keeps off the background's CPUs (on Windows a new thread does
      // not inherit its creator's affinity, so each sets its own).
      if ((pinned_cpus_.empty() || pinned_cpus_[w] < 0) && !spec_.keep_off_cpus.empty() &&
          !keep_this_thread_off(spec_.keep_off_cpus))
        keep_off_failed_.fetch_add(1, std::memory_order_relaxed);
      // The game's custom slice: the parser checked this kernel takes one; meta.json's read-back
      // (job_workers.slice_ns) says what each worker got.
      if (spec_.slice_ms)
        (void)set_this_thread_slice_ns(static_cast<std::uint64_t>(*spec_.slice_ms * 1e6));
      worker_scheduling_.report(this_thread_scheduling());
      slots_[w].thread_id.store(current_thread_id(), std::memory_order_release);
      worker_loop(w);
    });
}

JobSystem::~JobSystem() {
  stop_.store(true, std::memory_order_release);
  signal_.fetch_add(1, std::memory_order_acq_rel);
  wake_all(signal_);
  for (std::thread& t : threads_) t.join();
}

std::vector<std::int64_t> JobSystem::worker_thread_ids() const {
  std::vector<std::int64_t> ids(spec_.workers);
  for (std::size_t w = 0; w < ids.size(); ++w)
    ids[w] = slots_[w].thread_id.load(std::memory_order_acquire);
  return ids;
}

std::int64_t JobSystem::begin_frame() {
  const std::uint32_t generation =
      ++current_generation_ == 0 ? ++current_generation_ : current_generation_;
  // No job of the previous frame runs now (wait_frame saw them all done), so these resets
  // race with nothing; a worker still holding the old generation finds no claim of it.
  for (std::uint32_t j = 0; j < total_jobs_; ++j) {
    runs_[j].store(0, std::memory_order_relaxed);
    job_start_ns_[j].store(0, std::memory_order_relaxed);
    job_end_ns_[j].store(0, std::memory_order_relaxed);
  }
  done_count_.store(0, std::memory_order_relaxed);
  end_ns_.store(0, std::memory_order_relaxed);
  critical_end_ns_.store(0, std::memory_order_relaxed);
  const std::uint64_t tag = std::uint64_t{generation} << 32;
  const std::int64_t release_ns = monotonic_raw_ns();
  release_ns_.store(release_ns, std::memory_order_relaxed);
  parallel_claim_.store(tag, std::memory_order_release);
  critical_state_.store(tag | (critical_jobs_ > 0 ? std::uint64_t{1} << 16 : 0),
                        std::memory_order_release);
  generation_.store(generation, std::memory_order_release);
  in_progress_ = true;
  signal_.fetch_add(1, std::memory_order_acq_rel);
  wake_all(signal_);
  return release_ns;
}

std::optional<FrameJobsResult> JobSystem::wait_frame(std::int64_t deadline_ns) {
  const std::uint32_t generation = current_generation_;
  if (spec_.loop_wait != LoopWait::block) {
    // The engine's style of waiting, on purpose: the poll, and with yield a sched_yield between
    // polls, is what the scenario measures.
    while (done_generation_polled_.load(std::memory_order_acquire) != generation) {
      if (monotonic_raw_ns() >= deadline_ns) return std::nullopt;
      if (spec_.loop_wait == LoopWait::yield)
        std::this_thread::yield();
      else
        GPUOVERLAP_CPU_RELAX();
    }
  } else {
    std::unique_lock lock(done_mutex_);
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::nanoseconds(std::max<std::int64_t>(0, deadline_ns - monotonic_raw_ns()));
    if (!done_cv_.wait_until(lock, deadline, [&] { return done_generation_ == generation; }))
      return std::nullopt;
  }
  in_progress_ = false;
  FrameJobsResult r;
  r.release_ns = release_ns_.load(std::memory_order_relaxed);
  r.end_ns = end_ns_.load(std::memory_order_acquire);
  r.critical_end_ns = critical_end_ns_.load(std::memory_order_acquire);
  r.chain_length = critical_jobs_;
  for (std::uint32_t j = 0; j < total_jobs_; ++j) {
    r.runs_per_job.push_back(runs_[j].load(std::memory_order_relaxed));
    r.job_start_ns.push_back(job_start_ns_[j].load(std::memory_order_relaxed));
    r.job_end_ns.push_back(job_end_ns_[j].load(std::memory_order_relaxed));
    // The frame ends with its latest job end, which need not be the last job counted: a
    // worker can be preempted between its job's end and its count.
    r.end_ns = std::max(r.end_ns, r.job_end_ns.back());
  }
  for (std::size_t w = 0; w < spec_.workers; ++w) {
    const WorkerSlot& slot = slots_[w];
    if (slot.woke_generation.load(std::memory_order_acquire) == generation) {
      const std::int64_t woke = slot.woke_ns.load(std::memory_order_relaxed);
      r.wake_us.push_back(static_cast<double>(std::max<std::int64_t>(0, woke - r.release_ns)) /
                          1000.0);
    } else {
      r.wake_us.push_back(static_cast<double>(r.end_ns - r.release_ns) / 1000.0);
      ++r.missed_workers;
    }
    const bool busy = slot.busy_generation.load(std::memory_order_acquire) == generation;
    r.busy_us.push_back(
        busy ? static_cast<double>(slot.busy_ns.load(std::memory_order_relaxed)) / 1000.0 : 0);
    r.jobs_by_worker.push_back(busy ? slot.jobs.load(std::memory_order_relaxed) : 0);
    r.cpu_by_worker.push_back(busy ? slot.last_cpu.load(std::memory_order_relaxed) : -1);
  }
  return r;
}

void JobSystem::wait_for_signal(std::uint32_t seen) {
  if (spec_.wait == WaitMode::sleep) {
    sleep_while(signal_, seen);
    return;
  }
  if (spec_.wait == WaitMode::yield) {
    while (signal_.load(std::memory_order_acquire) == seen) std::this_thread::yield();
    return;
  }
  const std::int64_t spin_until =
      spec_.wait == WaitMode::spin
          ? INT64_MAX
          : monotonic_raw_ns() + static_cast<std::int64_t>(spec_.spin_us * 1000.0);
  for (std::uint32_t i = 0; signal_.load(std::memory_order_acquire) == seen; ++i) {
    GPUOVERLAP_CPU_RELAX();
    // The clock is read every 64 spins only: reading it is slower than the spin itself.
    if ((i & 63) == 63 && monotonic_raw_ns() >= spin_until) {
      sleep_while(signal_, seen);
      return;
    }
  }
}

void JobSystem::worker_loop(std::size_t worker) {
  WorkerSlot& slot = slots_[worker];
  std::uint32_t last_generation = 0;
  for (;;) {
    // Read before looking for work: work released after this read changes the signal, so the
    // wait below returns at once instead of missing it.
    const std::uint32_t seen = signal_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    const std::uint32_t generation = generation_.load(std::memory_order_acquire);
    if (generation != last_generation) {
      slot.woke_ns.store(monotonic_raw_ns(), std::memory_order_relaxed);
      slot.woke_generation.store(generation, std::memory_order_release);
      last_generation = generation;
    }
    if (generation != 0 && try_run_one(generation, worker)) continue;
    wait_for_signal(seen);
  }
}

bool JobSystem::try_run_one(std::uint32_t generation, std::size_t worker) {
  std::uint64_t critical = critical_state_.load(std::memory_order_acquire);
  while (generation_of(critical) == generation && taken_of(critical) < released_of(critical))
    if (critical_state_.compare_exchange_weak(critical, critical + 1, std::memory_order_acq_rel)) {
      run_job(generation, taken_of(critical), worker, true);
      return true;
    }
  std::uint64_t claim = parallel_claim_.load(std::memory_order_acquire);
  while (generation_of(claim) == generation && static_cast<std::uint32_t>(claim) < parallel_jobs_)
    if (parallel_claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) {
      run_job(generation, critical_jobs_ + static_cast<std::uint32_t>(claim), worker, false);
      return true;
    }
  return false;
}

void JobSystem::run_job(std::uint32_t generation, std::uint32_t job, std::size_t worker,
                        bool critical) {
  const std::int64_t start_ns = monotonic_raw_ns();
  const std::uint64_t result = busy_work(job_iterations_, job + 1);
  const std::int64_t end_ns = monotonic_raw_ns();
  g_worker_result_sink.fetch_xor(result, std::memory_order_relaxed);
  runs_[job].fetch_add(1, std::memory_order_relaxed);
  job_start_ns_[job].store(start_ns, std::memory_order_relaxed);
  job_end_ns_[job].store(end_ns, std::memory_order_relaxed);
  WorkerSlot& slot = slots_[worker];
  slot.last_cpu.store(current_cpu(), std::memory_order_relaxed);  // published with busy_generation
  if (slot.busy_generation.load(std::memory_order_relaxed) != generation) {
    slot.busy_ns.store(end_ns - start_ns, std::memory_order_relaxed);
    slot.jobs.store(1, std::memory_order_relaxed);
    slot.busy_generation.store(generation, std::memory_order_release);
  } else {
    slot.busy_ns.fetch_add(end_ns - start_ns, std::memory_order_relaxed);
    slot.jobs.fetch_add(1, std::memory_order_relaxed);
  }
  if (critical) {
    if (job + 1 < critical_jobs_) {
      critical_state_.fetch_add(std::uint64_t{1} << 16, std::memory_order_acq_rel);
      signal_.fetch_add(1, std::memory_order_acq_rel);
      wake_one(signal_);
    } else {
      critical_end_ns_.store(end_ns, std::memory_order_release);
    }
  }
  // The last job of the frame: everything above, in every worker, happened before this.
  if (done_count_.fetch_add(1, std::memory_order_acq_rel) + 1 == total_jobs_) {
    end_ns_.store(end_ns, std::memory_order_release);
    {
      std::lock_guard lock(done_mutex_);
      done_generation_ = generation;
    }
    done_generation_polled_.store(generation, std::memory_order_release);
    done_cv_.notify_all();
  }
}

}  // namespace gpuoverlap::jobs
