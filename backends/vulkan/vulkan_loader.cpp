#include "backends/vulkan/vulkan_loader.h"

#if defined(_WIN32)
#include <windows.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "vulkan_entry_points.h"  // generated from entry_points.txt: kVulkanEntryPoints
#endif

namespace gpuoverlap::vk {

#if defined(_WIN32)

namespace {

Status check_vulkan_loader() {
  // Kept loaded for the life of the process: the delay-loaded calls resolve to this module.
  const HMODULE loader = LoadLibraryW(L"vulkan-1.dll");
  if (!loader)
    return make_error(fmt::format("Vulkan is not installed on this machine: vulkan-1.dll (the "
                                  "Vulkan loader a GPU driver installs) could not be loaded "
                                  "(Windows error {}); --api d3d12 runs the D3D12 backend",
                                  GetLastError()),
                      ErrorCategory::environment);
  std::vector<std::string> missing;
  for (const char* name : kVulkanEntryPoints)
    if (!GetProcAddress(loader, name)) missing.push_back(name);
  if (!missing.empty())
    return make_error(fmt::format("this machine's Vulkan loader (vulkan-1.dll) lacks {} of the "
                                  "functions gpuoverlap calls ({}{}): it needs a Vulkan 1.3 loader",
                                  missing.size(), missing.front(), missing.size() > 1 ? ", ..." : ""),
                      ErrorCategory::environment);
  return ok_status();
}

}  // namespace

Status open_vulkan_loader() {
  static const Status answer = check_vulkan_loader();
  return answer;
}

#else

Status open_vulkan_loader() { return ok_status(); }

#endif

}  // namespace gpuoverlap::vk
