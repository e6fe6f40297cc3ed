#include <string>

#include "engine/executor.h"

namespace gpuoverlap {

nlohmann::json to_json(const RunSettings& settings) {
  return {{"frames", settings.frames},
          {"warmup_frames", settings.warmup_frames},
          {"frame_timeout_ms", settings.frame_timeout_ms},
          {"priority_fallback", settings.priority_fallback},
          {"timestamp_queries", settings.timestamp_queries},
          {"stamping", settings.stamping},
          {"stamp_memory", to_string(settings.stamp_memory)},
          {"shader_clock", settings.shader_clock},
          {"study_shares_device", settings.study_shares_device},
          {"reuse_devices", settings.reuse_devices},
          {"washout_ms", settings.washout_ms},
          {"measure_limit_ms", settings.measure_limit_ms},
          {"sched_trace", settings.sched_trace},
          {"poller_cpu",
           settings.poller.cpu ? nlohmann::json(*settings.poller.cpu) : nlohmann::json(nullptr)},
          {"poller_priority", to_string(settings.poller.priority)}};
}

Result<RunSettings> run_settings_from_json(const nlohmann::json& json) {
  if (!json.is_object()) return make_error("run settings: not a JSON object");
  RunSettings settings;
  auto count = [&](const char* key, std::uint32_t low, std::uint32_t high,
                   std::uint32_t& out) -> Status {
    const auto it = json.find(key);
    if (it == json.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() < low ||
        it->get<std::uint64_t>() > high)
      return make_error(std::string("run settings: '") + key + "' must be a whole number in [" +
                        std::to_string(low) + ", " + std::to_string(high) + "]");
    out = static_cast<std::uint32_t>(it->get<std::uint64_t>());
    return ok_status();
  };
  auto flag = [&](const char* key, bool& out) -> Status {
    const auto it = json.find(key);
    if (it == json.end() || !it->is_boolean())
      return make_error(std::string("run settings: '") + key + "' must be true or false");
    out = it->get<bool>();
    return ok_status();
  };
  // 0 for a preemption scenario, whose frames are its urgent jobs.
  GPUOVERLAP_TRY(count("frames", 0, kMaxFrames, settings.frames));
  GPUOVERLAP_TRY(count("warmup_frames", 0, kMaxFrames, settings.warmup_frames));
  GPUOVERLAP_TRY(count("frame_timeout_ms", 1, kMaxFrameTimeoutMs, settings.frame_timeout_ms));
  GPUOVERLAP_TRY(flag("priority_fallback", settings.priority_fallback));
  GPUOVERLAP_TRY(flag("timestamp_queries", settings.timestamp_queries));
  GPUOVERLAP_TRY(flag("stamping", settings.stamping));
  GPUOVERLAP_TRY(flag("shader_clock", settings.shader_clock));
  GPUOVERLAP_TRY(flag("study_shares_device", settings.study_shares_device));
  GPUOVERLAP_TRY(flag("reuse_devices", settings.reuse_devices));
  GPUOVERLAP_TRY(count("washout_ms", 0, kMaxWashoutMs, settings.washout_ms));
  GPUOVERLAP_TRY(count("measure_limit_ms", 0, kMaxStudyRoundMs, settings.measure_limit_ms));
  GPUOVERLAP_TRY(flag("sched_trace", settings.sched_trace));
  const auto memory = json.find("stamp_memory");
  if (memory == json.end() || !memory->is_string() ||
      (*memory != "cached" && *memory != "uncached"))
    return make_error("run settings: 'stamp_memory' must be \"cached\" or \"uncached\"");
  settings.stamp_memory = *memory == "cached" ? StampMemory::cached : StampMemory::uncached;
  // The poller's CPU was checked against the affinity mask where the run began; the load
  // process inherits that mask.
  const auto cpu = json.find("poller_cpu");
  if (cpu == json.end() ||
      !(cpu->is_null() || (cpu->is_number_integer() && cpu->get<std::int64_t>() >= 0 &&
                           cpu->get<std::int64_t>() < 4096)))
    return make_error("run settings: 'poller_cpu' must be null or a CPU number");
  if (!cpu->is_null()) settings.poller.cpu = cpu->get<int>();
  const auto priority = json.find("poller_priority");
  const auto parsed = priority != json.end() && priority->is_string()
                          ? parse_poller_priority(priority->get<std::string>())
                          : std::nullopt;
  if (!parsed)
    return make_error(
        "run settings: 'poller_priority' must be \"normal\", \"high\" or \"realtime\"");
  settings.poller.priority = *parsed;
  return settings;
}

}  // namespace gpuoverlap
