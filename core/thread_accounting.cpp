#include "core/thread_accounting.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#endif

#include <algorithm>

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

std::int64_t current_thread_id() { return static_cast<std::int64_t>(GetCurrentThreadId()); }

std::optional<ThreadAccounting> read_thread_accounting_of(std::int64_t) { return std::nullopt; }

SchedstatFile SchedstatFile::of_calling_thread() { return {}; }
SchedstatFile SchedstatFile::of_thread(std::int64_t) { return {}; }
SchedstatFile::~SchedstatFile() = default;
std::optional<ThreadAccounting> SchedstatFile::read() const { return std::nullopt; }
ThreadAccounting read_thread_accounting(const SchedstatFile&) { return read_thread_accounting(); }

const char* run_delay_unavailable_reason() {
  return "Windows gives no per-thread time spent ready but not running";
}

#else

namespace {

struct Schedstat {
  std::int64_t on_cpu_ns = 0, run_delay_ns = 0;
};

// A thread's schedstat file: "on-CPU ns, runqueue wait ns, timeslices". nullopt when it cannot
// be read or is not kept: a kernel that keeps no scheduler statistics prints zeros, and a thread
// that ran arrived on a CPU at least once, so no timeslice means "not kept". (Not the on-CPU
// time: a thread just started may not have had it updated yet.)
std::optional<Schedstat> read_schedstat(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return std::nullopt;
  long long on_cpu = 0, waited = 0, timeslices = 0;
  const bool read = std::fscanf(f, "%lld %lld %lld", &on_cpu, &waited, &timeslices) == 3;
  std::fclose(f);
  if (!read || timeslices == 0) return std::nullopt;
  return Schedstat{on_cpu, waited};
}

// The figures from a schedstat file's text ("on-CPU ns, runqueue wait ns, timeslices"), as
// read_schedstat; no allocation.
std::optional<Schedstat> parse_schedstat(const char* text) {
  char* end = nullptr;
  const long long on_cpu = std::strtoll(text, &end, 10);
  if (end == text) return std::nullopt;
  const char* next = end;
  const long long waited = std::strtoll(next, &end, 10);
  if (end == next) return std::nullopt;
  next = end;
  const long long timeslices = std::strtoll(next, &end, 10);
  if (end == next || timeslices == 0) return std::nullopt;
  return Schedstat{on_cpu, waited};
}

// The calling thread's totals, its run delay from `stat` (read however the caller can).
ThreadAccounting accounting_with(const std::optional<Schedstat>& stat) {
  ThreadAccounting a;
  if (stat) a.run_delay_ns = stat->run_delay_ns;
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
    a.system_ns = std::int64_t{usage.ru_stime.tv_sec} * 1'000'000'000 +
                  std::int64_t{usage.ru_stime.tv_usec} * 1000;
    a.minor_faults = usage.ru_minflt;
  }
  a.cpu = sched_getcpu();
  return a;
}

}  // namespace

ThreadAccounting read_thread_accounting() {
  return accounting_with(read_schedstat("/proc/thread-self/schedstat"));
}

SchedstatFile SchedstatFile::of_calling_thread() {
  return SchedstatFile(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC));
}

SchedstatFile SchedstatFile::of_thread(std::int64_t thread_id) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%lld/schedstat",
                static_cast<long long>(thread_id));
  return SchedstatFile(::open(path, O_RDONLY | O_CLOEXEC));
}

SchedstatFile::~SchedstatFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<ThreadAccounting> SchedstatFile::read() const {
  if (fd_ < 0) return std::nullopt;
  char text[128];
  const ssize_t got = ::pread(fd_, text, sizeof text - 1, 0);
  if (got <= 0) return std::nullopt;
  text[got] = 0;
  const auto stat = parse_schedstat(text);
  if (!stat) return std::nullopt;
  ThreadAccounting a;
  a.on_cpu_ns = stat->on_cpu_ns;
  a.run_delay_ns = stat->run_delay_ns;
  return a;
}

ThreadAccounting read_thread_accounting(const SchedstatFile& own) {
  const auto read = own.read();
  return accounting_with(read ? std::optional<Schedstat>(Schedstat{0, *read->run_delay_ns})
                              : std::nullopt);
}

std::optional<ThreadAccounting> read_thread_accounting_of(std::int64_t thread_id) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%lld/schedstat",
                static_cast<long long>(thread_id));
  const auto stat = read_schedstat(path);
  if (!stat) return std::nullopt;
  ThreadAccounting a;
  a.on_cpu_ns = stat->on_cpu_ns;
  a.run_delay_ns = stat->run_delay_ns;
  return a;
}

// glibc 2.36 (Debian 12) has gettid(), older ones only the system call.
std::int64_t current_thread_id() { return static_cast<std::int64_t>(syscall(SYS_gettid)); }

const char* run_delay_unavailable_reason() {
  return "/proc/thread-self/schedstat could not be read (no procfs, or a kernel built without "
         "CONFIG_SCHED_INFO)";
}

#endif

SchedstatFile::SchedstatFile(SchedstatFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

SchedstatFile& SchedstatFile::operator=(SchedstatFile&& other) noexcept {
  if (this != &other) {
    SchedstatFile gone(std::move(*this));
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ThreadAccounting accounting_between(const ThreadAccounting& earlier,
                                    const ThreadAccounting& later) {
  ThreadAccounting d;
  d.on_cpu_ns = difference(earlier.on_cpu_ns, later.on_cpu_ns);
  d.run_delay_ns = difference(earlier.run_delay_ns, later.run_delay_ns);
  d.voluntary_switches = difference(earlier.voluntary_switches, later.voluntary_switches);
  d.involuntary_switches = difference(earlier.involuntary_switches, later.involuntary_switches);
  d.on_cpu_cycles = difference(earlier.on_cpu_cycles, later.on_cpu_cycles);
  d.system_ns = difference(earlier.system_ns, later.system_ns);
  d.minor_faults = difference(earlier.minor_faults, later.minor_faults);
  d.cpu = later.cpu;
  return d;
}

std::optional<GroupAccounting> GroupAccountingClock::lap(
    const std::vector<std::int64_t>& thread_ids) {
  const bool comparable = !thread_ids.empty() && thread_ids == ids_;
  if (!comparable) {
    // New threads: their files are opened now, once, and the figures start again.
    files_.clear();
    for (const std::int64_t id : thread_ids)
      files_.push_back(id != 0 ? SchedstatFile::of_thread(id) : SchedstatFile());
    ids_ = thread_ids;
    last_.assign(thread_ids.size(), std::nullopt);
    now_.assign(thread_ids.size(), std::nullopt);
  }
  for (std::size_t t = 0; t < files_.size(); ++t) now_[t] = files_[t].read();
  std::vector<std::optional<ThreadAccounting>>& now = now_;
  std::optional<GroupAccounting> out;
  if (comparable) {
    GroupAccounting g;
    bool known = true;
    for (std::size_t t = 0; t < now.size(); ++t) {
      if (!now[t] || !last_[t]) {
        known = false;
        break;
      }
      const ThreadAccounting d = accounting_between(*last_[t], *now[t]);
      if (!d.run_delay_ns || !d.on_cpu_ns) {
        known = false;
        break;
      }
      g.run_delay_ns += *d.run_delay_ns;
      g.run_delay_max_ns = std::max(g.run_delay_max_ns, *d.run_delay_ns);
      g.on_cpu_ns += *d.on_cpu_ns;
    }
    if (known) out = g;
  }
  last_.swap(now_);
  return out;
}

ThreadSpan thread_span_since(const ThreadAccounting& before) {
  const ThreadAccounting after = read_thread_accounting();
  ThreadSpan span;
  span.thread_id = current_thread_id();
  span.cpu_start = before.cpu;
  span.cpu_end = after.cpu;
  span.used = accounting_between(before, after);
  return span;
}

}  // namespace gpuoverlap
