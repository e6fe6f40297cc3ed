#include "backends/d3d12/d3d12_api.h"

#include <fmt/format.h>

#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "backends/d3d12/com_ptr.h"
#include "backends/d3d12/d3d12_headers.h"
#include "backends/d3d12/hresult.h"
#include "backends/d3d12/scenario_device.h"
#include "core/wine.h"
#include "engine/device_executor.h"

namespace gpuoverlap::d3d12 {
namespace {

std::string utf8(const wchar_t* text) {
  const int bytes = WideCharToMultiByte(CP_UTF8, 0, text, -1, nullptr, 0, nullptr, nullptr);
  if (bytes <= 1) return {};
  std::string out(static_cast<std::size_t>(bytes - 1), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text, -1, out.data(), bytes, nullptr, nullptr);
  return out;
}

std::string unsupported(const std::string& what, HRESULT result) {
  return what + ": unsupported by this runtime (" + hresult_name(result) + ")";
}

std::string feature_level_name(D3D_FEATURE_LEVEL level) {
  const unsigned value = static_cast<unsigned>(level);
  return fmt::format("{}_{}", value >> 12, (value >> 8) & 0xf);
}

// The user-mode driver's version, as DXGI reports it (a.b.c.d), or "" when it does not.
std::string driver_version(IDXGIAdapter1* adapter) {
  LARGE_INTEGER version{};
  if (FAILED(adapter->CheckInterfaceSupport(__uuidof(IDXGIDevice), &version))) return {};
  const auto v = static_cast<unsigned long long>(version.QuadPart);
  return fmt::format("{}.{}.{}.{}", v >> 48, (v >> 32) & 0xffff, (v >> 16) & 0xffff, v & 0xffff);
}

// What this runtime can do on `device`, as facts and notes.
void probe_device(ID3D12Device* device, DeviceFacts& facts, nlohmann::json& support) {
  const D3D_FEATURE_LEVEL wanted[] = {D3D_FEATURE_LEVEL_12_2, D3D_FEATURE_LEVEL_12_1,
                                      D3D_FEATURE_LEVEL_12_0, D3D_FEATURE_LEVEL_11_1,
                                      D3D_FEATURE_LEVEL_11_0};
  D3D12_FEATURE_DATA_FEATURE_LEVELS levels{static_cast<UINT>(std::size(wanted)), wanted,
                                           D3D_FEATURE_LEVEL_11_0};
  device->CheckFeatureSupport(D3D12_FEATURE_FEATURE_LEVELS, &levels, sizeof levels);
  facts.description["api_version"] =
      "feature level " + feature_level_name(levels.MaxSupportedFeatureLevel);

  D3D12_FEATURE_DATA_ARCHITECTURE architecture{};
  device->CheckFeatureSupport(D3D12_FEATURE_ARCHITECTURE, &architecture, sizeof architecture);
  facts.description["uma"] = architecture.UMA != 0;

  auto record = [&](const char* key, bool supported, const std::string& reason) {
    support[key] = supported ? nlohmann::json{{"supported", true}}
                             : nlohmann::json{{"supported", false}, {"reason", reason}};
    if (!supported) facts.notes.push_back(reason);
  };

  D3D12_FEATURE_DATA_D3D12_OPTIONS12 options12{};
  const HRESULT options12_result =
      device->CheckFeatureSupport(D3D12_FEATURE_D3D12_OPTIONS12, &options12, sizeof options12);
  record("enhanced_barriers", SUCCEEDED(options12_result) && options12.EnhancedBarriersSupported,
         FAILED(options12_result)
             ? unsupported("enhanced barriers (D3D12_OPTIONS12)", options12_result)
             : "enhanced barriers: EnhancedBarriersSupported is FALSE on this device");

  ComPtr<ID3D12Device6> device6;
  const HRESULT device6_result =
      device->QueryInterface(__uuidof(ID3D12Device6), device6.receive_void());
  record("background_processing", SUCCEEDED(device6_result),
         unsupported("SetBackgroundProcessingMode (no ID3D12Device6)", device6_result));

  // Queue priorities: HIGH is any application's; GLOBAL_REALTIME needs a privilege the
  // runtime may refuse.
  auto try_queue = [&](D3D12_COMMAND_LIST_TYPE type, INT priority, ComPtr<ID3D12CommandQueue>& q) {
    D3D12_COMMAND_QUEUE_DESC desc{};
    desc.Type = type;
    desc.Priority = priority;
    return device->CreateCommandQueue(&desc, __uuidof(ID3D12CommandQueue), q.receive_void());
  };
  ComPtr<ID3D12CommandQueue> high, realtime, direct;
  const HRESULT high_result =
      try_queue(D3D12_COMMAND_LIST_TYPE_COMPUTE, D3D12_COMMAND_QUEUE_PRIORITY_HIGH, high);
  const HRESULT realtime_result = try_queue(D3D12_COMMAND_LIST_TYPE_COMPUTE,
                                            D3D12_COMMAND_QUEUE_PRIORITY_GLOBAL_REALTIME, realtime);
  record("high_priority", SUCCEEDED(high_result), unsupported("queue priority HIGH", high_result));
  record("global_realtime", SUCCEEDED(realtime_result),
         unsupported("queue priority GLOBAL_REALTIME", realtime_result));
  facts.global_priority = SUCCEEDED(realtime_result);
  facts.priorities = std::string(SUCCEEDED(high_result) ? "normal/high" : "normal") +
                     (SUCCEEDED(realtime_result)
                          ? "/global realtime"
                          : ", not GLOBAL_REALTIME (" + hresult_name(realtime_result) + ")");

  if (SUCCEEDED(
          try_queue(D3D12_COMMAND_LIST_TYPE_DIRECT, D3D12_COMMAND_QUEUE_PRIORITY_NORMAL, direct))) {
    UINT64 frequency = 0;
    if (SUCCEEDED(direct->GetTimestampFrequency(&frequency)) && frequency)
      facts.description["timestamp_frequency_hz"] = frequency;
    UINT64 gpu_ticks = 0, cpu_ticks = 0;
    const HRESULT calibration = direct->GetClockCalibration(&gpu_ticks, &cpu_ticks);
    // A runtime without a CPU time domain answers S_OK with two zeros (Wine 8).
    const bool calibrated = SUCCEEDED(calibration) && (gpu_ticks != 0 || cpu_ticks != 0);
    record("clock_calibration", calibrated,
           FAILED(calibration)
               ? unsupported("GetClockCalibration", calibration)
               : "GetClockCalibration: returns 0/0, unsupported by this runtime (no CPU time "
                 "domain): timestamps cannot be placed on the CPU clock");
    facts.calibrated_timestamps = calibrated;
  }
}

// One adapter's DeviceBackend: a D3D12 device per scenario (a queue's priority is fixed when
// it is created, and a scenario's objects are freed with it).
class D3D12Device final : public DeviceBackend {
 public:
  D3D12Device(IDXGIAdapter1* adapter, std::size_t index, nlohmann::json description,
              bool debug_layer)
      : adapter_(ComPtr<IDXGIAdapter1>::retain(adapter)),
        index_(index),
        description_(std::move(description)),
        debug_layer_(debug_layer) {}
  // Every scenario creates its own device (`reuse` aside): no D3D12 device is kept between
  // scenarios.
  Result<std::unique_ptr<ScenarioBackend>> open_scenario(const Scenario& scenario,
                                                         const RunSettings& settings,
                                                         DeviceReuse) override {
    auto device = std::make_unique<ScenarioDevice>(adapter_.get(), scenario, settings);
    if (Status s = device->create(); !s) {
      abandoned_device_ = abandoned_device_ || device->gpu_may_be_busy();
      return s.error();
    }
    return std::unique_ptr<ScenarioBackend>(std::move(device));
  }
  Result<PingPongResult> ping_pong(std::uint32_t, StampMemory, RoundTripPath path,
                                   std::uint32_t) override {
    return make_error(path == RoundTripPath::flag
                          ? "the ping-pong probe needs a shader that spins on host memory, which "
                            "the D3D12 backend does not have (it runs on Vulkan)"
                          : "the semaphore round trip is built on Vulkan only (its D3D12 twin, a "
                            "fence signalled from the CPU, is not built)");
  }
  std::size_t device_index() const override { return index_; }
  ValidationMark validation_mark() const override { return {}; }
  void describe_run(ScenarioTimeline& timeline, const ValidationMark&) const override {
    timeline.meta["device"] = description_;
    timeline.meta["device"]["index"] = index_;
    timeline.meta["validation"] = {
        {"enabled", debug_layer_}, {"synchronization", false}, {"errors", 0}, {"sync_hazards", 0}};
    // The debug layer reports to the debugger's output; its messages are not counted yet.
    if (debug_layer_)
      timeline.meta["validation"]["note"] =
          "the D3D12 debug layer is on; its messages go to the debugger output and are not "
          "counted";
  }
  bool abandoned_device() const override { return abandoned_device_; }

 private:
  ComPtr<IDXGIAdapter1> adapter_;
  std::size_t index_;
  nlohmann::json description_;
  bool debug_layer_;
  bool abandoned_device_ = false;
};

class D3D12Api final : public GpuApi {
 public:
  D3D12Api(std::vector<DeviceFacts> devices, std::vector<ComPtr<IDXGIAdapter1>> adapters,
           bool debug_layer)
      : devices_(std::move(devices)), adapters_(std::move(adapters)), debug_layer_(debug_layer) {}
  std::string name() const override { return "D3D12"; }
  const std::vector<DeviceFacts>& devices() const override { return devices_; }
  std::unique_ptr<ScenarioExecutor> executor(std::size_t index) override {
    return std::make_unique<DeviceExecutor>(
        std::make_unique<D3D12Device>(adapters_.at(index).get(), index,
                                      devices_.at(index).description, debug_layer_),
        GpuApiKind::d3d12);
  }

 private:
  std::vector<DeviceFacts> devices_;
  std::vector<ComPtr<IDXGIAdapter1>> adapters_;  // per device
  bool debug_layer_;
};

}  // namespace

Result<std::unique_ptr<GpuApi>> open_d3d12(const GpuApiOptions& options) {
  if (options.synchronization_validation)
    return make_error(
        "--sync-validation is Vulkan's synchronization validation; the D3D12 build has none "
        "(--validation enables the D3D12 debug layer)");
  if (options.validation) {
    ComPtr<ID3D12Debug> debug;
    const HRESULT result = D3D12GetDebugInterface(__uuidof(ID3D12Debug), debug.receive_void());
    if (FAILED(result))
      return hresult_error(result, "the D3D12 debug layer (--validation): D3D12GetDebugInterface");
    debug->EnableDebugLayer();
  }
  ComPtr<IDXGIFactory1> factory;
  if (const HRESULT result = CreateDXGIFactory1(__uuidof(IDXGIFactory1), factory.receive_void());
      FAILED(result))
    return hresult_error(result, "cannot start D3D12: CreateDXGIFactory1");
  // Under Wine, d3d12.dll is Wine's builtin one: vkd3d translating to the Vulkan driver.
  const std::optional<std::string> wine = wine_version();
  const std::string runtime =
      wine ? "Wine " + *wine + " d3d12.dll (vkd3d on Vulkan)" : "Microsoft D3D12 runtime";
  std::vector<DeviceFacts> devices;
  std::vector<ComPtr<IDXGIAdapter1>> adapters;
  for (UINT index = 0;; ++index) {
    ComPtr<IDXGIAdapter1> adapter;
    if (factory->EnumAdapters1(index, adapter.receive()) == DXGI_ERROR_NOT_FOUND) break;
    DXGI_ADAPTER_DESC1 desc{};
    adapter->GetDesc1(&desc);
    DeviceFacts facts;
    facts.candidate.name = utf8(desc.Description);
    facts.driver_name = "D3D12 user-mode driver";
    facts.driver_info = driver_version(adapter.get());
    facts.description = {
        {"name", facts.candidate.name},
        {"vendor_id", desc.VendorId},
        {"device_id", desc.DeviceId},
        {"dedicated_video_memory_mib", desc.DedicatedVideoMemory >> 20},
        {"driver_name", facts.driver_name},
        {"driver_info", facts.driver_info},
        {"api", "D3D12"},
        {"runtime", runtime},
        // Which adapter of the machine, until it restarts (D3D12 has no UUID).
        {"luid", fmt::format("{:08x}-{:08x}", static_cast<std::uint32_t>(desc.AdapterLuid.HighPart),
                             desc.AdapterLuid.LowPart)}};
    ComPtr<ID3D12Device> device;
    const HRESULT created = D3D12CreateDevice(adapter.get(), D3D_FEATURE_LEVEL_11_0,
                                              __uuidof(ID3D12Device), device.receive_void());
    nlohmann::json support = nlohmann::json::object();
    if (FAILED(created)) {
      facts.notes.push_back(unsupported("D3D12CreateDevice at feature level 11_0", created));
      facts.description["api_version"] = "none";
    } else {
      probe_device(device.get(), facts, support);
    }
    const bool software = (desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) != 0;
    const bool uma = facts.description.value("uma", false);
    facts.candidate.device_class = software ? DeviceClass::cpu
                                   : uma    ? DeviceClass::integrated_gpu
                                            : DeviceClass::discrete_gpu;
    facts.description["type"] = software ? "software" : uma ? "integrated" : "discrete";
    facts.description["support"] = support;
    // D3D12 has queue types, not families: any number of queues of each may be created.
    for (const char* type : {"DIRECT", "COMPUTE", "COPY"})
      facts.queue_families.push_back({type, 0, 64});
    if (FAILED(created)) {
      std::fprintf(stderr, "D3D12: adapter '%s' left out: %s\n", facts.candidate.name.c_str(),
                   facts.notes.back().c_str());
      continue;
    }
    devices.push_back(std::move(facts));
    adapters.push_back(std::move(adapter));
  }
  return std::unique_ptr<GpuApi>(
      std::make_unique<D3D12Api>(std::move(devices), std::move(adapters), options.validation));
}

}  // namespace gpuoverlap::d3d12
