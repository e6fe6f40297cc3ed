#include "engine/cpu_plan.h"

#include <fmt/format.h>

#include <thread>

#include "core/cpu_affinity.h"
#include "engine/concurrent_suite.h"

namespace gpuoverlap {

nlohmann::json try_poller_placement(const PollerPlacement& placement, std::ostream& log) {
  return try_poller_placements({placement}, log).front();
}

std::vector<nlohmann::json> try_poller_placements(const std::vector<PollerPlacement>& placements,
                                                  std::ostream& log) {
  std::vector<PollerGranted> granted(placements.size());
  for (std::size_t i = 0; i < placements.size(); ++i) {
    std::thread([&] { granted[i] = place_this_thread(placements[i]); }).join();
    if (!granted[i].refused.empty())
      log << (placements.size() == 1 ? std::string("poller") : fmt::format("poller {}", i + 1))
          << ": " << granted[i].refused << "; it runs at " << describe(granted[i].scheduling)
          << "\n";
  }
  bool all_pinned = !placements.empty();
  for (const PollerGranted& g : granted) all_pinned = all_pinned && g.cpu.has_value();
  const bool reserved = all_pinned && reserve_poller_cpus(placements);
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < placements.size(); ++i)
    out.push_back(to_json(placements[i], granted[i], reserved));
  return out;
}

Result<CpuPlan> plan_cpus(const CpuPlanRequest& request, std::ostream& log) {
  CpuPlan plan;
  // One poller at a time, or one per device at once.
  auto placed = poller_placements(request.poller_core, request.poller_priority,
                                  request.concurrent ? request.devices : 1);
  if (!placed) return placed.error();
  plan.placements = std::move(*placed);
  plan.poller_meta = try_poller_placements(plan.placements, log);
  // The CPUs left beside the pollers (this thread's, after the reservation), a share each.
  if (request.split_cpus) {
#if defined(_WIN32)
    return make_error(
        "--split-cpus: on Windows a new thread takes the process's CPUs, not its creator's, so "
        "a device's threads cannot be kept to a share");
#endif
    auto shares = split_cpus(usable_cpu_ids(), request.devices);
    if (!shares) return shares.error();
    plan.cpu_shares = std::move(*shares);
  } else if (request.concurrent && !request.shared_cpus && request.devices > 1) {
    // Split by default: two CPU-bound scenarios (a game frame fills every core) sharing the
    // cores slow each other down more than the GPUs do (docs/multi-gpu.md, "CPUs").
#if defined(_WIN32)
    log << "--concurrent: the devices share the CPUs (on Windows a device's threads cannot be "
           "kept to a share)\n";
#else
    if (auto shares = split_cpus(usable_cpu_ids(), request.devices))
      plan.cpu_shares = std::move(*shares);
    else
      log << fmt::format("--concurrent: the devices share the CPUs ({})\n",
                         shares.error().message);
#endif
  }
  return plan;
}

}  // namespace gpuoverlap
