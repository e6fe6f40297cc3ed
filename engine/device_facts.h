// What a backend knows of the device it opened for one scenario: its queues as mapped and the
// priorities they were granted, its clocks, where the stamps live. Typed, so the loops read
// what they need (a queue's valid timestamp bits, the granted priority, the tick period)
// without a virtual call per question, and so meta.json's device keys are written in one
// place (to_json) for every backend instead of by convention in each.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "queues/queue_model.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {

struct QueueFacts {
  std::string name;  // the scenario's queue
  QueueType type = QueueType::direct;
  std::uint32_t family = 0;  // the API's queue family (0 where the API has none)
  std::string family_flags;  // what the family can do, in the API's words
  std::uint32_t queue_index = 0;
  std::optional<std::string> shares_queue_of;  // another scenario queue on the same API queue
  QueuePriority priority_requested = QueuePriority::normal;
  QueuePriority priority_granted = QueuePriority::normal;
  std::uint32_t timestamp_valid_bits = 0;  // 0: no timestamps on this queue
};

// The timestamp clock: whether timestamp queries are recorded, and whether their ticks can be
// placed on the CPU clock.
struct TimestampFacts {
  bool available = false;              // queries recorded and placeable on the CPU clock
  bool calibrated = false;             // CPU/GPU pairs are taken (also for the shader clock alone)
  std::string reason;                  // why not available or not calibrated; empty when both hold
  double period_ns = 0;                // nanoseconds per tick (0: unknown)
  std::string host_domain;             // the CPU clock the pairs are taken on
  std::string calibration;             // how a pair is taken
  std::string start_stage, end_stage;  // what the start and end timestamps mean
};

struct ShaderClockFacts {
  bool extension = false;     // the API offers a shader clock
  bool device_scope = false;  // one clock for the whole device (comparable across units)
  bool recorded = false;      // the stamps carry it in this run
  std::string reason;         // why not recorded
};

struct MemoryFacts {
  std::string requested;  // StampMemory asked for
  std::uint32_t memory_type = 0;
  std::string flags;
  bool device_local = false;
  std::string note;
};

struct ScenarioDeviceFacts {
  std::vector<QueueFacts> queues;     // per scenario queue, in order
  bool compute_queue_shared = false;  // a COMPUTE queue runs on the DIRECT queue's API queue
  bool global_priority_extension = false;
  bool global_priority_requested = false;
  std::vector<std::string> priority_notes;  // every priority not granted as asked, and why
  TimestampFacts timestamps;
  ShaderClockFacts shader_clock;
  MemoryFacts stamp_memory;
  MemoryFacts counter_memory;
  std::uint64_t slot_stride_bytes = 0;  // between two workloads' stamp slots
  bool stamping = true;
  std::uint32_t max_workgroups_x = 0;  // bounds a preemption load part's size
  // What opening the device took, part by part in the order the backend did them (e.g.
  // "device", "resources", "pipelines"); empty where the backend does not time its parts.
  std::vector<std::pair<std::string, double>> open_parts_ms;
  // Where the API device came from (Vulkan, which keeps idle devices between scenarios): the
  // scenario it was created for, and which use of it this scenario is (1: it was created for
  // this one). Empty and 0 where the backend does not say.
  std::string api_device_created_for;
  std::uint32_t api_device_use = 0;
};

// Valid timestamp bits per workload (its queue's), read once per scenario.
std::vector<std::uint32_t> timestamp_valid_bits_per_workload(const ScenarioDeviceFacts& facts,
                                                             const Scenario& scenario);

// meta.json's device keys ("queues", "clocks", "memory", "priority_notes", ...), the keys
// analysis/report.cpp reads.
nlohmann::json to_json(const ScenarioDeviceFacts& facts);

}  // namespace gpuoverlap
