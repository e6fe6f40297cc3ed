// `gpuoverlap list`: the built-in presets with their descriptions.
#include <fmt/format.h>

#include <iostream>
#include <string>

#include "app/command_registry.h"
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

void add_list_command(CommandRegistry& registry) {
  registry.add(
      registry.app.add_subcommand("list", "List the built-in presets with their descriptions"),
      [] { return command_list(); });
}

}  // namespace gpuoverlap::commands
