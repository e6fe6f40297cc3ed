#include "core/host_info.h"

#include <fmt/format.h>

#include <thread>

#if defined(_WIN32)
#include <windows.h>

#include <cstdlib>

#include "core/wine.h"
#else
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#endif

namespace gpuoverlap {

namespace {

#if !defined(_WIN32)
// The first "model name" of /proc/cpuinfo (x86), else its "Hardware"/"cpu model" line (some
// ARM and MIPS kernels); "" where there is none.
std::string linux_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string fallback;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value = line.substr(colon + 1);
    const std::size_t first = value.find_first_not_of(" \t");
    value = first == std::string::npos ? std::string() : value.substr(first);
    if (key == "model name" && !value.empty()) return value;
    if ((key == "Hardware" || key == "cpu model") && fallback.empty()) fallback = value;
  }
  return fallback;
}
#endif

}  // namespace

HostInfo describe_host() {
  HostInfo host;
  host.logical_cpus = std::thread::hardware_concurrency();
#if defined(_WIN32)
  char hostname[MAX_COMPUTERNAME_LENGTH + 1] = {};
  DWORD length = sizeof hostname;
  GetComputerNameA(hostname, &length);
  host.hostname = hostname;
  // Under Wine the D3D12 runtime is Wine's, not a driver's.
  const std::optional<std::string> wine = wine_version();
  host.kernel = wine ? "Wine " + *wine : std::string("Windows");
  host.machine = "x86_64";
  if (const char* id = std::getenv("PROCESSOR_IDENTIFIER")) host.cpu_model = id;
#else
  utsname u{};
  uname(&u);
  char hostname[256] = {};
  gethostname(hostname, sizeof hostname - 1);
  host.hostname = hostname;
  host.kernel = std::string(u.sysname) + " " + u.release;
  host.machine = u.machine;
  host.cpu_model = linux_cpu_model();
#endif
  return host;
}

ThreadScheduling this_thread_scheduling() {
  ThreadScheduling s;
#if defined(_WIN32)
  const int priority = GetThreadPriority(GetCurrentThread());
  s.level = priority;
  s.level_name = "priority";
  switch (priority) {
    case THREAD_PRIORITY_IDLE: s.policy = "THREAD_PRIORITY_IDLE"; break;
    case THREAD_PRIORITY_LOWEST: s.policy = "THREAD_PRIORITY_LOWEST"; break;
    case THREAD_PRIORITY_BELOW_NORMAL: s.policy = "THREAD_PRIORITY_BELOW_NORMAL"; break;
    case THREAD_PRIORITY_NORMAL: s.policy = "THREAD_PRIORITY_NORMAL"; break;
    case THREAD_PRIORITY_ABOVE_NORMAL: s.policy = "THREAD_PRIORITY_ABOVE_NORMAL"; break;
    case THREAD_PRIORITY_HIGHEST: s.policy = "THREAD_PRIORITY_HIGHEST"; break;
    case THREAD_PRIORITY_TIME_CRITICAL: s.policy = "THREAD_PRIORITY_TIME_CRITICAL"; break;
    default: s.policy = "THREAD_PRIORITY " + std::to_string(priority); break;
  }
#else
  int policy = 0;
  sched_param param{};
  if (pthread_getschedparam(pthread_self(), &policy, &param) != 0) {
    s.policy = "unknown";
    return s;
  }
  switch (policy) {
    case SCHED_OTHER: s.policy = "SCHED_OTHER"; break;
    case SCHED_IDLE: s.policy = "SCHED_IDLE"; break;
    case SCHED_BATCH: s.policy = "SCHED_BATCH"; break;
    case SCHED_FIFO: s.policy = "SCHED_FIFO"; break;
    case SCHED_RR: s.policy = "SCHED_RR"; break;
    default: s.policy = "policy " + std::to_string(policy); break;
  }
  if (policy == SCHED_FIFO || policy == SCHED_RR) {
    s.level = param.sched_priority;
    s.level_name = "rt_priority";
  } else {
    // A Linux thread's nice value is per thread: getpriority with its thread id.
    errno = 0;
    const int nice =
        getpriority(PRIO_PROCESS, static_cast<id_t>(static_cast<pid_t>(syscall(SYS_gettid))));
    s.level = errno == 0 ? nice : 0;
    s.level_name = "nice";
  }
#endif
  return s;
}

std::string describe(const ThreadScheduling& s) {
  return fmt::format("{}, {} {}", s.policy, s.level_name, s.level);
}

bool operator==(const ThreadScheduling& a, const ThreadScheduling& b) {
  return a.policy == b.policy && a.level == b.level && a.level_name == b.level_name;
}

void SchedulingSeen::report(const ThreadScheduling& s) {
  std::lock_guard lock(mutex_);
  if (!seen_) seen_ = Seen{s, 0, 0};
  ++seen_->threads;
  if (!(seen_->first == s)) ++seen_->differing;
}

std::optional<SchedulingSeen::Seen> SchedulingSeen::get() const {
  std::lock_guard lock(mutex_);
  return seen_;
}

}  // namespace gpuoverlap
