// What the commands that run GPU work share: the default output folder, opening the GPU API,
// choosing the device and ending the process after an abandoned device.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "backends/backends.h"
#include "core/result.h"

namespace CLI {
class App;
}

namespace gpuoverlap::commands {

// results/<date-time>, or with -2, -3, ... when a run started in the same second took it.
std::string default_out_directory(const std::string& suffix = "");

// `--api NAME` on a command that opens a GPU API: `vulkan` or `d3d12`, the names every build
// knows; one this build lacks is refused by open_api in one line. Empty: the build's default.
// `several`: `run` also takes `both` (every API of the build) or a list, `d3d12,vulkan`.
void add_api_option(CLI::App& command, std::string& api, bool several = false);
// --api's APIs, in the order given (`both`: as build_apis() has them); refused in one line: a
// name this build lacks, a name given twice, `both` in a build with one API.
Result<std::vector<GpuApiKind>> parse_apis(const std::string& api);
Result<std::unique_ptr<GpuApi>> open_api(const std::string& api, bool validation,
                                         bool synchronization = false);

// The status of a run of several parts (devices, APIs) from each part's: the first that
// failed, unless one was interrupted (an interruption ends them all).
int worst_status(const std::vector<int>& statuses);

// The device for a command that runs work: chosen, announced on stderr.
Result<DeviceChoice> pick_device(const GpuApi& api, const std::string& wanted);
// The devices of `run --device` (each occurrence of the option one request; see
// choose_devices), chosen without a word: `announce_devices` says them once the output folder
// is made.
Result<DeviceChoices> pick_devices(const GpuApi& api, const std::vector<std::string>& requests);
void announce_devices(const GpuApi& api, const DeviceChoices& choices);

// After a device was abandoned with work possibly still running on it, tearing down the
// instance or unloading the driver under it can crash. Every result file is already written
// (fsync + rename), so the process ends here.
int finish(const ScenarioExecutor& executor, int status);
int finish(const std::vector<std::unique_ptr<ScenarioExecutor>>& executors, int status);

// The output folder before any GPU work (core/output_directory.h). On a later failure before
// anything is measured, a folder this created and left empty is removed again.
struct PreparedOutput {
  std::filesystem::path path;
  bool existed = false;
  void discard_if_empty() const;
};

Result<PreparedOutput> prepare_output(const std::filesystem::path& path, bool replace,
                                      std::uint64_t needed_bytes);

}  // namespace gpuoverlap::commands
