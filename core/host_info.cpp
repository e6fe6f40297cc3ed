#include "core/host_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>

#include "core/cgroup_idle.h"
#include "core/cpu_affinity.h"
#include "core/thread_accounting.h"
#include "core/thread_policy.h"

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
#include <iterator>

#include "core/gzip.h"
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

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text(64 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// The running kernel's config: /proc/config.gz (CONFIG_IKCONFIG_PROC), else the distribution's
// /boot/config-<release>; "" when neither is readable. `source` names the one read.
std::string kernel_config(const std::string& release, std::string& source) {
  std::ifstream in("/proc/config.gz", std::ios::binary);
  if (in) {
    const std::string compressed((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
    if (auto text = gzip_decompress(compressed, 16 * 1024 * 1024, "/proc/config.gz")) {
      source = "/proc/config.gz";
      return *text;
    }
  }
  std::ifstream boot("/boot/config-" + release);
  if (boot) {
    source = "/boot/config-" + release;
    return std::string((std::istreambuf_iterator<char>(boot)), std::istreambuf_iterator<char>());
  }
  return {};
}
#endif

}  // namespace

std::optional<bool> hypervisor_flag(const std::string& cpuinfo_text) {
  std::size_t at = 0;
  while (at < cpuinfo_text.size()) {
    std::size_t end = cpuinfo_text.find('\n', at);
    if (end == std::string::npos) end = cpuinfo_text.size();
    const std::string_view line(cpuinfo_text.data() + at, end - at);
    at = end + 1;
    if (!line.starts_with("flags")) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    // Whole words only: "hypervisor" is also a prefix of no other x86 flag today, but a
    // substring test would not say so for tomorrow's.
    const std::string padded = " " + std::string(line.substr(colon + 1)) + " ";
    return padded.find(" hypervisor ") != std::string::npos;
  }
  return std::nullopt;
}

std::optional<std::string> preempt_mode_selected(const std::string& debugfs_text) {
  const std::size_t open = debugfs_text.find('(');
  const std::size_t close = debugfs_text.find(')', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos || close <= open + 1)
    return std::nullopt;
  return debugfs_text.substr(open + 1, close - open - 1);
}

std::optional<std::string> kernel_config_value(const std::string& config_text,
                                               const std::string& key) {
  const std::string prefix = key + "=";
  std::size_t begin = 0;
  while (begin < config_text.size()) {
    std::size_t end = config_text.find('\n', begin);
    if (end == std::string::npos) end = config_text.size();
    if (config_text.compare(begin, prefix.size(), prefix) == 0)
      return config_text.substr(begin + prefix.size(), end - begin - prefix.size());
    begin = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> preemption_from_config(const std::string& config_text,
                                                  const std::string& cmdline) {
  auto set = [&](const char* key) { return kernel_config_value(config_text, key) == "y"; };
  if (set("CONFIG_PREEMPT_RT")) return "rt";
  if (set("CONFIG_PREEMPT_DYNAMIC")) {
    // preempt=none|voluntary|full|lazy on the command line chooses; else the config's default.
    const std::size_t at = cmdline.find("preempt=");
    if (at != std::string::npos && (at == 0 || cmdline[at - 1] == ' ')) {
      const std::size_t end = cmdline.find_first_of(" \n", at);
      return cmdline.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
    }
  }
  if (set("CONFIG_PREEMPT_LAZY")) return "lazy";
  if (set("CONFIG_PREEMPT")) return "full";
  if (set("CONFIG_PREEMPT_VOLUNTARY")) return "voluntary";
  if (set("CONFIG_PREEMPT_NONE")) return "none";
  return std::nullopt;
}

KernelScheduler scheduler_of(const std::string& release, const std::string& sched_ext_state,
                             const std::string& sched_ext_ops) {
  auto trimmed = [](std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    return text;
  };
  if (trimmed(sched_ext_state) == "enabled") {
    const std::string ops = trimmed(sched_ext_ops);
    return {ops.empty() ? "sched_ext" : "sched_ext (" + ops + ")", "/sys/kernel/sched_ext/state",
            std::nullopt, ""};
  }
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2)
    return {"", "the kernel release '" + release + "' names no version", std::nullopt, ""};
  const bool eevdf = major > 6 || (major == 6 && minor >= 6);
  return {eevdf ? "EEVDF" : "CFS",
          "Linux " + std::to_string(major) + "." + std::to_string(minor) +
              (eevdf ? " (EEVDF since 6.6)" : " (CFS before 6.6)") +
              (sched_ext_state.empty() ? "" : ", sched_ext " + trimmed(sched_ext_state)),
          std::nullopt, ""};
}

std::string preemption_from_version(const std::string& uname_version) {
  if (uname_version.find("PREEMPT_RT") != std::string::npos) return "rt";
  if (uname_version.find("PREEMPT_DYNAMIC") != std::string::npos) return "dynamic";
  if (uname_version.find("PREEMPT") != std::string::npos) return "full";
  return "none or voluntary";
}

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
  host.preemption = {"", "not known on Windows"};
  host.scheduler = {"Windows", "the OS", std::nullopt, "not known on Windows"};
#else
  utsname u{};
  uname(&u);
  char hostname[256] = {};
  gethostname(hostname, sizeof hostname - 1);
  host.hostname = hostname;
  host.kernel = std::string(u.sysname) + " " + u.release;
  host.machine = u.machine;
  host.cpu_model = linux_cpu_model();
  host.virtual_machine = hypervisor_flag(read_small_file("/proc/cpuinfo"));
  host.kernel_version = u.version;
  std::string config_source;
  const std::string config = kernel_config(u.release, config_source);
  if (const auto hz = kernel_config_value(config, "CONFIG_HZ")) {
    try {
      host.tick_hz = static_cast<std::uint32_t>(std::stoul(*hz));
    } catch (const std::exception&) {
    }
  }
  // Most precise first: the mode in force (debugfs, root only, refused under lockdown), the
  // boot configuration, then what the version string says.
  if (const auto mode = preempt_mode_selected(read_small_file("/sys/kernel/debug/sched/preempt"))) {
    host.preemption = {*mode, "/sys/kernel/debug/sched/preempt"};
  } else if (const auto configured =
                 preemption_from_config(config, read_small_file("/proc/cmdline"))) {
    host.preemption = {*configured, config_source + " (and /proc/cmdline)"};
  } else {
    host.preemption = {preemption_from_version(u.version), "uname -v"};
  }
  host.scheduler = scheduler_of(u.release, read_small_file("/sys/kernel/sched_ext/state"),
                                read_small_file("/sys/kernel/sched_ext/root/ops"));
  const std::string slice_file = host.scheduler.name == "CFS"
                                     ? "/sys/kernel/debug/sched/min_granularity_ns"
                                     : "/sys/kernel/debug/sched/base_slice_ns";
  const std::string slice = read_small_file(slice_file);
  char* end = nullptr;
  const long long slice_ns = std::strtoll(slice.c_str(), &end, 10);
  if (!slice.empty() && end != slice.c_str() && slice_ns > 0) {
    host.scheduler.base_slice_ns = slice_ns;
    host.scheduler.base_slice_source = slice_file;
  } else {
    host.scheduler.base_slice_source = slice_file + " not readable (debugfs: root, no lockdown)";
  }
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
    case THREAD_PRIORITY_IDLE:
      s.policy = "THREAD_PRIORITY_IDLE";
      break;
    case THREAD_PRIORITY_LOWEST:
      s.policy = "THREAD_PRIORITY_LOWEST";
      break;
    case THREAD_PRIORITY_BELOW_NORMAL:
      s.policy = "THREAD_PRIORITY_BELOW_NORMAL";
      break;
    case THREAD_PRIORITY_NORMAL:
      s.policy = "THREAD_PRIORITY_NORMAL";
      break;
    case THREAD_PRIORITY_ABOVE_NORMAL:
      s.policy = "THREAD_PRIORITY_ABOVE_NORMAL";
      break;
    case THREAD_PRIORITY_HIGHEST:
      s.policy = "THREAD_PRIORITY_HIGHEST";
      break;
    case THREAD_PRIORITY_TIME_CRITICAL:
      s.policy = "THREAD_PRIORITY_TIME_CRITICAL";
      break;
    default:
      s.policy = "THREAD_PRIORITY " + std::to_string(priority);
      break;
  }
#else
  int policy = 0;
  sched_param param{};
  if (pthread_getschedparam(pthread_self(), &policy, &param) != 0) {
    s.policy = "unknown";
    return s;
  }
  switch (policy) {
    case SCHED_OTHER:
      s.policy = "SCHED_OTHER";
      break;
    case SCHED_IDLE:
      s.policy = "SCHED_IDLE";
      break;
    case SCHED_BATCH:
      s.policy = "SCHED_BATCH";
      break;
    case SCHED_FIFO:
      s.policy = "SCHED_FIFO";
      break;
    case SCHED_RR:
      s.policy = "SCHED_RR";
      break;
    default:
      s.policy = "policy " + std::to_string(policy);
      break;
  }
  if (policy == SCHED_FIFO || policy == SCHED_RR) {
    s.level = param.sched_priority;
    s.level_name = "rt_priority";
  } else {
    // A Linux thread's nice value is per thread: getpriority with its thread id.
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(current_thread_id()));
    s.level = errno == 0 ? nice : 0;
    s.level_name = "nice";
  }
#endif
  s.cpus = this_thread_cpus();
  s.cgroup = this_thread_cgroup();
  s.slice_ns = this_thread_slice_ns();
  return s;
}

std::string describe(const ThreadScheduling& s) {
  return fmt::format("{}, {} {}", s.policy, s.level_name, s.level);
}

bool operator==(const ThreadScheduling& a, const ThreadScheduling& b) {
  return a.policy == b.policy && a.level == b.level && a.level_name == b.level_name &&
         a.cgroup == b.cgroup && a.slice_ns == b.slice_ns;
}

void SchedulingSeen::report(const ThreadScheduling& s) {
  std::lock_guard lock(mutex_);
  if (!seen_) seen_ = Seen{s, 0, 0, {}, 0};
  ++seen_->threads;
  if (!(seen_->first == s)) ++seen_->differing;
  if (s.cpus != seen_->first.cpus) ++seen_->cpus_unlike_the_first;
  if (s.cpus) {
    std::vector<int> merged;
    std::set_union(seen_->cpus_of_all.begin(), seen_->cpus_of_all.end(), s.cpus->begin(),
                   s.cpus->end(), std::back_inserter(merged));
    seen_->cpus_of_all = std::move(merged);
  }
}

std::optional<SchedulingSeen::Seen> SchedulingSeen::get() const {
  std::lock_guard lock(mutex_);
  return seen_;
}

}  // namespace gpuoverlap
