// `gpuoverlap list`: the built-in presets with their descriptions.
#include <fmt/format.h>

#include <iostream>
#include <string>

#include "app/commands.h"
#include "app/exit_status.h"
#include "scenarios/presets.h"

namespace gpuoverlap::commands {

int command_list() {
  for (const Preset& p : presets()) {
    auto s = resolve_scenarios(std::string(p.name));
    std::cout << fmt::format("{:<24} {}\n", p.name,
                             s ? description_of(p) : "(invalid: " + s.error().message + ")");
  }
  return kExitOk;
}

}  // namespace gpuoverlap::commands
