#include "app/command_support.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <system_error>
#include <vector>

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

void add_api_option(CLI::App& command, std::string& api) {
  std::string built;
  for (GpuApiKind a : build_apis())
    built += std::string(built.empty() ? "" : ", ") + api_option_name(a);
  command
      .add_option("--api", api,
                  fmt::format("GPU API: vulkan or d3d12 (this build has {}; default {})", built,
                              api_option_name(default_api())))
      ->check(CLI::IsMember({"vulkan", "d3d12"}));
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
