#include "core/cpu_affinity.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <thread>

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#include <sched.h>
#endif

namespace gpuoverlap {

std::uint32_t usable_cpus() {
#if defined(_WIN32)
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask) && process_mask) {
    std::uint32_t count = 0;
    for (; process_mask; process_mask &= process_mask - 1) ++count;
    return count;
  }
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<int> usable_cpu_ids() {
  std::vector<int> ids;
#if defined(_WIN32)
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask))
    for (int cpu = 0; cpu < static_cast<int>(8 * sizeof(DWORD_PTR)); ++cpu)
      if (process_mask & (DWORD_PTR{1} << cpu)) ids.push_back(cpu);
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) ids.push_back(cpu);
#endif
  return ids;
}

std::optional<std::vector<int>> this_thread_cpus() {
  std::vector<int> ids;
#if defined(_WIN32)
  // The thread's processor group and its mask there; CPU numbers count on from 64 per group.
  GROUP_AFFINITY group{};
  if (!GetThreadGroupAffinity(GetCurrentThread(), &group)) return std::nullopt;
  for (int cpu = 0; cpu < static_cast<int>(8 * sizeof(KAFFINITY)); ++cpu)
    if (group.Mask & (KAFFINITY{1} << cpu)) ids.push_back(64 * group.Group + cpu);
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return std::nullopt;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) ids.push_back(cpu);
#endif
  return ids;
}

std::string thread_cpus_unavailable_reason() {
#if defined(_WIN32)
  return "GetThreadGroupAffinity failed";
#else
  return "pthread_getaffinity_np failed";
#endif
}

std::string describe_cpus(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t last = i;
    while (last + 1 < cpus.size() && cpus[last + 1] == cpus[last] + 1) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (last > i) out += '-' + std::to_string(cpus[last]);
    i = last + 1;
  }
  return out;
}

std::optional<std::vector<int>> parse_cpus(std::string_view text) {
  constexpr int kMaxCpu = 4095;
  std::vector<int> cpus;
  auto number = [&](std::string_view& rest) -> std::optional<int> {
    int value = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || end == rest.data() || value < 0 || value > kMaxCpu)
      return std::nullopt;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    return value;
  };
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto first = number(rest);
    if (!first) return std::nullopt;
    int last = *first;
    if (!rest.empty() && rest.front() == '-') {
      rest.remove_prefix(1);
      const auto end = number(rest);
      if (!end || *end < *first) return std::nullopt;
      last = *end;
    }
    for (int cpu = *first; cpu <= last; ++cpu) {
      if (!cpus.empty() && cpu <= cpus.back()) return std::nullopt;
      cpus.push_back(cpu);
    }
    if (rest.empty()) break;
    if (rest.front() != ',' || rest.size() == 1) return std::nullopt;
    rest.remove_prefix(1);
  }
  if (cpus.empty()) return std::nullopt;
  return cpus;
}

std::vector<std::vector<int>> smt_groups(const std::vector<int>& cpus) {
  std::vector<std::vector<int>> groups;
#if !defined(_WIN32)
  std::set<std::vector<int>> seen;
  const std::set<int> wanted(cpus.begin(), cpus.end());
  for (const int cpu : cpus) {
    std::ifstream file("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                       "/topology/thread_siblings_list");
    std::string line;
    if (!file || !std::getline(file, line)) return {};
    const auto siblings = parse_cpus(line);
    if (!siblings) return {};
    std::vector<int> group;
    for (const int s : *siblings)
      if (wanted.contains(s)) group.push_back(s);
    if (seen.insert(group).second) groups.push_back(group);
  }
#else
  (void)cpus;
#endif
  return groups;
}

std::string smt_groups_source() {
#if defined(_WIN32)
  return "not read on Windows";
#else
  return "/sys/devices/system/cpu/cpu*/topology/thread_siblings_list";
#endif
}

bool pin_current_thread(int cpu) {
#if defined(_WIN32)
  if (cpu < 0 || cpu >= static_cast<int>(8 * sizeof(DWORD_PTR))) return false;
  return SetThreadAffinityMask(GetCurrentThread(), DWORD_PTR{1} << cpu) != 0;
#else
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
#endif
}

int current_cpu() {
#if defined(_WIN32)
  return static_cast<int>(GetCurrentProcessorNumber());
#else
  return sched_getcpu();
#endif
}

bool keep_this_thread_off(int cpu) { return keep_this_thread_off(std::vector<int>{cpu}); }

bool keep_this_thread_off(const std::vector<int>& cpus) {
#if defined(_WIN32)
  // From the thread's own mask (what an earlier call left it), as on Linux: SetThreadAffinityMask
  // answers the mask it replaces, so set the process's first to read it, then the narrower one.
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (!GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask)) return false;
  const DWORD_PTR before = SetThreadAffinityMask(GetCurrentThread(), process_mask);
  if (before == 0) return false;
  DWORD_PTR mask = before;
  for (const int cpu : cpus)
    if (cpu >= 0 && cpu < static_cast<int>(8 * sizeof(DWORD_PTR))) mask &= ~(DWORD_PTR{1} << cpu);
  if (mask != 0 && SetThreadAffinityMask(GetCurrentThread(), mask) != 0) return true;
  SetThreadAffinityMask(GetCurrentThread(), before);  // nothing left: as it was
  return false;
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return false;
  for (const int cpu : cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_CLR(cpu, &set);
  return CPU_COUNT(&set) > 0 && pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
#endif
}

bool restrict_this_thread_to(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
#if defined(_WIN32)
  DWORD_PTR mask = 0;
  for (const int cpu : cpus)
    if (cpu >= 0 && cpu < static_cast<int>(8 * sizeof(DWORD_PTR))) mask |= DWORD_PTR{1} << cpu;
  return mask != 0 && SetThreadAffinityMask(GetCurrentThread(), mask) != 0;
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int cpu : cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  return CPU_COUNT(&set) > 0 && pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
#endif
}

}  // namespace gpuoverlap
