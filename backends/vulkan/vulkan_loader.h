// Whether this process can call Vulkan. The Linux build links the Vulkan loader, so it can
// whenever it started. The Windows build links the loader's functions delay-loaded
// (entry_points.txt): vulkan-1.dll is opened at the first call, and a call that cannot be
// resolved ends the process. So before any Vulkan call this opens the loader itself and checks
// that it has every function the backend calls; the .exe thus starts, and says in one line why
// Vulkan cannot be used, on a machine without Vulkan.
#pragma once

#include "core/result.h"

namespace gpuoverlap::vk {

// Contract: called before the first Vulkan call of the process (open_vulkan does, before it
// creates the instance every other call goes through); thread safe; the same answer each time.
Status open_vulkan_loader();

}  // namespace gpuoverlap::vk
