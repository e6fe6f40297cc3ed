#pragma once
// What the scheduler did to the calling thread so far: the time it was runnable but waited for
// a CPU (run delay), the context switches it made and suffered, and the CPU it is on. Read at
// two moments, the difference says where a thread's wall time went that its own clock cannot:
// a thread that woke late because every CPU was taken shows run delay; one that slept or was
// stopped shows neither run delay nor CPU time.
//
// Linux: /proc/thread-self/schedstat (the kernel's own sum of runqueue waits, updated whenever
// the thread is switched in or out, so exact for the thread reading it; empty without procfs or
// CONFIG_SCHED_INFO), CLOCK_THREAD_CPUTIME_ID, getrusage(RUSAGE_THREAD) and sched_getcpu.
// Windows has no run delay: run_delay_ns is empty there, and on-CPU time comes from
// QueryThreadCycleTime (cycles, not ns: `on_cpu_cycles`), the switches are unknown.
//
// Cost: one small procfs read and two syscalls, a few microseconds; call it at frame
// boundaries, not per job.
#include <cstdint>
#include <optional>

namespace gpuoverlap {

struct ThreadAccounting {
  std::optional<std::int64_t> on_cpu_ns;             // time this thread ran (Linux: CPU clock)
  std::optional<std::int64_t> run_delay_ns;          // runnable, waiting for a CPU (Linux only)
  std::optional<std::int64_t> voluntary_switches;    // it blocked or slept
  std::optional<std::int64_t> involuntary_switches;  // it was preempted
  std::optional<std::uint64_t> on_cpu_cycles;        // Windows: QueryThreadCycleTime
  int cpu = -1;                                      // where it runs now; -1 when unknown
};

// The calling thread's totals since it started.
ThreadAccounting read_thread_accounting();

// `later` minus `earlier`, field by field; a field is empty unless both have it.
ThreadAccounting accounting_between(const ThreadAccounting& earlier, const ThreadAccounting& later);

// Why a figure is missing on this platform, for the files that show it ("n/a: ...").
const char* run_delay_unavailable_reason();

}  // namespace gpuoverlap
