// Which device a run uses: `--device INDEX|NAME-SUBSTRING`, or by default the first discrete
// GPU, else the first integrated GPU, else anything else (lavapipe, a CPU device), saying why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpuoverlap {

enum class DeviceClass { discrete_gpu, integrated_gpu, virtual_gpu, cpu, other };

struct DeviceCandidate {
  std::string name;
  DeviceClass device_class = DeviceClass::other;
};

struct DeviceChoice {
  std::size_t index = 0;
  std::string reason;  // for the user, e.g. "first discrete GPU"
};

// `request` empty: the default rule. All digits: an index. Otherwise a case-insensitive
// substring of the name, which must match exactly one device.
Result<DeviceChoice> choose_device(const std::vector<DeviceCandidate>& candidates,
                                   const std::string& request);

}  // namespace gpuoverlap
