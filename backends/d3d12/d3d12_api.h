// D3D12 as a GpuApi (engine/gpu_api.h): DXGI's adapters, each probed through a D3D12 device
// for what this runtime supports (feature level, enhanced barriers, ID3D12Device6 background
// processing, queue priorities, clock calibration). What a runtime lacks is a note in the
// facts ("... unsupported by this runtime (E_NOTIMPL)"), never faked.
//
// Scenarios run on D3D12 as on Vulkan, from the same scenario files and with the same outputs
// (open_scenario gives a ScenarioDevice, scenario_device.h); only the self-test's ping-pong
// probe and the shader clock are missing here, each refused or n/a with the reason.
#pragma once

#include <memory>

#include "core/result.h"
#include "engine/gpu_api.h"

namespace gpuoverlap::d3d12 {

Result<std::unique_ptr<GpuApi>> open_d3d12(const GpuApiOptions& options);

}  // namespace gpuoverlap::d3d12
