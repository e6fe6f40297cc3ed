// The study's negative control (`control = "idle-spinners"`): one idle-priority thread on each
// CPU the foreground may use, each allocating and freeing blocks of an arena of its own and
// touching every page of a working set of its own, over and over, for the whole scenario: a
// compiler's CPU and cache use at the lowest priority, asking the kernel for nothing and sharing
// nothing with another thread (no system call, no lock, no page fault after its start, no
// unmap). The kernel runs them only where the foreground leaves a CPU idle, so on a neutral
// harness the condition must be non-intrusive; a study that calls it intrusive reports a
// harness fault (analysis/verdict.h).
//
// Why no unmap: an unmap in the process's own address space sends a TLB-flush interrupt to
// every CPU running one of its threads, the frame's included, whatever the unmapping thread's
// priority. Spinners that mapped and unmapped 256 KiB per cycle made 5-11 % of an H200's game
// frames late and were called intrusive in 6 of 19 studies (docs/results/2026-12-01-h200-
// neutral-harness): a real cost of in-process background work, not a test of the harness.
//
// Why an arena of its own: under AddressSanitizer the C library's malloc is the sanitizer's,
// whose locks the spinners then shared with the driver. On a loaded 2-core machine a spinner
// holding one got no CPU for as long as normal threads kept both, and lavapipe's submit thread,
// waiting for it, slept through a 1 s frame until the spinner woke it; the kernel's record shows
// the spinners waking lavapipe's threads in every loaded round, and with this arena none
// (docs/results/2026-12-02-lavapipe-priority-inversion). A priority inversion is what in-process
// compile threads can do to a game, for the study to find; the control must not do it.
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
  // (core/thread_policy.h); an empty list starts one unpinned thread per usable CPU. Returns
  // once every thread has its memory faulted in and its policy applied (or after 10 s, which
  // refused() then says), so that none starts while frames are measured.
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
  std::atomic<std::uint32_t> sink_{0};
  std::atomic<std::uint32_t> ready_{0};  // threads past their start (core/wake_signal.h word)
  std::atomic<bool> late_start_{false};
  std::atomic<bool> refused_policy_{false}, refused_cpu_{false};
  SchedulingSeen seen_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuoverlap::background
