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

Result<DeviceChoices> choose_devices(const std::vector<DeviceCandidate>& candidates,
                                     const std::vector<std::string>& requests) {
  DeviceChoices out;
  if (requests.empty()) {
    auto one = choose_device(candidates, "");
    if (!one) return one.error();
    out.devices.push_back(*one);
    return out;
  }
  if (candidates.empty()) return choose_device(candidates, "").error();
  if (requests.size() > 1) {
    std::string given;
    for (const std::string& r : requests) given += (given.empty() ? "'" : ", '") + r + "'";
    return make_error(
        "--device is given " + std::to_string(requests.size()) + " times (" + given +
        "): give one, a list such as --device 0,1, or all (devices: " + list_of(candidates) + ")");
  }
  const std::string& request = requests.front();
  if (request.empty())
    return make_error("--device: an empty list (devices: " + list_of(candidates) + ")");
  if (lower(request) == "all") {
    out.several = true;
    for (std::size_t i = 0; i < candidates.size(); ++i)
      if (candidates[i].device_class != DeviceClass::cpu &&
          candidates[i].device_class != DeviceClass::other)
        out.devices.push_back({i, "every GPU (--device all)"});
    if (out.devices.empty())
      for (std::size_t i = 0; i < candidates.size(); ++i)
        out.devices.push_back({i, "every device (--device all; no GPU found)"});
    return out;
  }
  if (request.find(',') == std::string::npos) {
    auto one = choose_device(candidates, request);
    if (!one) return one.error();
    out.devices.push_back(*one);
    return out;
  }
  out.several = true;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = request.find(',', begin);
    const std::string entry =
        request.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (entry.empty())
      return make_error("--device " + request +
                        ": an empty entry (devices: " + list_of(candidates) + ")");
    auto one = choose_device(candidates, entry);
    if (!one) return one.error().with_context("--device " + request + ": ");
    for (const DeviceChoice& earlier : out.devices)
      if (earlier.index == one->index)
        return make_error("--device " + request + ": device " + std::to_string(one->index) +
                          " is named twice (devices: " + list_of(candidates) + ")");
    out.devices.push_back({one->index, "requested in a list"});
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

}  // namespace gpuoverlap
