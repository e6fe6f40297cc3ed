// `gpuoverlap load-process` (internal, started by run --load-process): the load of a
// preemption scenario on its own device, driven through stdin/stdout by the parent
// (preemption/load_process.h). Its own messages go to stderr.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "app/command_registry.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "preemption/load_process.h"
#include "scenarios/preemption_spec.h"

namespace gpuoverlap::commands {

int command_load_process(const std::string& spec_json, std::size_t device_index,
                         const std::string& settings_json, const std::string& api_name) {
  preemption::ParentLink parent;
  // Whatever stops it is the parent's failed measurement, whose reason the parent reads on the
  // link: exit 1, whatever the error's category.
  auto report_failure = [](const std::string& reason) {
    preemption::ParentLink::send("failed", nlohmann::json(reason));
    return problem_found("load process: " + reason);
  };
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(spec_json);
  } catch (const nlohmann::json::exception& e) {
    return report_failure(std::string("--spec is not JSON: ") + e.what());
  }
  nlohmann::json settings_parsed;
  try {
    settings_parsed = nlohmann::json::parse(settings_json);
  } catch (const nlohmann::json::exception& e) {
    return report_failure(std::string("--settings is not JSON: ") + e.what());
  }
  auto settings = run_settings_from_json(settings_parsed);
  if (!settings) return report_failure(settings.error().message);
  auto spec = preemption::spec_from_json(parsed);
  if (!spec) return report_failure(spec.error().message);
  const Scenario load_only =
      preemption::make_scenario(*spec, preemption::Role::load_only, "load-process");
  auto api = open_api(api_name, false);
  if (!api) return report_failure(api.error().message);
  if (device_index >= (*api)->devices().size())
    return report_failure("no device " + std::to_string(device_index));
  const std::unique_ptr<ScenarioExecutor> executor = (*api)->executor(device_index);
  auto timeline = executor->run_load_process(load_only, *settings, parent);
  if (!timeline) return finish(*executor, report_failure(timeline.error().message));
  preemption::ParentLink::send("result", preemption::load_process_result(*timeline));
  return finish(*executor, timeline->failure ? kExitFailed : kExitOk);
}

void add_load_process_command(CommandRegistry& registry) {
  struct LoadArguments {
    std::string spec, settings, api;
    std::size_t device = 0;
  };
  auto args = std::make_shared<LoadArguments>();
  // Internal: not listed in --help (an empty group).
  auto* load_process = registry.app.add_subcommand("load-process", "")->group("");
  load_process->add_option("--spec", args->spec)->required();
  load_process->add_option("--device", args->device)->required();
  load_process->add_option("--settings", args->settings)->required();
  add_api_option(*load_process, args->api);
  registry.add(load_process, [args] {
    return command_load_process(args->spec, args->device, args->settings, args->api);
  });
}

}  // namespace gpuoverlap::commands
