#include "engine/device_facts.h"

#include "core/clock.h"

namespace gpuoverlap {

std::vector<std::uint32_t> timestamp_valid_bits_per_workload(const ScenarioDeviceFacts& facts,
                                                             const Scenario& scenario) {
  std::vector<std::uint32_t> bits;
  for (const WorkloadSpec& w : scenario.workloads)
    bits.push_back(w.queue < facts.queues.size() ? facts.queues[w.queue].timestamp_valid_bits : 0);
  return bits;
}

nlohmann::json to_json(const ScenarioDeviceFacts& facts) {
  nlohmann::json queues = nlohmann::json::array();
  for (const QueueFacts& q : facts.queues)
    queues.push_back({{"name", q.name},
                      {"type", to_string(q.type)},
                      {"family", q.family},
                      {"family_flags", q.family_flags},
                      {"queue_index", q.queue_index},
                      {"shares_queue_of", q.shares_queue_of ? nlohmann::json(*q.shares_queue_of)
                                                            : nlohmann::json(nullptr)},
                      {"priority_requested", to_string(q.priority_requested)},
                      {"priority_granted", to_string(q.priority_granted)},
                      {"timestamp_valid_bits", q.timestamp_valid_bits}});

  const TimestampFacts& t = facts.timestamps;
  nlohmann::json timestamp = {{"available", t.available}, {"calibrated", t.calibrated}};
  if (!t.reason.empty()) timestamp["reason"] = t.reason;
  if (t.calibrated) {
    timestamp["host_domain"] = t.host_domain;
    timestamp["period_ns"] = t.period_ns;
    timestamp["calibration"] = t.calibration;
    timestamp["start_stage"] = t.start_stage;
    timestamp["end_stage"] = t.end_stage;
  }
  const ShaderClockFacts& c = facts.shader_clock;
  nlohmann::json shader_clock = {
      {"extension", c.extension}, {"device_scope", c.device_scope}, {"recorded", c.recorded}};
  if (!c.recorded) shader_clock["reason"] = c.reason;

  const MemoryFacts& stamps = facts.stamp_memory;
  const MemoryFacts& counters = facts.counter_memory;
  return {{"slot_stride_bytes", facts.slot_stride_bytes},
          {"memory",
           {{"stamps",
             {{"requested", stamps.requested},
              {"memory_type", stamps.memory_type},
              {"flags", stamps.flags},
              {"device_local", stamps.device_local},
              {"note", stamps.note}}},
            {"counters", {{"memory_type", counters.memory_type}, {"flags", counters.flags}}}}},
          {"queues", queues},
          {"compute_queue_shared", facts.compute_queue_shared},
          {"global_priority_extension", facts.global_priority_extension},
          {"global_priority_requested", facts.global_priority_requested},
          {"priority_notes", facts.priority_notes},
          {"clocks",
           {{"poll", kCpuClockName}, {"timestamp", timestamp}, {"shader_clock", shader_clock}}},
          {"stamping", facts.stamping},
          {"max_workgroups_x", facts.max_workgroups_x}};
}

}  // namespace gpuoverlap
