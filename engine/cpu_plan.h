// Where a run's threads go, decided before any device is opened: the stamp pollers' placement
// (one, or one per device that runs at once), each tried once on a thread of its own and its
// CPU kept from every later thread, and with several devices at once each device's share of
// the CPUs left beside the pollers (docs/multi-gpu.md, "CPUs").
//
// Contract: call it before the device is opened, from the thread that will make the run's
// other threads: a pinned poller's CPU is left to it by this thread's affinity, which every
// thread made after inherits (the driver's, the frame loop, a game frame's workers).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/result.h"
#include "queues/poller_placement.h"

namespace gpuoverlap {

// What the OS grants a stamp poller placed as asked, tried once on a thread of its own before
// the run (each poller thread asks the same); a refusal is one line on `log`, and the run goes
// on at what was granted. With a pinned CPU, the calling thread then leaves it to the poller
// (reserve_poller_cpus). Returns meta.json's "poller".
nlohmann::json try_poller_placement(const PollerPlacement& placement, std::ostream& log);
// The same for pollers that run at once (`run --concurrent`): each tried, then every pinned CPU
// left to its poller at once. Returns each one's meta.json "poller", in order.
std::vector<nlohmann::json> try_poller_placements(const std::vector<PollerPlacement>& placements,
                                                  std::ostream& log);

// `run`'s placement options, as the command line gave them.
struct CpuPlanRequest {
  std::string poller_core;  // --poller-core: CPU, a list, auto or none
  PollerPriority poller_priority = PollerPriority::normal;
  std::size_t devices = 1;   // devices chosen
  bool concurrent = false;   // they run at once: a poller and a share each
  bool split_cpus = false;   // --split-cpus: a share each, or refuse
  bool shared_cpus = false;  // --shared-cpus: no shares
};

struct CpuPlan {
  std::vector<PollerPlacement> placements;    // one, or one per device at once
  std::vector<nlohmann::json> poller_meta;    // each placement's meta.json "poller"
  std::vector<std::vector<int>> cpu_shares;   // each device's CPUs; empty: all of them
};

// An input Error for a placement that cannot be (a CPU outside the mask, --split-cpus with a
// share under two CPUs, --split-cpus on Windows); a share that cannot be split by default is
// one line on `log` and the devices share the CPUs.
Result<CpuPlan> plan_cpus(const CpuPlanRequest& request, std::ostream& log);

}  // namespace gpuoverlap
