#include "scenarios/presets.h"

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace gpuoverlap {

namespace {

struct Definition {
  std::string text;
  std::string source;               // for messages
  std::filesystem::path directory;  // a file's directory (a study's foreground may be relative)
};

Result<Definition> find_definition(const std::string& preset_or_path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(preset_or_path, ec)) {
    std::ifstream in(preset_or_path, std::ios::binary);
    if (!in) return make_error(preset_or_path + ": cannot open scenario file");
    std::ostringstream text;
    text << in.rdbuf();
    return Definition{text.str(), preset_or_path,
                      std::filesystem::path(preset_or_path).parent_path()};
  }
  for (const Preset& p : presets())
    if (p.name == preset_or_path)
      return Definition{
          std::string(p.toml), "scenarios/presets/" + std::string(p.name) + ".toml", {}};
  std::string names;
  for (const Preset& p : presets()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return make_error("'" + preset_or_path +
                    "' is neither a scenario file nor a preset (presets: " + names + ")");
}

}  // namespace

Result<Scenario> resolve_scenario(const std::string& preset_or_path) {
  auto definition = find_definition(preset_or_path);
  if (!definition) return definition.error();
  return parse_scenario(definition->text, definition->source);
}

std::string description_of(const Preset& preset) {
  try {
    const toml::table root = toml::parse(preset.toml);
    return std::string(root["description"].value_or(std::string_view{}));
  } catch (const toml::parse_error&) {
    return "(invalid TOML)";
  }
}

Result<std::vector<Scenario>> resolve_scenarios(const std::string& preset_or_path,
                                                const std::string& foreground_override) {
  auto definition = find_definition(preset_or_path);
  if (!definition) return definition.error();
  if (is_preemption(definition->text)) {
    if (!foreground_override.empty())
      return make_error("--foreground applies to studies; '" + preset_or_path +
                        "' is a preemption scenario");
    return parse_preemption(definition->text, definition->source);
  }
  if (!is_study(definition->text)) {
    if (!foreground_override.empty())
      return make_error("--foreground applies to studies; '" + preset_or_path + "' is a scenario");
    auto scenario = parse_scenario(definition->text, definition->source);
    if (!scenario) return scenario.error();
    return std::vector<Scenario>{std::move(*scenario)};
  }
  auto study = parse_study(definition->text, definition->source);
  if (!study) return study.error();
  std::string foreground_name =
      foreground_override.empty() ? study->foreground : foreground_override;
  // A relative path in a study file is relative to that file.
  if (foreground_override.empty() && !definition->directory.empty()) {
    const std::filesystem::path beside = definition->directory / foreground_name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(beside, ec)) foreground_name = beside.string();
  }
  auto foreground_definition = find_definition(foreground_name);
  if (!foreground_definition)
    return foreground_definition.error().with_context(study->source + ": foreground: ");
  if (is_study(foreground_definition->text))
    return make_error(study->source + ": foreground '" + foreground_name +
                      "' is itself a study; name a scenario");
  auto foreground = parse_scenario(foreground_definition->text, foreground_definition->source);
  if (!foreground) return foreground.error();
  return expand_study(*study, *foreground);
}

Result<Suite> suite_scenarios() {
  std::vector<std::pair<std::string, std::vector<Scenario>>> expanded;
  for (const Preset& p : presets()) {
    auto s = resolve_scenarios(std::string(p.name));
    if (!s) return s.error();
    expanded.emplace_back(std::string(p.name), std::move(*s));
  }
  // What a preemption scenario measures is its spec; its name only says where it is written.
  auto configuration = [](const Scenario& s) {
    return s.preemption ? preemption::to_json(*s.preemption).dump() : std::string();
  };
  std::map<std::string, std::string> in_matrix;  // configuration -> the preset measuring it
  for (const auto& [name, scenarios] : expanded)
    if (scenarios.size() > 1)
      for (const Scenario& s : scenarios)
        if (const std::string key = configuration(s); !key.empty()) in_matrix.emplace(key, name);
  Suite suite;
  for (auto& [name, scenarios] : expanded) {
    if (scenarios.size() == 1)
      if (const auto found = in_matrix.find(configuration(scenarios.front()));
          found != in_matrix.end()) {
        suite.covered.push_back(name + " (in " + found->second + ")");
        continue;
      }
    for (Scenario& s : scenarios) suite.scenarios.push_back(std::move(s));
  }
  return suite;
}

}  // namespace gpuoverlap
