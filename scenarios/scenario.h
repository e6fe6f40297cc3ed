// A scenario: queues, workloads on them, and the dependencies (with their barriers) between
// workloads. Parsed and fully validated before any GPU work starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "barriers/barrier_model.h"
#include "core/result.h"
#include "queues/queue_model.h"
#include "workloads/workload.h"

namespace gpuoverlap {

struct QueueSpec {
  std::string name;
  QueueType type = QueueType::direct;
  QueuePriority priority = QueuePriority::normal;
};

struct DependencySpec {
  // Index into Scenario::workloads: recorded earlier on the same queue, or on another queue
  // (then a fence joins them; scenarios/frame_plan.h).
  std::size_t producer = 0;
  BarrierRequest barrier;
};

struct WorkloadSpec {
  std::string name;
  std::size_t queue = 0;  // index into Scenario::queues
  WorkloadKind kind = WorkloadKind::compute;
  std::uint32_t groups = 8;
  std::uint32_t iterations = 64;
  std::vector<DependencySpec> depends_on;
};

inline constexpr std::size_t kMaxWorkloadsPerScenario = 64;
inline constexpr std::uint32_t kMaxFrames = 1'000'000;

struct Scenario {
  std::string name;  // also the output directory name
  std::string description;
  std::string source;  // file path or "preset:<name>", for messages and meta.json
  std::uint32_t frames = 100;
  std::uint32_t warmup_frames = 10;
  BarrierKind default_barrier = BarrierKind::legacy;
  SplitPolicy default_split_policy = SplitPolicy::event;
  std::vector<std::string> warnings;  // barrier-rule warnings found while parsing
  std::vector<QueueSpec> queues;
  std::vector<WorkloadSpec> workloads;  // in recording order per queue

  // Workload indices of one queue, in recording order.
  std::vector<std::size_t> workloads_on(std::size_t queue) const;
};

// Parses and validates TOML text. `source_name` names the file in every message, which reads
// "<source_name>:<line>: <reason>".
Result<Scenario> parse_scenario(std::string_view toml_text, const std::string& source_name);

// Reads a file, then parse_scenario.
Result<Scenario> load_scenario_file(const std::string& path);

}  // namespace gpuoverlap
