#include "analysis/scenario_meta.h"

#include <cmath>

#include "core/enum_names.h"

namespace gpuoverlap {

namespace {

const nlohmann::json& null_json() {
  static const nlohmann::json null;
  return null;
}

// `object`'s member `key`; null where `object` is not an object or has none.
const nlohmann::json& meta_member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return null_json();
  const auto it = object.find(key);
  return it == object.end() ? null_json() : *it;
}

MetaText meta_text(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = meta_member(object, key);
  if (value.is_null()) return std::nullopt;
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Only a string: a member that names something, where a number is no name.
std::optional<std::string> meta_string(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = meta_member(object, key);
  if (!value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

std::optional<std::int64_t> meta_whole(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = meta_member(object, key);
  if (!value.is_number_integer()) return std::nullopt;
  return value.get<std::int64_t>();
}

std::optional<double> meta_number(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = meta_member(object, key);
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

MetaQueue queue_of(const nlohmann::json& q) {
  MetaQueue out;
  out.name = meta_string(q, "name");
  out.type = meta_text(q, "type");
  out.family = meta_text(q, "family");
  out.family_flags = meta_text(q, "family_flags");
  out.queue_index = meta_text(q, "queue_index");
  out.priority_requested = meta_text(q, "priority_requested");
  out.priority_granted = meta_text(q, "priority_granted");
  out.shares_queue_of = meta_text(q, "shares_queue_of");
  if (out.type) out.queue_type = value_of(kQueueTypeNames, *out.type);
  return out;
}

MetaDevice device_of(const nlohmann::json& d) {
  MetaDevice out;
  out.api = meta_text(d, "api");
  out.name = meta_text(d, "name");
  out.type = meta_text(d, "type");
  out.vendor_id = meta_text(d, "vendor_id");
  out.device_id = meta_text(d, "device_id");
  out.driver_name = meta_text(d, "driver_name");
  out.driver_info = meta_text(d, "driver_info");
  out.api_version = meta_text(d, "api_version");
  out.runtime = meta_text(d, "runtime");
  out.uuid = meta_text(d, "uuid");
  out.vendor_number = meta_whole(d, "vendor_id");
  out.device_number = meta_whole(d, "device_id");
  return out;
}

MetaHost host_of(const nlohmann::json& h) {
  MetaHost out;
  out.hostname = meta_text(h, "hostname");
  out.kernel = meta_text(h, "kernel");
  out.cpu_model = meta_text(h, "cpu_model");
  out.logical_cpus = meta_text(h, "logical_cpus");
  out.usable_cpus = meta_text(h, "usable_cpus");
  out.logical_cpu_count = meta_whole(h, "logical_cpus");
  out.tick_hz = meta_text(h, "tick_hz");
  out.preemption_model = meta_text(meta_member(h, "preemption"), "model");
  out.scheduler = meta_text(meta_member(h, "scheduler"), "name");
  out.base_slice_ns = meta_text(meta_member(h, "scheduler"), "base_slice_ns");
  return out;
}

MetaPreemption preemption_of(const nlohmann::json& p) {
  MetaPreemption out;
  const nlohmann::json& spec = meta_member(p, "spec");
  out.load = meta_text(spec, "load");
  out.target_ms = meta_text(spec, "target_ms");
  out.period_ms = meta_text(spec, "period_ms");
  out.duration_ms = meta_text(spec, "duration_ms");
  out.priority = meta_text(spec, "priority");
  out.spec_process = meta_text(spec, "process");
  out.period_ms_number = meta_number(spec, "period_ms");
  out.priority_granted = meta_text(p, "priority_granted");
  out.process = meta_text(p, "process");
  out.sizes_from = meta_text(p, "sizes_from");
  out.skipped_ticks = meta_text(p, "skipped_ticks");
  out.calibration_note = meta_text(p, "calibration_note");
  out.calibrated =
      meta_member(p, "calibrated").is_boolean() && meta_member(p, "calibrated").get<bool>();
  const nlohmann::json& sizes = meta_member(p, "load_sizes");
  if (sizes.is_array())
    for (const nlohmann::json& size : sizes)
      out.load_sizes.push_back(meta_text(size, "description"));
  return out;
}

MetaSizes sizes_of(const nlohmann::json& s) {
  MetaSizes out;
  out.profile = meta_text(s, "profile");
  out.why = meta_text(s, "why");
  out.frames = meta_text(s, "frames");
  out.study_frames_per_condition = meta_text(s, "study_frames_per_condition");
  out.preemption_duration_ms = meta_text(s, "preemption_duration_ms");
  out.preemption_target_ms = meta_text(s, "preemption_target_ms");
  return out;
}

nlohmann::json work_of(const nlohmann::json& scenario) {
  if (!scenario.is_object()) return nullptr;
  nlohmann::json workloads = nlohmann::json::array();
  const nlohmann::json& listed = meta_member(scenario, "workloads");
  if (listed.is_array())
    for (const nlohmann::json& w : listed) {
      if (!w.is_object()) return nullptr;
      nlohmann::json work = w;
      // Whether a draw discards its target is how it gets there (a barrier), not its work.
      if (work.contains("target") && work["target"].is_object()) work["target"].erase("discard");
      nlohmann::json producers = nlohmann::json::array();
      const nlohmann::json& depends_on = meta_member(w, "depends_on");
      if (depends_on.is_array())
        for (const nlohmann::json& d : depends_on)
          producers.push_back(d.is_object() ? meta_member(d, "workload") : d);
      work["depends_on"] = producers;
      workloads.push_back(work);
    }
  return {{"queues", meta_member(scenario, "queues")},
          {"workloads", workloads},
          {"textures", meta_member(scenario, "textures")}};
}

}  // namespace

ScenarioMeta read_scenario_meta(const nlohmann::json& meta) {
  ScenarioMeta out;
  const nlohmann::json& scenario = meta_member(meta, "scenario");
  out.description = meta_text(scenario, "description");
  out.default_barrier = meta_string(scenario, "default_barrier");
  out.work = work_of(scenario);
  const nlohmann::json& failure = meta_member(meta, "failure");
  out.failed = !failure.is_null();
  out.failure = meta_text(failure, "message");
  const nlohmann::json& queues = meta_member(meta, "queues");
  if (queues.is_array())
    for (const nlohmann::json& q : queues)
      if (q.is_object()) out.queues.push_back(queue_of(q));
  const nlohmann::json& notes = meta_member(meta, "priority_notes");
  if (notes.is_array())
    for (const nlohmann::json& note : notes)
      if (note.is_string()) out.priority_notes.push_back(note.get<std::string>());
  const nlohmann::json& settings = meta_member(meta, "settings");
  out.frames = meta_text(settings, "frames");
  out.warmup_frames = meta_text(settings, "warmup_frames");
  const nlohmann::json& timestamps = meta_member(settings, "timestamp_queries");
  out.timestamp_queries = !timestamps.is_boolean() || timestamps.get<bool>();
  out.clock_tolerance = meta_text(meta_member(meta, "clock_agreement"), "tolerance");
  const nlohmann::json& verification =
      meta_member(meta_member(meta_member(meta, "clocks"), "shader_clock"), "verification");
  out.shader_clock_verdict = meta_text(verification, "verdict");
  out.shader_clock_reason = meta_text(verification, "reason");
  out.device = device_of(meta_member(meta, "device"));
  out.host = host_of(meta_member(meta, "host"));
  out.git_revision = meta_text(meta_member(meta, "tool"), "git_revision");
  out.command_line = meta_text(meta, "command_line");
  out.started_at = meta_text(meta, "started_at");
  out.sizes = sizes_of(meta_member(meta, "sizes"));
  const auto period_ms = meta_number(meta_member(meta, "cpu"), "frame_period_ms");
  if (period_ms && *period_ms > 0 && std::isfinite(*period_ms)) out.frame_period_ms = period_ms;
  if (meta_member(meta, "preemption").is_object())
    out.preemption = preemption_of(meta_member(meta, "preemption"));
  return out;
}

std::string api_of(const ScenarioMeta& meta) { return meta.device.api.value_or("Vulkan"); }

std::string platform_of(const ScenarioMeta& meta) {
  const MetaDevice& d = meta.device;
  auto shown = [](const MetaText& t) { return t.value_or("?"); };
  return api_of(meta) + " " + shown(d.api_version) + " on " + shown(d.name) +
         (d.runtime ? ", runtime " + *d.runtime
                    : ", driver " + shown(d.driver_name) + " " + shown(d.driver_info)) +
         ", host " + shown(meta.host.kernel);
}

}  // namespace gpuoverlap
