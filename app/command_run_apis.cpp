// `gpuoverlap run --api both` (or a list): the same scenarios through each API on one device,
// the device found again in each API, each API's results a results folder of its own
// (OUT/d3d12, OUT/vulkan) and OUT/run.json listing them as a run on several devices does, so
// that `report OUT` puts the APIs side by side and `compare OUT/d3d12 OUT/vulkan` gates them.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results.h"
#include "app/command_support.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "engine/suite_runner.h"

namespace gpuoverlap::commands {

namespace {

struct ApiDevice {
  GpuApiKind api;
  std::size_t index = 0;
  nlohmann::json description;  // the API's meta.json "device"
  std::string matched_by;      // how it was found to be the first API's device
  bool cpu = false;            // the API sees the device as the CPU (a software driver)
};

std::string text_of(const nlohmann::json& description, const char* key) {
  const auto value = description.value(key, nlohmann::json());
  return value.is_string() ? value.get<std::string>() : value.is_number() ? value.dump() : "";
}

// The device of `api` that is `first` (the device chosen through the first API): the same
// adapter LUID where both APIs give one (Windows), else the same PCI address, else the same
// vendor, device id and name, where exactly one device of `api` has them.
Result<ApiDevice> match_device(const ApiDevice& first, const GpuApi& api, GpuApiKind kind) {
  const auto& devices = api.devices();
  for (const char* key : {"luid", "pci_address"}) {
    const std::string wanted = text_of(first.description, key);
    if (wanted.empty()) continue;
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (text_of(devices[i].description, key) == wanted)
        return ApiDevice{kind, i, devices[i].description, std::string(key) + " " + wanted,
                         devices[i].candidate.device_class == DeviceClass::cpu};
  }
  std::vector<std::size_t> same;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    bool equal = true;
    for (const char* key : {"vendor_id", "device_id", "name"})
      equal = equal && text_of(devices[i].description, key) == text_of(first.description, key);
    if (equal) same.push_back(i);
  }
  const std::string name = text_of(first.description, "name");
  if (same.size() == 1)
    return ApiDevice{kind, same.front(), devices[same.front()].description,
                     "vendor, device id and name",
                     devices[same.front()].candidate.device_class == DeviceClass::cpu};
  return make_error(fmt::format(
      "--api: {} has {} devices named '{}' with its vendor and device id, and neither a LUID "
      "nor a PCI address to tell which is the one chosen through {}; run one API at a time",
      api.name(), same.size(), name, text_of(first.description, "api")),
      ErrorCategory::environment);
}

// Each API's device: the one --device names through the first API, found again in the others.
// Each API is opened and closed here; the runs open their own.
Result<std::vector<ApiDevice>> find_device_in_each(const RunArguments& args,
                                                   const std::vector<GpuApiKind>& apis) {
  std::vector<ApiDevice> found;
  for (GpuApiKind kind : apis) {
    auto api = open_api(api_option_name(kind), args.validation, args.sync_validation);
    if (!api) return api.error();
    if (found.empty()) {
      auto chosen = pick_device(**api, args.devices.empty() ? "" : args.devices.front());
      if (!chosen) return chosen.error();
      const DeviceFacts& facts = (*api)->devices()[chosen->index];
      found.push_back({kind, chosen->index, facts.description, "chosen",
                       facts.candidate.device_class == DeviceClass::cpu});
      continue;
    }
    auto matched = match_device(found.front(), **api, kind);
    if (!matched) return matched.error();
    std::cerr << fmt::format("{}: device {} ({}: the same {})\n", (*api)->name(), matched->index,
                             text_of(matched->description, "name"), matched->matched_by);
    found.push_back(*matched);
  }
  return found;
}

Status refuse_what_runs_one_api(const RunArguments& args) {
  const bool one_device = args.devices.size() <= 1 &&
                          (args.devices.empty() || (args.devices.front() != "all" &&
                                                    args.devices.front().find(',') ==
                                                        std::string::npos));
  if (!one_device)
    return make_error("--api with several APIs runs on one device: give --device one device");
  if (args.concurrent)
    return make_error("--api with several APIs runs one API after the other: drop --concurrent");
  if (args.on_frame || args.on_scenarios || args.next_version)
    return make_error("--live and --script run one API: give --api one API");
  return ok_status();
}

// OUT/run.json: each API's folder as a device entry (its device described as that API sees
// it) and every scenario of each, named with its folder in front ("vulkan/default").
Status write_apis_run_json(const std::filesystem::path& out, const std::string& started_at,
                           const std::string& command_line, const std::vector<ApiDevice>& found) {
  nlohmann::json devices = nlohmann::json::array();
  nlohmann::json scenarios = nlohmann::json::array();
  nlohmann::json failure = nullptr;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const std::string folder = api_option_name(found[i].api);
    auto run = read_results_json(out / folder / "run.json");
    nlohmann::json api_failure =
        run ? run->value("failure", nlohmann::json())
            : nlohmann::json{{"message", "no run.json: " + run.error().message}};
    if (run)
      for (auto entry : run->value("scenarios", nlohmann::json::array())) {
        if (entry.is_object() && entry.value("directory", nlohmann::json()).is_string() &&
            !entry["directory"].get<std::string>().empty())
          entry["directory"] = folder + "/" + entry["directory"].get<std::string>();
        scenarios.push_back(std::move(entry));
      }
    if (failure.is_null() && !api_failure.is_null()) failure = api_failure;
    devices.push_back({{"index", found[i].index},
                       {"directory", folder},
                       {"device", found[i].description},
                       {"matched_by", found[i].matched_by},
                       // As for a device: failed where its run stopped on a failure (a
                       // scenario refused as unsupported is in its run.json, not a failure).
                       {"status", api_failure.is_null() ? "ok" : "failed"},
                       {"failure", api_failure}});
  }
  return write_run_index_json(out, started_at, command_line, devices, nullptr, scenarios, failure);
}

}  // namespace

int command_run_apis(const RunArguments& args, const std::vector<GpuApiKind>& apis,
                     const std::string& command_line) {
  if (Status usable = refuse_what_runs_one_api(args); !usable) return fail(usable.error());
  auto found = find_device_in_each(args, apis);
  if (!found) return fail(found.error());
  auto output = prepare_output(args.out.empty() ? default_out_directory() : args.out, args.replace,
                               0);
  if (!output) return fail(output.error());
  const std::string started_at = utc_now_iso8601();
  // One device, one set of sizes: where any API sees it as the CPU (Wine's D3D12 calls
  // lavapipe an integrated GPU, its Vulkan the CPU), every API runs the CPU device's sizes.
  bool cpu = false;
  for (const ApiDevice& device : *found) cpu = cpu || device.cpu;
  std::vector<int> statuses;
  for (const ApiDevice& device : *found) {
    RunArguments one = args;
    one.api = api_option_name(device.api);
    one.devices = {std::to_string(device.index)};
    one.out = (output->path / one.api).string();
    one.replace = false;
    one.sized_as_cpu_device = cpu;
    std::cerr << fmt::format("--- {} ---\n", one.api);
    statuses.push_back(command_run(one, command_line));
    if (statuses.back() == kExitInterrupted) break;
  }
  const int status = worst_status(statuses);
  if (Status written = write_apis_run_json(output->path, started_at, command_line, *found);
      !written)
    return fail(written.error());
  std::cout << fmt::format("results: {} ({} APIs on one device, each in its folder: {})\n",
                           output->path.string(), found->size(),
                           [&] {
                             std::string folders;
                             for (const ApiDevice& d : *found)
                               folders += std::string(folders.empty() ? "" : ", ") +
                                          api_option_name(d.api) + "/";
                             return folders;
                           }());
  return status;
}

}  // namespace gpuoverlap::commands
