#include "queues/poller_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>

#include "core/cpu_affinity.h"
#include "core/cpu_steal.h"
#include "core/thread_accounting.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace gpuoverlap {

std::string_view to_string(PollerPriority priority) {
  return name_of(kPollerPriorityNames, priority);
}
std::optional<PollerPriority> parse_poller_priority(std::string_view text) {
  return value_of(kPollerPriorityNames, text);
}

namespace {

// "" when granted, else why not.
std::string raise_priority(PollerPriority priority) {
  if (priority == PollerPriority::normal) return "";
#if defined(_WIN32)
  const int level =
      priority == PollerPriority::high ? THREAD_PRIORITY_HIGHEST : THREAD_PRIORITY_TIME_CRITICAL;
  if (SetThreadPriority(GetCurrentThread(), level)) return "";
  return fmt::format("SetThreadPriority failed (error {})", GetLastError());
#else
  if (priority == PollerPriority::high) {
    const auto tid = static_cast<id_t>(current_thread_id());
    if (setpriority(PRIO_PROCESS, tid, -10) == 0) return "";
    return fmt::format("nice -10: {}", std::strerror(errno));
  }
  sched_param param{};
  param.sched_priority = 1;
  const int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
  if (error == 0) return "";
  return fmt::format("SCHED_FIFO: {}", std::strerror(error));
#endif
}

}  // namespace

std::string apply_placement(const PollerPlacement& placement) {
  std::string refused;
  if (placement.cpu && !pin_current_thread(*placement.cpu))
    refused = fmt::format("pinning to CPU {} was refused", *placement.cpu);
  if (const std::string why = raise_priority(placement.priority); !why.empty())
    refused += fmt::format("{}priority {} was refused ({})", refused.empty() ? "" : "; ",
                           to_string(placement.priority), why);
  return refused;
}

PollerGranted place_this_thread(const PollerPlacement& placement) {
  PollerGranted granted;
  granted.refused = apply_placement(placement);
  // Read back: a thread pinned to one CPU runs on it from the call on.
  if (placement.cpu && current_cpu() == *placement.cpu) granted.cpu = placement.cpu;
  granted.scheduling = this_thread_scheduling();
  return granted;
}

namespace {

// Of `cpus`, `count` of them, those that served the fewest interrupts first (in their order
// where that is unknown).
std::vector<int> quietest_cpus(const std::vector<int>& cpus, std::size_t count) {
  const std::optional<std::string> text = read_proc_interrupts();
  std::vector<std::pair<std::uint64_t, int>> ranked;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const auto interrupts = text ? interrupts_on_cpu(*text, cpus[i]) : std::nullopt;
    ranked.emplace_back(interrupts.value_or(std::numeric_limits<std::uint64_t>::max()), cpus[i]);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> out;
  for (std::size_t i = 0; i < count && i < ranked.size(); ++i) out.push_back(ranked[i].second);
  return out;
}

}  // namespace

int quietest_cpu(const std::vector<int>& cpus) { return quietest_cpus(cpus, 1).front(); }

Result<PollerPlacement> poller_placement(std::string_view requested, PollerPriority priority) {
  PollerPlacement placement;
  placement.priority = priority;
  if (requested == "none") return placement;
  const std::vector<int> cpus = usable_cpu_ids();
  if (requested == "auto") {
#if defined(_WIN32)
    // Windows gives a new thread the process's affinity, not its creator's: the other threads
    // could not be kept off the poller's CPU, so the default leaves it unpinned there.
    return placement;
#endif
    if (cpus.size() >= kMinCpusForOwnPollerCore) {
      placement.cpu = quietest_cpu(cpus);
      placement.automatic = true;
    }
    return placement;
  }
  const std::string usable = describe_cpus(cpus);
  int requested_cpu = -1;
  const auto [end, error] =
      std::from_chars(requested.data(), requested.data() + requested.size(), requested_cpu);
  if (error != std::errc() || end != requested.data() + requested.size() || requested_cpu < 0)
    return make_error(fmt::format(
        "--poller-core '{}': give a CPU number, auto or none (this process may run on {})",
        requested, usable));
  if (!cpus.empty() && std::find(cpus.begin(), cpus.end(), requested_cpu) == cpus.end())
    return make_error(fmt::format(
        "--poller-core {}: not a CPU this process may run on (its affinity mask has {})",
        requested_cpu, usable));
  placement.cpu = requested_cpu;
  return placement;
}

Result<std::vector<PollerPlacement>> poller_placements(std::string_view requested,
                                                       PollerPriority priority, std::size_t count) {
  if (count <= 1) {
    auto one = poller_placement(requested, priority);
    if (!one) return one.error();
    return std::vector<PollerPlacement>(count, *one);
  }
  std::vector<PollerPlacement> placements(count);
  for (PollerPlacement& p : placements) p.priority = priority;
  if (requested == "none") return placements;
  const std::vector<int> cpus = usable_cpu_ids();
  if (requested == "auto") {
#if defined(_WIN32)
    return placements;  // as poller_placement: the other threads could not be kept off
#endif
    if (cpus.size() >= count + kMinCpusForOwnPollerCore - 1) {
      const std::vector<int> chosen = quietest_cpus(cpus, count);
      for (std::size_t i = 0; i < count; ++i) {
        placements[i].cpu = chosen[i];
        placements[i].automatic = true;
      }
    }
    return placements;
  }
  std::vector<int> listed;
  std::string_view rest = requested;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    const bool a_number = !entry.empty() && std::all_of(entry.begin(), entry.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    auto one =
        a_number ? poller_placement(entry, priority) : Result<PollerPlacement>(make_error(""));
    if (!one || !one->cpu)
      return make_error(fmt::format(
          "--poller-core '{}': give auto, none or {} CPUs, one per device, such as {} (this "
          "process may run on {})",
          requested, count, fmt::join(quietest_cpus(cpus, count), ","), describe_cpus(cpus)));
    if (std::find(listed.begin(), listed.end(), *one->cpu) != listed.end())
      return make_error(fmt::format(
          "--poller-core '{}': CPU {} is listed twice; each device's poller needs its own",
          requested, *one->cpu));
    listed.push_back(*one->cpu);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (listed.size() != count)
    return make_error(fmt::format("--poller-core '{}': {} CPUs for {} devices; give one per device",
                                  requested, listed.size(), count));
  for (std::size_t i = 0; i < count; ++i) placements[i].cpu = listed[i];
  return placements;
}

bool reserve_poller_cpus(const std::vector<PollerPlacement>& placements) {
  std::vector<int> cpus;
  for (const PollerPlacement& p : placements)
    if (p.cpu) cpus.push_back(*p.cpu);
  return !cpus.empty() && keep_this_thread_off(cpus);
}

nlohmann::json to_json(const PollerPlacement& asked, const PollerGranted& granted,
                       bool cpu_reserved) {
  return {{"cpu_requested", asked.automatic ? nlohmann::json("auto")
                            : asked.cpu     ? nlohmann::json(*asked.cpu)
                                            : nlohmann::json(nullptr)},
          {"cpu", granted.cpu ? nlohmann::json(*granted.cpu) : nlohmann::json(nullptr)},
          {"cpu_reserved", cpu_reserved},
          {"priority_requested", to_string(asked.priority)},
          {"scheduling", describe(granted.scheduling)},
          {"refused",
           granted.refused.empty() ? nlohmann::json(nullptr) : nlohmann::json(granted.refused)}};
}

}  // namespace gpuoverlap
