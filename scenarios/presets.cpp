#include "scenarios/presets.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/input_file.h"
#include "scenarios/names.h"

namespace gpuoverlap {

namespace {

struct Definition {
  std::string text;
  std::string source;               // for messages
  std::filesystem::path directory;  // a file's directory (a study's foreground may be relative)
};

// Levenshtein distance, for "did you mean" (names are short: O(n*m) is nothing).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

Result<Definition> find_definition(const std::string& preset_or_path) {
  const bool looks_like_path = preset_or_path.find('/') != std::string::npos ||
                               std::filesystem::path(preset_or_path).extension() == ".toml";
  std::error_code ec;
  const bool exists = std::filesystem::exists(std::filesystem::symlink_status(preset_or_path, ec));
  if (exists || looks_like_path) {
    auto text = read_input_file(preset_or_path, kMaxScenarioFileBytes);
    if (!text) return text.error().with_context("scenario file ");
    return Definition{std::move(*text), preset_or_path,
                      std::filesystem::path(preset_or_path).parent_path()};
  }
  for (const Preset& p : presets())
    if (p.name == preset_or_path)
      return Definition{
          std::string(p.toml), "scenarios/presets/" + std::string(p.name) + ".toml", {}};
  std::string close;
  for (const Preset& p : presets())
    if (edit_distance(p.name, preset_or_path) <= 3) {
      if (!close.empty()) close += ", ";
      close += p.name;
    }
  const std::string suggestion = close.empty() ? std::string() : "did you mean " + close + "? ";
  return make_error(
      fmt::format("'{}' is not a preset and no such file exists ({}'gpuoverlap list' shows the "
                  "presets; a scenario file is named by its path)",
                  printable_name(preset_or_path), suggestion));
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
  if (study->foreground_loop_wait && !foreground->cpu)
    return make_error(study->source + ": foreground_loop_wait: the foreground '" +
                      foreground_name + "' has no [cpu] table, so no frame loop waits for jobs");
  return expand_study(*study, *foreground);
}

Result<Suite> suite_scenarios() {
  std::vector<std::pair<std::string, std::vector<Scenario>>> expanded;
  std::vector<std::string> not_in_run_all;
  for (const Preset& p : presets()) {
    if (is_study(p.toml)) {
      auto study = parse_study(p.toml, std::string(p.name));
      if (!study) return study.error();
      if (!study->in_run_all) {
        not_in_run_all.push_back(
            fmt::format("{} (run it with: gpuoverlap run {})", p.name, p.name));
        continue;
      }
    }
    auto s = resolve_scenarios(std::string(p.name));
    if (!s) return s.error();
    expanded.emplace_back(std::string(p.name), std::move(*s));
  }
  // What a preemption scenario measures is its spec; its name only says where it is written,
  // and its duration only how many urgent jobs are measured (the matrix, sized for the main
  // job, measures fewer than a preset of one configuration).
  auto configuration = [](const Scenario& s) {
    if (!s.preemption) return std::string();
    nlohmann::json spec = preemption::to_json(*s.preemption);
    spec.erase("duration_ms");
    return spec.dump();
  };
  std::map<std::string, std::string> in_matrix;  // configuration -> the preset measuring it
  for (const auto& [name, scenarios] : expanded)
    if (scenarios.size() > 1)
      for (const Scenario& s : scenarios)
        if (const std::string key = configuration(s); !key.empty()) in_matrix.emplace(key, name);
  Suite suite;
  suite.not_in_run_all = std::move(not_in_run_all);
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
