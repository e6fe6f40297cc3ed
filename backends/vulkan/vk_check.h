// VkResult -> Error, the one way Vulkan failures enter the rest of the program.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

#include "core/result.h"

namespace gpuoverlap::vk {

const char* result_name(VkResult result);

inline Error vk_error(VkResult result, const std::string& call) {
  return Error{call + " failed: " + result_name(result), static_cast<std::int64_t>(result),
               result_name(result)};
}

}  // namespace gpuoverlap::vk

// Returns an Error from the enclosing function when a Vulkan call fails.
#define GPUOVERLAP_VK(call)                                            \
  do {                                                                 \
    const VkResult gpuoverlap_vk_result_ = (call);                     \
    if (gpuoverlap_vk_result_ != VK_SUCCESS)                           \
      return ::gpuoverlap::vk::vk_error(gpuoverlap_vk_result_, #call); \
  } while (0)
