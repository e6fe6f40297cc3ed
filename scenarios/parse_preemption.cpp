#include <string>

#include "scenarios/scenario.h"
#include "scenarios/scenario_fields.h"

namespace gpuoverlap {

namespace {

class PreemptionGrammar : public scenario_grammar::FieldReader {
 public:
  using FieldReader::FieldReader;

  // A file with [preemption]: docs/preemption.md. Arrays in load, priority or process make a
  // matrix: one scenario per combination, named "<name>/<load>-<priority>[-<process>]".
  Result<std::vector<Scenario>> parse_preemption_text(std::string_view text) {
    using namespace preemption;
    auto parsed = parse_toml(text);
    if (!parsed) return parsed.error();
    const toml::table& root = *parsed;
    GPUOVERLAP_TRY(only_keys(root, {"name", "description", "preemption"}, "a preemption scenario"));
    auto name = directory_name(root, "name", "the scenario", nullptr);
    if (!name) return name.error();
    auto description = string_field(root, "description", "the scenario", false, nullptr);
    if (!description) return description.error();
    const toml::node* node = root.get("preemption");
    const toml::table* t = node ? node->as_table() : nullptr;
    if (!t) return error_at(node, "[preemption] must be a table");
    const std::string where = "[preemption]";
    GPUOVERLAP_TRY(
        only_keys(*t,
                  {"load", "priority", "process", "target_ms", "period_ms", "duration_ms", "groups",
                   "iterations", "draws", "urgent_groups", "urgent_iterations", "baseline_loads"},
                  where));
    if (!t->get("load"))
      return error_at(node, "[preemption] needs 'load' (" + names_list(kLoadKindNames) +
                                ", or an array of them)");
    auto loads = names_field(*t, "load", where, parse_load_kind, names_list(kLoadKindNames),
                             LoadKind::big_dispatch);
    if (!loads) return loads.error();
    auto priorities = names_field(*t, "priority", where, parse_queue_priority,
                                  names_list(kQueuePriorityNames), QueuePriority::normal);
    if (!priorities) return priorities.error();
    auto processes = names_field(*t, "process", where, parse_process_mode,
                                 names_list(kProcessModeNames), ProcessMode::same);
    if (!processes) return processes.error();
    PreemptionSpec base;
    auto target = number_field(*t, "target_ms", where, kMinTargetMs, kMaxTargetMs, base.target_ms);
    if (!target) return target.error();
    base.target_ms = *target;
    auto period = number_field(*t, "period_ms", where, kMinPeriodMs, kMaxPeriodMs, base.period_ms);
    if (!period) return period.error();
    base.period_ms = *period;
    auto duration =
        number_field(*t, "duration_ms", where, kMinDurationMs, kMaxDurationMs, base.duration_ms);
    if (!duration) return duration.error();
    base.duration_ms = *duration;
    auto optional_int = [&](std::string_view key, std::uint32_t max,
                            std::optional<std::uint32_t>& out) -> Status {
      if (!t->get(key)) return ok_status();
      auto v = int_field(*t, key, where, 1, max, 1);
      if (!v) return v.error();
      out = *v;
      return ok_status();
    };
    GPUOVERLAP_TRY(optional_int("groups", kMaxComputeGroups, base.groups));
    GPUOVERLAP_TRY(optional_int("iterations", kMaxLoadIterations, base.iterations));
    GPUOVERLAP_TRY(optional_int("draws", kMaxDraws, base.draws));
    auto urgent_groups = int_field(*t, "urgent_groups", where, 1, kMaxUrgentGroups, 1);
    if (!urgent_groups) return urgent_groups.error();
    base.urgent_groups = *urgent_groups;
    auto urgent_iterations = int_field(*t, "urgent_iterations", where, 1, kMaxUrgentIterations, 16);
    if (!urgent_iterations) return urgent_iterations.error();
    base.urgent_iterations = *urgent_iterations;
    auto baseline = int_field(*t, "baseline_loads", where, 1, kMaxBaselineLoads, 3);
    if (!baseline) return baseline.error();
    base.baseline_loads = *baseline;
    const bool matrix = loads->size() > 1 || priorities->size() > 1 || processes->size() > 1;
    std::vector<Scenario> out;
    for (LoadKind load : *loads)
      for (QueuePriority priority : *priorities)
        for (ProcessMode process : *processes) {
          PreemptionSpec spec = base;
          spec.load = load;
          spec.priority = priority;
          spec.process = process;
          if (Status v = validate(spec); !v)
            return error_at(node,
                            v.error().message + " (load " + std::string(to_string(load)) + ")");
          std::string scenario_name = *name;
          if (matrix) {
            scenario_name +=
                "/" + std::string(to_string(load)) + "-" + std::string(to_string(priority));
            if (processes->size() > 1) scenario_name += "-" + std::string(to_string(process));
          }
          Scenario s = make_scenario(spec, Role::both, scenario_name);
          s.description = *description;
          s.source = source_;
          out.push_back(std::move(s));
        }
    return out;
  }
};

}  // namespace

bool is_preemption(std::string_view toml_text) {
  return scenario_grammar::has_top_level_key(toml_text, {"preemption"});
}

Result<std::vector<Scenario>> parse_preemption(std::string_view toml_text,
                                               const std::string& source_name) {
  PreemptionGrammar grammar(source_name);
  return grammar.parse_preemption_text(toml_text);
}

}  // namespace gpuoverlap
