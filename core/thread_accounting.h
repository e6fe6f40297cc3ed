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
#include <vector>

namespace gpuoverlap {

struct ThreadAccounting {
  std::optional<std::int64_t> on_cpu_ns;             // time this thread ran (Linux: CPU clock)
  std::optional<std::int64_t> run_delay_ns;          // runnable, waiting for a CPU (Linux only)
  std::optional<std::int64_t> voluntary_switches;    // it blocked or slept
  std::optional<std::int64_t> involuntary_switches;  // it was preempted
  std::optional<std::uint64_t> on_cpu_cycles;        // Windows: QueryThreadCycleTime
  // Of on_cpu_ns, the part in the kernel on the thread's behalf (system calls, page faults),
  // and the page faults served without I/O: work a kernel without full preemption finishes
  // before another thread may have that CPU (Linux: getrusage; empty on Windows).
  std::optional<std::int64_t> system_ns;
  std::optional<std::int64_t> minor_faults;
  int cpu = -1;  // where it runs now; -1 when unknown
};

// The calling thread's totals since it started.
ThreadAccounting read_thread_accounting();

// `later` minus `earlier`, field by field; a field is empty unless both have it.
ThreadAccounting accounting_between(const ThreadAccounting& earlier, const ThreadAccounting& later);

// A thread's schedstat file (Linux: /proc/thread-self/schedstat or /proc/self/task/<id>/
// schedstat) opened once and read again in place: the kernel makes the text anew for a read at
// offset 0, so each read is one pread, with no open, close or allocation. What a thread reads
// on the frame path. Not open (Windows, no procfs, a thread gone): read() is nullopt.
class SchedstatFile {
 public:
  SchedstatFile() = default;
  static SchedstatFile of_calling_thread();
  static SchedstatFile of_thread(std::int64_t thread_id);
  SchedstatFile(SchedstatFile&& other) noexcept;
  SchedstatFile& operator=(SchedstatFile&& other) noexcept;
  SchedstatFile(const SchedstatFile&) = delete;
  SchedstatFile& operator=(const SchedstatFile&) = delete;
  ~SchedstatFile();

  bool is_open() const { return fd_ >= 0; }
  // The thread's on-CPU time (as the kernel last updated it) and run delay; nullopt when not
  // open, unreadable, or not kept (no CONFIG_SCHED_INFO: the file holds zeros).
  std::optional<ThreadAccounting> read() const;

 private:
  explicit SchedstatFile(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// read_thread_accounting(), its run delay read through `own` (the calling thread's file,
// opened once by that thread): two system calls and a pread, nothing opened or allocated.
ThreadAccounting read_thread_accounting(const SchedstatFile& own);

// One piece of work on one thread (a background compile): the thread, the CPUs it started and
// ended on, and what the work cost it. Take `before` with read_thread_accounting() on the same
// thread just before the work; thread_span_since(before) just after.
struct ThreadSpan {
  std::int64_t thread_id = 0;  // Linux: gettid(); Windows: GetCurrentThreadId()
  int cpu_start = -1, cpu_end = -1;
  ThreadAccounting used;  // accounting_between(before, after); `cpu` is cpu_end
};
ThreadSpan thread_span_since(const ThreadAccounting& before);

// Another thread of this process, by its OS id: its on-CPU time and run delay only (Linux:
// /proc/self/task/<id>/schedstat; the on-CPU figure may lag up to a scheduler tick for a thread
// that never blocks). nullopt where unknown (Windows, no procfs, a thread that has exited).
// For a thread that cannot be asked to read its own (a worker mid-job).
std::optional<ThreadAccounting> read_thread_accounting_of(std::int64_t thread_id);

// What the scheduler did to a group of threads (a job system's workers) between two laps,
// read from outside them: run delay and on-CPU time summed over the group, and the worst
// thread's run delay (one worker kept off a CPU stalls a frame's jobs as much as all of them).
struct GroupAccounting {
  std::int64_t run_delay_ns = 0, run_delay_max_ns = 0, on_cpu_ns = 0;
};
class GroupAccountingClock {
 public:
  // The figures since the last lap of the same threads; nullopt on the first lap, when the
  // ids changed, or when any thread's figures are unknown. Cost: one pread per thread; each
  // thread's file is opened at the first lap that names it, so laps of the same threads open
  // and allocate nothing.
  std::optional<GroupAccounting> lap(const std::vector<std::int64_t>& thread_ids);

 private:
  std::vector<std::int64_t> ids_;
  std::vector<SchedstatFile> files_;
  std::vector<std::optional<ThreadAccounting>> last_, now_;
};

// The calling thread's id as the OS names it (the tid `top -H` and perf show).
std::int64_t current_thread_id();

// Why a figure is missing on this platform, for the files that show it ("n/a: ...").
const char* run_delay_unavailable_reason();

}  // namespace gpuoverlap
