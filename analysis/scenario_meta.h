// meta.json of one scenario, typed: what the report, the answers, `compare`, the viewer and the
// history read of it, read in one place (read_scenario_meta) so that no reader walks the JSON.
// The engine writes meta.json (engine/suite_runner.cpp and the backends' device facts); this is
// its reading edge.
//
// meta.json is input (a folder may come from anywhere, or from an older version): a member of
// another shape than the writer's reads as absent, never as an error, because a reader shows
// what is there. Members that are only shown are MetaText: the value's text, whatever its type.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "queues/queue_model.h"

namespace gpuoverlap {

// A member shown as text: a string as it is, any other value as its JSON (a number's digits,
// `true`); nullopt when missing or null. Readers choose what an absent one reads as ("?").
using MetaText = std::optional<std::string>;

// One queue as the device granted it (meta.json "queues").
struct MetaQueue {
  std::optional<std::string> name;  // only where a string: it names the queue's lane
  MetaText type, family, family_flags, queue_index, priority_requested, priority_granted;
  // The queue this one was folded onto where the device had too few; nullopt where it has its
  // own.
  MetaText shares_queue_of;
  std::optional<QueueType> queue_type;  // `type` where it names one
};

// The device and driver (meta.json "device"). The numbers are also kept as numbers where they
// are whole ones: the history's machine key compares them.
struct MetaDevice {
  MetaText api, name, type, vendor_id, device_id, driver_name, driver_info, api_version, runtime,
      uuid;
  std::optional<std::int64_t> vendor_number, device_number;
};

// The host (meta.json "host").
struct MetaHost {
  MetaText hostname, kernel, cpu_model, logical_cpus, usable_cpus;
  // What decides a thread's waits (meta.json host.tick_hz, host.preemption.model,
  // host.scheduler.name and .base_slice_ns); absent from folders written before them.
  MetaText tick_hz, preemption_model, scheduler, base_slice_ns;
  std::optional<std::int64_t> logical_cpu_count;
};

// A preemption scenario's setup (meta.json "preemption" and its "spec").
struct MetaPreemption {
  MetaText load, target_ms, period_ms, duration_ms, priority, spec_process;  // the spec's
  MetaText priority_granted, process, sizes_from, skipped_ticks, calibration_note;
  std::vector<MetaText> load_sizes;  // each load size's description
  bool calibrated = false;
  std::optional<double> period_ms_number;  // `period_ms` where it is a number
};

// The smaller sizes a CPU device ran (meta.json "sizes"; run's --full-size turns them off).
struct MetaSizes {
  MetaText profile, why, frames, study_frames_per_condition, preemption_duration_ms,
      preemption_target_ms;
};

struct ScenarioMeta {
  MetaText description;      // scenario.description
  MetaText default_barrier;  // scenario.default_barrier, where a string
  // The scenario's work, its barriers left out: its queues, its workloads (queue, kind, size,
  // target without its discard, producers by name) and its textures, as meta.json has them.
  // A key, compared whole: twins share it, a scenario that only shares a name prefix does not.
  // null where meta.json has no scenario or a workload is not an object.
  nlohmann::json work;
  bool failed = false;  // "failure" is present and not null
  MetaText failure;     // its message
  std::vector<MetaQueue> queues;
  std::vector<std::string> priority_notes;  // the string ones
  MetaText frames, warmup_frames;           // settings
  bool timestamp_queries = true;            // settings; true where absent (older results)
  MetaText clock_tolerance;                 // clock_agreement.tolerance
  MetaText shader_clock_verdict, shader_clock_reason;  // clocks.shader_clock.verification
  MetaDevice device;
  MetaHost host;
  MetaText git_revision;  // tool.git_revision
  MetaText command_line, started_at;
  MetaSizes sizes;
  // cpu.frame_period_ms where a positive finite number: a paced game frame.
  std::optional<double> frame_period_ms;
  std::optional<MetaPreemption> preemption;  // where "preemption" is an object
};

ScenarioMeta read_scenario_meta(const nlohmann::json& meta);

// The GPU API a scenario ran on: device.api ("Vulkan", "D3D12"); results written before the
// D3D12 backend have none and are Vulkan.
std::string api_of(const ScenarioMeta& meta);
// Where a scenario ran, in one line: "D3D12 feature level 11_0 on llvmpipe (...), runtime Wine
// 8.0 d3d12.dll (vkd3d on Vulkan), host Wine 8.0". Members missing read "?".
std::string platform_of(const ScenarioMeta& meta);

}  // namespace gpuoverlap
