#include "core/thread_accounting.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <cstdio>
#endif

namespace gpuoverlap {

namespace {

template <typename T>
std::optional<T> difference(const std::optional<T>& earlier, const std::optional<T>& later) {
  if (!earlier || !later) return std::nullopt;
  return *later - *earlier;
}

}  // namespace

#if defined(_WIN32)

ThreadAccounting read_thread_accounting() {
  ThreadAccounting a;
  ULONG64 cycles = 0;
  if (QueryThreadCycleTime(GetCurrentThread(), &cycles)) a.on_cpu_cycles = cycles;
  a.cpu = static_cast<int>(GetCurrentProcessorNumber());
  return a;
}

const char* run_delay_unavailable_reason() {
  return "Windows gives no per-thread time spent ready but not running";
}

#else

ThreadAccounting read_thread_accounting() {
  ThreadAccounting a;
  // "on-CPU ns, runqueue wait ns, timeslices": three numbers, the first two in ns.
  if (std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r")) {
    long long on_cpu = 0, waited = 0, timeslices = 0;
    // A kernel that keeps no scheduler statistics prints zeros. A thread reading the file is
    // running, so it arrived on a CPU at least once: no timeslice means "not kept". (Not the
    // on-CPU time: a thread just started may not have had it updated yet.)
    if (std::fscanf(f, "%lld %lld %lld", &on_cpu, &waited, &timeslices) == 3 && timeslices > 0)
      a.run_delay_ns = waited;
    std::fclose(f);
  }
  // The thread's CPU clock, not schedstat's first figure: that one leaves out the time since
  // the kernel last updated it (up to a scheduler tick for a thread that never blocks), this
  // one includes it.
  timespec cpu_time{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_time) == 0)
    a.on_cpu_ns = std::int64_t{cpu_time.tv_sec} * 1'000'000'000 + cpu_time.tv_nsec;
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) == 0) {
    a.voluntary_switches = usage.ru_nvcsw;
    a.involuntary_switches = usage.ru_nivcsw;
  }
  a.cpu = sched_getcpu();
  return a;
}

const char* run_delay_unavailable_reason() {
  return "/proc/thread-self/schedstat could not be read (no procfs, or a kernel built without "
         "CONFIG_SCHED_INFO)";
}

#endif

ThreadAccounting accounting_between(const ThreadAccounting& earlier,
                                    const ThreadAccounting& later) {
  ThreadAccounting d;
  d.on_cpu_ns = difference(earlier.on_cpu_ns, later.on_cpu_ns);
  d.run_delay_ns = difference(earlier.run_delay_ns, later.run_delay_ns);
  d.voluntary_switches = difference(earlier.voluntary_switches, later.voluntary_switches);
  d.involuntary_switches = difference(earlier.involuntary_switches, later.involuntary_switches);
  d.on_cpu_cycles = difference(earlier.on_cpu_cycles, later.on_cpu_cycles);
  d.cpu = later.cpu;
  return d;
}

}  // namespace gpuoverlap
