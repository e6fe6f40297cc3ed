// One GPU API, opened: the devices it offers, as facts every command can print, and an
// executor per device. What app/ sees of a backend; a backend implements it in backends/<api>/
// and backends/backends.h opens one. API neutral: no GPU API type appears here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/executor.h"
#include "queues/device_selection.h"

namespace gpuoverlap {

struct QueueFamilyFacts {
  std::string flags;  // e.g. "GRAPHICS|COMPUTE|TRANSFER"
  std::uint32_t queues = 0;
  std::uint32_t timestamp_valid_bits = 0;
};

// What `gpuoverlap devices` lists and the device choice and meta.json use.
struct DeviceFacts {
  DeviceCandidate candidate;   // name and class, for choose_device
  std::string driver_name;     // as the driver names itself
  std::string driver_info;     // its version text
  nlohmann::json description;  // meta.json "device": identity, driver, API version
  std::vector<QueueFamilyFacts> queue_families;
  bool global_priority = false;        // queues above normal priority can be asked for
  std::string priorities;              // which priorities a queue can get, for `devices`
  bool calibrated_timestamps = false;  // GPU ticks can be placed on the CPU clock
  bool shader_clock = false;           // the shaders can read a device clock
  // What the device or its runtime lacks that a scenario may ask for, one line each (e.g.
  // "queue priority GLOBAL_REALTIME: unsupported by this runtime (E_NOTIMPL)").
  std::vector<std::string> notes;
};

class GpuApi {
 public:
  virtual ~GpuApi() = default;

  virtual std::string name() const = 0;  // "Vulkan"
  virtual const std::vector<DeviceFacts>& devices() const = 0;
  // An executor on device `index`. Contract: index < devices().size(); the executor does not
  // outlive this object.
  virtual std::unique_ptr<ScenarioExecutor> executor(std::size_t index) = 0;

  // The API's own validation (off unless asked for when opening): errors counted since it was
  // opened, and how many of them were synchronization hazards.
  virtual std::uint32_t validation_errors() const { return 0; }
  virtual std::uint32_t sync_hazards() const { return 0; }
};

// The GPU APIs a build may have (backends/backends.h says which this one has). Their names on
// the command line (`--api`) are the option names below.
enum class GpuApiKind { vulkan, d3d12 };

inline const char* api_option_name(GpuApiKind api) {
  return api == GpuApiKind::vulkan ? "vulkan" : "d3d12";
}
inline std::optional<GpuApiKind> parse_api_option(std::string_view name) {
  if (name == "vulkan") return GpuApiKind::vulkan;
  if (name == "d3d12") return GpuApiKind::d3d12;
  return std::nullopt;
}

// How to open an API.
struct GpuApiOptions {
  std::optional<GpuApiKind> api;            // empty: the build's default (default_api())
  bool validation = false;                  // the API's validation layer; fails without it
  bool synchronization_validation = false;  // its synchronization checks too
};

}  // namespace gpuoverlap
