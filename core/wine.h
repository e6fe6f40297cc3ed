// Whether this process runs under Wine, and which: a D3D12 runtime under Wine is Wine's own
// (vkd3d on a Vulkan driver), not a Windows driver's, and results must say so.
#pragma once

#include <optional>
#include <string>

namespace gpuoverlap {

// "8.0" under Wine; nullopt on Windows itself and on every other platform.
std::optional<std::string> wine_version();

}  // namespace gpuoverlap
