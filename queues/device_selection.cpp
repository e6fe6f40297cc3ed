#include "queues/device_selection.h"

#include <algorithm>
#include <cctype>

namespace gpuoverlap {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string list_of(const std::vector<DeviceCandidate>& candidates) {
  std::string list;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    list += (i ? ", " : "") + std::to_string(i) + ": " + candidates[i].name;
  return list;
}

}  // namespace

Result<DeviceChoice> choose_device(const std::vector<DeviceCandidate>& candidates,
                                   const std::string& request) {
  // No device at all is the machine's failure; a request that names none (below) the input's.
  if (candidates.empty())
    return make_error(
        "no Vulkan device found (install a driver, or mesa-vulkan-drivers for lavapipe)",
        ErrorCategory::environment);
  if (request.empty()) {
    const std::pair<DeviceClass, const char*> order[] = {
        {DeviceClass::discrete_gpu, "first discrete GPU"},
        {DeviceClass::integrated_gpu, "first integrated GPU (no discrete GPU found)"},
        {DeviceClass::virtual_gpu, "first virtual GPU (no physical GPU found)"},
        {DeviceClass::cpu, "software device (no GPU found)"},
        {DeviceClass::other, "only device found"}};
    for (const auto& [device_class, reason] : order)
      for (std::size_t i = 0; i < candidates.size(); ++i)
        if (candidates[i].device_class == device_class) return DeviceChoice{i, reason};
  }
  if (!request.empty() && std::all_of(request.begin(), request.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; })) {
    const std::size_t index = std::stoul(request);
    if (index >= candidates.size())
      return make_error("--device " + request +
                        ": no such device index (devices: " + list_of(candidates) + ")");
    return DeviceChoice{index, "requested by index"};
  }
  std::vector<std::size_t> matches;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (lower(candidates[i].name).find(lower(request)) != std::string::npos) matches.push_back(i);
  if (matches.empty())
    return make_error("--device '" + request +
                      "' matches no device (devices: " + list_of(candidates) + ")");
  if (matches.size() > 1)
    return make_error("--device '" + request + "' matches several devices (devices: " +
                      list_of(candidates) + "); use an index");
  return DeviceChoice{matches.front(), "requested by name"};
}

}  // namespace gpuoverlap
