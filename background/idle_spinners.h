// The study's negative control (`control = "idle-spinners"`): one idle-priority thread on each
// CPU the foreground may use, each mapping a block of memory, touching every page of it and
// unmapping it, over and over, for the whole scenario: a background compiler's memory traffic
// (page faults, and the TLB-flush interrupts an unmap sends to every CPU running a thread of the
// process) at the lowest priority, without a compile. On a neutral harness the kernel runs them
// only where the foreground leaves a CPU idle, so the condition must be non-intrusive; a study
// that calls it intrusive reports a harness fault (analysis/verdict.h).
//
// Thread safety: construction, stop() and the destructor from one thread; the readers from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/host_info.h"

namespace gpuoverlap::background {

class IdleSpinners {
 public:
  // Starts one thread per CPU of `cpus`, each pinned to its CPU at idle priority
  // (core/thread_policy.h); an empty list starts one unpinned thread per usable CPU.
  explicit IdleSpinners(const std::vector<int>& cpus);
  IdleSpinners(const IdleSpinners&) = delete;
  IdleSpinners& operator=(const IdleSpinners&) = delete;
  ~IdleSpinners();

  void stop();  // ends and joins the threads; idempotent

  std::size_t threads() const { return threads_.size(); }
  std::uint64_t cycles() const { return cycles_.load(std::memory_order_relaxed); }
  std::optional<SchedulingSeen::Seen> scheduling() const { return seen_.get(); }
  // What the OS refused a thread (its policy or its CPU), "" when nothing.
  std::string refused() const;

 private:
  void spin(int cpu);

  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> cycles_{0};
  std::atomic<bool> refused_policy_{false}, refused_cpu_{false};
  SchedulingSeen seen_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuoverlap::background
