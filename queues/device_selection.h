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

// What `--device` asks of a run, each occurrence of the option one entry of `requests`:
// - none: the one device of choose_device's default rule;
// - one request without a comma and other than "all": that device, as choose_device;
// - "all": every GPU (discrete, integrated, virtual); software devices such as lavapipe only
//   where there is no GPU;
// - "A,B,...": those devices in that order, each entry an index or a name substring.
// `several` says the run keeps each device's results in a folder of its own (all or a list,
// even of one device). Refused, naming the devices present: an empty list or entry, a device
// named twice, a device that does not exist, the option given twice.
struct DeviceChoices {
  std::vector<DeviceChoice> devices;
  bool several = false;
};
Result<DeviceChoices> choose_devices(const std::vector<DeviceCandidate>& candidates,
                                     const std::vector<std::string>& requests);

}  // namespace gpuoverlap
