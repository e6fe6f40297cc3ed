#include "scenarios/presets.h"

#include <filesystem>

namespace gpuoverlap {

Result<Scenario> resolve_scenario(const std::string& preset_or_path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(preset_or_path, ec))
    return load_scenario_file(preset_or_path);
  for (const Preset& p : presets())
    if (p.name == preset_or_path)
      return parse_scenario(p.toml, "scenarios/presets/" + std::string(p.name) + ".toml");
  std::string names;
  for (const Preset& p : presets()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return make_error("'" + preset_or_path +
                    "' is neither a scenario file nor a preset (presets: " + names + ")");
}

}  // namespace gpuoverlap
