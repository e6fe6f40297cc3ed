// `gpuoverlap devices`: every device of the build's GPU API, its queue families, priorities
// and clocks, and which one a run would choose.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/clock.h"

namespace gpuoverlap::commands {

int command_devices(const std::string& api_name, bool as_json) {
  auto api = open_api(api_name, false);
  if (!api) return fail(api.error());
  nlohmann::json all = nlohmann::json::array();
  std::vector<DeviceCandidate> candidates;
  for (const DeviceFacts& d : (*api)->devices()) candidates.push_back(d.candidate);
  auto chosen = choose_device(candidates, "");
  for (std::size_t i = 0; i < (*api)->devices().size(); ++i) {
    const DeviceFacts& d = (*api)->devices()[i];
    nlohmann::json j = d.description;
    j["index"] = i;
    j["default"] = chosen && chosen->index == i;
    nlohmann::json families = nlohmann::json::array();
    for (std::size_t f = 0; f < d.queue_families.size(); ++f)
      families.push_back({{"index", f},
                          {"flags", d.queue_families[f].flags},
                          {"queues", d.queue_families[f].queues},
                          {"timestamp_valid_bits", d.queue_families[f].timestamp_valid_bits}});
    j["queue_families"] = families;
    j["global_priority"] = d.global_priority;
    j["calibrated_timestamps"] = d.calibrated_timestamps;
    j["shader_clock"] = d.shader_clock;
    j["notes"] = d.notes;
    all.push_back(j);
  }
  const Error none =
      make_error("no " + (*api)->name() + " device found", ErrorCategory::environment);
  // With --json the empty array says it; stderr stays quiet.
  if (as_json) {
    std::cout << all.dump(2) << "\n";
    return all.empty() ? exit_status_of(none) : kExitOk;
  }
  for (const auto& j : all) {
    std::cout << fmt::format(
        "{}: {} ({}, {} {}, driver {} {}){}\n", j["index"].get<std::size_t>(),
        j["name"].get<std::string>(), j["type"].get<std::string>(), (*api)->name(),
        j["api_version"].get<std::string>(), j["driver_name"].get<std::string>(),
        j["driver_info"].get<std::string>(), j["default"].get<bool>() ? "  <- default" : "");
    for (const auto& f : j["queue_families"])
      std::cout << fmt::format("     family {}: {} {} (timestamp bits {})\n",
                               f["index"].get<std::size_t>(), f["flags"].get<std::string>(),
                               f["queues"].get<unsigned>()
                                   ? fmt::format("x{}", f["queues"].get<unsigned>())
                                   : "(any number of queues)",
                               f["timestamp_valid_bits"].get<unsigned>());
    std::cout << fmt::format(
        "     priorities: {}; clocks: poll ({}), timestamp queries{}{}\n",
        (*api)->devices()[j["index"].get<std::size_t>()].priorities, kCpuClockName,
        j["calibrated_timestamps"].get<bool>() ? " (calibrated)" : " (not calibrated)",
        j["shader_clock"].get<bool>() ? ", shader clock" : "");
    for (const auto& note : j["notes"])
      std::cout << "     unsupported: " << note.get<std::string>() << "\n";
  }
  if (all.empty()) return fail(none);
  return kExitOk;
}

void add_devices_command(CommandRegistry& registry) {
  struct DevicesArguments {
    std::string api;
    bool json = false;
  };
  auto args = std::make_shared<DevicesArguments>();
  auto* devices = registry.app.add_subcommand(
      "devices", "List the GPU API's devices, queue families, priorities and clocks");
  add_api_option(*devices, args->api);
  devices->add_flag("--json", args->json, "Print JSON instead of text");
  registry.add(devices, [args] { return command_devices(args->api, args->json); });
}

}  // namespace gpuoverlap::commands
