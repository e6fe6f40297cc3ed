#include "app/command_support.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <system_error>
#include <vector>

#include "app/exit_status.h"
#include "core/output_directory.h"

namespace gpuoverlap::commands {

std::string default_out_directory(const std::string& suffix) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
#if defined(_WIN32)
  localtime_s(&tm, &now);
#else
  localtime_r(&now, &tm);
#endif
  char text[64];
  std::strftime(text, sizeof text, "results/%Y%m%d-%H%M%S", &tm);
  return unused_directory_name(text + suffix).string();
}

namespace {

std::string built_apis_text() {
  std::string built;
  for (GpuApiKind a : build_apis())
    built += std::string(built.empty() ? "" : ", ") + api_option_name(a);
  return built;
}

}  // namespace

void add_api_option(CLI::App& command, std::string& api, bool several) {
  CLI::Option* option = command.add_option(
      "--api", api,
      fmt::format("GPU API: vulkan or d3d12{} (this build has {}; default {})",
                  several ? "; both, or a list such as d3d12,vulkan: each scenario through each "
                            "API on the same device, a folder per API"
                          : "",
                  built_apis_text(), api_option_name(default_api())));
  if (!several) option->check(CLI::IsMember({"vulkan", "d3d12"}));
}

Result<std::vector<GpuApiKind>> parse_apis(const std::string& api) {
  if (api.empty()) return std::vector<GpuApiKind>{default_api()};
  if (api == "both") {
    if (build_apis().size() < 2)
      return make_error("--api both: this build has one GPU API (" + built_apis_text() +
                        "); the Windows build has D3D12 and Vulkan");
    return build_apis();
  }
  std::vector<GpuApiKind> apis;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = api.find(',', start);
    const std::string name = api.substr(start, comma == std::string::npos ? comma : comma - start);
    const auto kind = parse_api_option(name);
    if (!kind)
      return make_error("--api " + api + ": '" + name +
                        "' is not an API (vulkan, d3d12, both, or a list such as d3d12,vulkan)");
    if (std::find(apis.begin(), apis.end(), *kind) != apis.end())
      return make_error("--api " + api + ": " + name + " is named twice");
    apis.push_back(*kind);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return apis;
}

int worst_status(const std::vector<int>& statuses) {
  int status = kExitOk;
  for (const int part : statuses)
    if (part != kExitOk && (status == kExitOk || part == kExitInterrupted)) status = part;
  return status;
}

Result<std::unique_ptr<GpuApi>> open_api(const std::string& api, bool validation,
                                         bool synchronization) {
  return open_gpu_api({.api = api.empty() ? std::nullopt : parse_api_option(api),
                       .validation = validation,
                       .synchronization_validation = synchronization});
}

namespace {

std::vector<DeviceCandidate> candidates_of(const GpuApi& api) {
  std::vector<DeviceCandidate> candidates;
  for (const DeviceFacts& d : api.devices()) candidates.push_back(d.candidate);
  return candidates;
}

void announce(const GpuApi& api, const DeviceChoice& chosen) {
  const DeviceFacts& device = api.devices()[chosen.index];
  std::cerr << fmt::format("device {}: {} ({}; driver {} {})\n", chosen.index,
                           device.candidate.name, chosen.reason, device.driver_name,
                           device.driver_info);
}

}  // namespace

Result<DeviceChoice> pick_device(const GpuApi& api, const std::string& wanted) {
  auto chosen = choose_device(candidates_of(api), wanted);
  if (!chosen) return chosen.error();
  announce(api, *chosen);
  return chosen;
}

Result<DeviceChoices> pick_devices(const GpuApi& api, const std::vector<std::string>& requests) {
  return choose_devices(candidates_of(api), requests);
}

void announce_devices(const GpuApi& api, const DeviceChoices& choices) {
  for (const DeviceChoice& c : choices.devices) announce(api, c);
}

int finish(const ScenarioExecutor& executor, int status) {
  if (executor.abandoned_device()) {
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(status);
  }
  return status;
}

int finish(const std::vector<std::unique_ptr<ScenarioExecutor>>& executors, int status) {
  for (const auto& executor : executors) finish(*executor, status);
  return status;
}

void PreparedOutput::discard_if_empty() const {
  std::error_code ec;
  if (!existed && std::filesystem::is_empty(path, ec)) std::filesystem::remove(path, ec);
}

Result<PreparedOutput> prepare_output(const std::filesystem::path& path, bool replace,
                                      std::uint64_t needed_bytes) {
  std::error_code ec;
  PreparedOutput out{path, std::filesystem::exists(path, ec)};
  GPUOVERLAP_TRY(
      prepare_output_directory({.path = path, .replace = replace, .needed_bytes = needed_bytes}));
  return out;
}

}  // namespace gpuoverlap::commands
