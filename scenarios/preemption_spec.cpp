#include "scenarios/preemption_spec.h"

#include <fmt/format.h>

#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::preemption {

std::string_view to_string(LoadKind kind) { return name_of(kLoadKindNames, kind); }

std::optional<LoadKind> parse_load_kind(std::string_view text) {
  return value_of(kLoadKindNames, text);
}

std::string_view to_string(ProcessMode mode) { return name_of(kProcessModeNames, mode); }

std::optional<ProcessMode> parse_process_mode(std::string_view text) {
  return value_of(kProcessModeNames, text);
}

std::string describe(const LoadSize& size) {
  if (size.draws > 0)
    return fmt::format("{} draws of 1024x{} pixels x {} iterations", size.draws, size.rows,
                       size.iterations);
  return fmt::format("{} threads x {} iterations", std::uint64_t{size.groups} * 1024,
                     size.iterations);
}

std::string describe(const PreemptionSpec& s) {
  return fmt::format(
      "{} load of {} ms on DIRECT, urgent job every {} ms on a {} COMPUTE queue for {} ms, {}",
      to_string(s.load), s.target_ms, s.period_ms, to_string(s.priority), s.duration_ms,
      s.process == ProcessMode::separate ? "load in a second process" : "one process");
}

Status validate(const PreemptionSpec& s) {
  auto out_of_range = [](const char* key, double value, double low, double high) -> Status {
    if (value >= low && value <= high) return ok_status();
    return make_error(fmt::format("{} = {} is out of range [{}, {}]", key, value, low, high));
  };
  GPUOVERLAP_TRY(out_of_range("target_ms", s.target_ms, kMinTargetMs, kMaxTargetMs));
  GPUOVERLAP_TRY(out_of_range("period_ms", s.period_ms, kMinPeriodMs, kMaxPeriodMs));
  GPUOVERLAP_TRY(out_of_range("duration_ms", s.duration_ms, kMinDurationMs, kMaxDurationMs));
  if (s.groups) GPUOVERLAP_TRY(out_of_range("groups", *s.groups, 1, kMaxComputeGroups));
  if (s.iterations)
    GPUOVERLAP_TRY(out_of_range("iterations", *s.iterations, 1, kMaxLoadIterations));
  if (s.draws) GPUOVERLAP_TRY(out_of_range("draws", *s.draws, 1, kMaxDraws));
  GPUOVERLAP_TRY(out_of_range("urgent_groups", s.urgent_groups, 1, kMaxUrgentGroups));
  GPUOVERLAP_TRY(out_of_range("urgent_iterations", s.urgent_iterations, 1, kMaxUrgentIterations));
  GPUOVERLAP_TRY(out_of_range("baseline_loads", s.baseline_loads, 1, kMaxBaselineLoads));
  const bool graphics = s.load == LoadKind::many_draws;
  const bool compute = s.load == LoadKind::big_dispatch || s.load == LoadKind::slow_shader;
  if (graphics && s.groups)
    return make_error("groups applies to compute loads; many-draws is sized by draws");
  if (compute && s.draws)
    return make_error(fmt::format("draws applies to graphics loads, not {}", to_string(s.load)));
  if (s.duration_ms < s.period_ms)
    return make_error(fmt::format("duration_ms = {} is shorter than one period_ms = {}",
                                  s.duration_ms, s.period_ms));
  return ok_status();
}

Scenario make_scenario(const PreemptionSpec& spec, Role role, const std::string& name) {
  Scenario s;
  s.name = name;
  s.frames = 0;
  s.warmup_frames = 0;
  s.preemption = spec;
  if (role != Role::urgent_only) {
    s.queues.push_back({"load", QueueType::direct, QueuePriority::normal});
    const std::size_t q = s.queues.size() - 1;
    auto part = [&](std::string_view part_name, WorkloadKind kind) {
      WorkloadSpec w;
      w.name = std::string(part_name);
      w.queue = q;
      w.kind = kind;
      // Resources are allocated for the largest size the part may be calibrated to.
      w.groups =
          kind == WorkloadKind::graphics ? kDrawRows : spec.groups.value_or(kMaxComputeGroups);
      if (spec.load == LoadKind::slow_shader) w.groups = spec.groups.value_or(1);
      w.iterations = spec.iterations.value_or(1);
      s.workloads.push_back(w);
    };
    switch (spec.load) {
      case LoadKind::big_dispatch:
      case LoadKind::slow_shader:
        part(kLoadWorkload, WorkloadKind::compute);
        break;
      case LoadKind::many_draws:
        part(kLoadWorkload, WorkloadKind::graphics);
        break;
      case LoadKind::graphics_and_compute:
        part(kLoadWorkload, WorkloadKind::graphics);
        part(kLoadComputeWorkload, WorkloadKind::compute);
        break;
    }
  }
  if (role != Role::load_only) {
    s.queues.push_back({"urgent", QueueType::compute, spec.priority});
    WorkloadSpec w;
    w.name = std::string(kUrgentWorkload);
    w.queue = s.queues.size() - 1;
    w.kind = WorkloadKind::compute;
    w.groups = spec.urgent_groups;
    w.iterations = spec.urgent_iterations;
    s.workloads.push_back(w);
  }
  attach_frame_plan(s);
  return s;
}

nlohmann::json to_json(const PreemptionSpec& s) {
  nlohmann::json j = {{"load", to_string(s.load)},
                      {"target_ms", s.target_ms},
                      {"priority", to_string(s.priority)},
                      {"period_ms", s.period_ms},
                      {"duration_ms", s.duration_ms},
                      {"urgent_groups", s.urgent_groups},
                      {"urgent_iterations", s.urgent_iterations},
                      {"baseline_loads", s.baseline_loads},
                      {"process", to_string(s.process)}};
  if (s.groups) j["groups"] = *s.groups;
  if (s.iterations) j["iterations"] = *s.iterations;
  if (s.draws) j["draws"] = *s.draws;
  return j;
}

Result<PreemptionSpec> spec_from_json(const nlohmann::json& j) {
  try {
    PreemptionSpec s;
    const auto load = parse_load_kind(j.at("load").get<std::string>());
    const auto priority = parse_queue_priority(j.at("priority").get<std::string>());
    const auto process = parse_process_mode(j.at("process").get<std::string>());
    if (!load || !priority || !process) return make_error("preemption spec: unknown name");
    s.load = *load;
    s.priority = *priority;
    s.process = *process;
    s.target_ms = j.at("target_ms").get<double>();
    s.period_ms = j.at("period_ms").get<double>();
    s.duration_ms = j.at("duration_ms").get<double>();
    s.urgent_groups = j.at("urgent_groups").get<std::uint32_t>();
    s.urgent_iterations = j.at("urgent_iterations").get<std::uint32_t>();
    s.baseline_loads = j.at("baseline_loads").get<std::uint32_t>();
    if (j.contains("groups")) s.groups = j["groups"].get<std::uint32_t>();
    if (j.contains("iterations")) s.iterations = j["iterations"].get<std::uint32_t>();
    if (j.contains("draws")) s.draws = j["draws"].get<std::uint32_t>();
    GPUOVERLAP_TRY(validate(s));
    return s;
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("preemption spec: ") + e.what());
  }
}

namespace {
nlohmann::json size_json(const LoadSize& size) {
  if (size.draws > 0)
    return {{"draws", size.draws},
            {"rows", size.rows},
            {"iterations", size.iterations},
            {"description", describe(size)}};
  return {{"groups", size.groups},
          {"threads", std::uint64_t{size.groups} * 1024},
          {"iterations", size.iterations},
          {"description", describe(size)}};
}
// A field size_json leaves out is 0 in the LoadSize it came from.
LoadSize size_from_json(const nlohmann::json& j) {
  return {.groups = j.value("groups", 0u),
          .iterations = j.at("iterations").get<std::uint32_t>(),
          .draws = j.value("draws", 0u),
          .rows = j.value("rows", 0u)};
}
}  // namespace

nlohmann::json to_json(const PreemptionRunInfo& info) {
  nlohmann::json sizes = nlohmann::json::array();
  for (const LoadSize& size : info.load_sizes) sizes.push_back(size_json(size));
  nlohmann::json steps = nlohmann::json::array();
  for (const CalibrationStep& step : info.calibration) {
    steps.push_back(
        {{"part", step.part}, {"size", size_json(step.size)}, {"measured_ms", step.measured_ms}});
  }
  nlohmann::json j = {{"load_sizes", sizes},
                      {"calibrated", info.calibrated},
                      {"calibration", steps},
                      {"baseline_loads", info.baseline_loads},
                      {"priority_granted", to_string(info.priority_granted)},
                      {"process", to_string(info.process)}};
  if (!info.calibration_note.empty()) j["calibration_note"] = info.calibration_note;
  if (!info.sizes_from.empty()) j["sizes_from"] = info.sizes_from;
  if (info.load_process_id != 0) {
    j["load_process_id"] = info.load_process_id;
    j["load_process_exit"] = info.load_process_exit;
  }
  return j;
}

Result<PreemptionRunInfo> run_info_from_json(const nlohmann::json& j) {
  try {
    PreemptionRunInfo info;
    for (const nlohmann::json& size : j.at("load_sizes"))
      info.load_sizes.push_back(size_from_json(size));
    for (const nlohmann::json& step : j.at("calibration"))
      info.calibration.push_back({.part = step.at("part").get<std::size_t>(),
                                  .size = size_from_json(step.at("size")),
                                  .measured_ms = step.at("measured_ms").get<double>()});
    info.calibrated = j.at("calibrated").get<bool>();
    info.baseline_loads = j.at("baseline_loads").get<std::uint32_t>();
    const auto priority = parse_queue_priority(j.at("priority_granted").get<std::string>());
    const auto process = parse_process_mode(j.at("process").get<std::string>());
    if (!priority || !process) return make_error("preemption run facts: unknown name");
    info.priority_granted = *priority;
    info.process = *process;
    info.calibration_note = j.value("calibration_note", "");
    info.sizes_from = j.value("sizes_from", "");
    info.load_process_id = j.value("load_process_id", std::int64_t{0});
    info.load_process_exit = j.value("load_process_exit", "");
    return info;
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("preemption run facts: ") + e.what());
  }
}

Scenario as_run(const Scenario& scenario, const std::vector<LoadSize>& load_sizes) {
  Scenario ran = scenario;
  for (std::size_t p = 0; p < load_sizes.size() && p < ran.workloads.size(); ++p) {
    const LoadSize& size = load_sizes[p];
    ran.workloads[p].groups = size.draws > 0 ? size.rows : size.groups;
    ran.workloads[p].iterations = size.iterations;
  }
  return ran;
}

}  // namespace gpuoverlap::preemption
