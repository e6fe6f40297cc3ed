// The Vulkan instance and what it can say about its devices (for `gpuoverlap devices`, device
// selection and meta.json). Owns the optional validation messenger.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "queues/device_selection.h"
#include "queues/queue_mapping.h"

namespace gpuoverlap::vk {

struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceDriverProperties driver{};
  VkPhysicalDeviceIDProperties id{};  // deviceUUID: which GPU of a host, across runs
  // The PCI address where VK_EXT_pci_bus_info is supported (pci_bus_info: false otherwise).
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
  bool pci_bus_info = false;
  std::vector<VkQueueFamilyProperties> families;
  std::vector<std::string> extensions;
  bool global_priority = false;        // VK_KHR_ or VK_EXT_global_priority
  bool calibrated_timestamps = false;  // VK_EXT_calibrated_timestamps
  bool shader_clock = false;           // VK_KHR_shader_clock

  bool has_extension(const char* name) const;
  DeviceCandidate candidate() const;
  std::vector<QueueFamilyDescription> family_descriptions() const;
  nlohmann::json describe() const;  // identity, driver, API version (meta.json "device")
};

class Instance {
 public:
  // `validation`: enable VK_LAYER_KHRONOS_validation and count its errors (fails when the
  // layer is not installed); `synchronization`: also its synchronization validation, whose
  // hazards (message ids SYNC-*) are counted separately too.
  static Result<std::unique_ptr<Instance>> create(bool validation, bool synchronization = false);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  const std::vector<PhysicalDeviceInfo>& devices() const { return devices_; }
  std::uint32_t validation_errors() const { return validation_errors_.load(); }
  std::uint32_t sync_hazards() const { return sync_hazards_.load(); }
  bool validation_enabled() const { return messenger_ != VK_NULL_HANDLE; }
  bool sync_validation_enabled() const { return sync_validation_; }

 private:
  Instance() = default;
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* user);
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<PhysicalDeviceInfo> devices_;
  std::atomic<std::uint32_t> validation_errors_{0};
  std::atomic<std::uint32_t> sync_hazards_{0};
  bool sync_validation_ = false;
};

std::string device_type_name(VkPhysicalDeviceType type);
std::string queue_flags_text(VkQueueFlags flags);

}  // namespace gpuoverlap::vk
