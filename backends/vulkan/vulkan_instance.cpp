#include "backends/vulkan/vulkan_instance.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>

#include "backends/vulkan/vk_check.h"

namespace gpuoverlap::vk {

bool PhysicalDeviceInfo::has_extension(const char* name) const {
  for (const auto& e : extensions)
    if (e == name) return true;
  return false;
}

DeviceCandidate PhysicalDeviceInfo::candidate() const {
  DeviceClass c = DeviceClass::other;
  switch (properties.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      c = DeviceClass::discrete_gpu;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      c = DeviceClass::integrated_gpu;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      c = DeviceClass::virtual_gpu;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      c = DeviceClass::cpu;
      break;
    default:
      break;
  }
  return DeviceCandidate{properties.deviceName, c};
}

std::vector<QueueFamilyDescription> PhysicalDeviceInfo::family_descriptions() const {
  std::vector<QueueFamilyDescription> out;
  for (const auto& f : families)
    out.push_back({(f.queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0,
                   (f.queueFlags & VK_QUEUE_COMPUTE_BIT) != 0, f.queueCount, f.timestampValidBits});
  return out;
}

std::string device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

std::string queue_flags_text(VkQueueFlags flags) {
  std::string text;
  auto add = [&](VkQueueFlags bit, const char* name) {
    if (!(flags & bit)) return;
    if (!text.empty()) text += '|';
    text += name;
  };
  add(VK_QUEUE_GRAPHICS_BIT, "GRAPHICS");
  add(VK_QUEUE_COMPUTE_BIT, "COMPUTE");
  add(VK_QUEUE_TRANSFER_BIT, "TRANSFER");
  add(VK_QUEUE_SPARSE_BINDING_BIT, "SPARSE");
  add(VK_QUEUE_PROTECTED_BIT, "PROTECTED");
  return text.empty() ? "NONE" : text;
}

nlohmann::json PhysicalDeviceInfo::describe() const {
  const auto api = properties.apiVersion;
  std::string uuid;
  for (std::size_t i = 0; i < VK_UUID_SIZE; ++i)
    uuid +=
        fmt::format("{}{:02x}", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", id.deviceUUID[i]);
  nlohmann::json out = {
      {"name", properties.deviceName},
      {"api", "Vulkan"},
      {"type", device_type_name(properties.deviceType)},
      {"vendor_id", properties.vendorID},
      {"device_id", properties.deviceID},
      {"api_version", std::to_string(VK_API_VERSION_MAJOR(api)) + "." +
                          std::to_string(VK_API_VERSION_MINOR(api)) + "." +
                          std::to_string(VK_API_VERSION_PATCH(api))},
      {"driver_name", driver.driverName},
      {"driver_info", driver.driverInfo},
      {"driver_version_raw", properties.driverVersion},
      {"timestamp_period_ns", properties.limits.timestampPeriod},
      {"uuid", uuid},
  };
  // Which adapter of a Windows machine, as D3D12 names it (`luid`: HighPart-LowPart): the key
  // that matches this device to D3D12's (run --api both). Drivers on Windows set it.
  if (id.deviceLUIDValid) {
    std::uint32_t low = 0, high = 0;
    std::memcpy(&low, id.deviceLUID, 4);
    std::memcpy(&high, id.deviceLUID + 4, 4);
    out["luid"] = fmt::format("{:08x}-{:08x}", high, low);
  }
  // Domain:bus:device.function, as lspci and nvidia-smi print it.
  if (pci_bus_info)
    out["pci_address"] = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.pciDomain, pci.pciBus,
                                     pci.pciDevice, pci.pciFunction);
  return out;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Instance::on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    auto* self = static_cast<Instance*>(user);
    self->validation_errors_.fetch_add(1);
    if (data->pMessageIdName && std::strncmp(data->pMessageIdName, "SYNC-", 5) == 0)
      self->sync_hazards_.fetch_add(1);
    std::fprintf(stderr, "validation error: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

Result<std::unique_ptr<Instance>> Instance::create(bool validation, bool synchronization) {
  std::unique_ptr<Instance> self(new Instance());
  validation = validation || synchronization;
  self->sync_validation_ = synchronization;
  const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
  // VK_EXT_validation_features is provided by the validation layer itself.
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                              VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  if (validation) {
    std::uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    vkEnumerateInstanceLayerProperties(&count, available.data());
    bool found = false;
    for (const auto& l : available) found = found || std::strcmp(l.layerName, layers[0]) == 0;
    if (!found)
      return make_error(
          "--validation needs VK_LAYER_KHRONOS_validation (Debian: vulkan-validationlayers)");
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpuoverlap";
  app.apiVersion = VK_API_VERSION_1_3;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  messenger_info.messageType =
      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  messenger_info.pfnUserCallback = &Instance::on_message;
  messenger_info.pUserData = self.get();
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  const VkValidationFeatureEnableEXT sync_feature =
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, &messenger_info};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync_feature;
  if (validation) {
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = layers;
    info.enabledExtensionCount = synchronization ? 2 : 1;
    info.ppEnabledExtensionNames = extensions;
    info.pNext = &messenger_info;
    if (synchronization) info.pNext = &features;
  }
  GPUOVERLAP_VK(vkCreateInstance(&info, nullptr, &self->instance_));
  if (validation) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(self->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger)
      GPUOVERLAP_VK(create_messenger(self->instance_, &messenger_info, nullptr, &self->messenger_));
  }

  std::uint32_t count = 0;
  GPUOVERLAP_VK(vkEnumeratePhysicalDevices(self->instance_, &count, nullptr));
  std::vector<VkPhysicalDevice> handles(count);
  GPUOVERLAP_VK(vkEnumeratePhysicalDevices(self->instance_, &count, handles.data()));
  for (VkPhysicalDevice handle : handles) {
    PhysicalDeviceInfo d;
    d.handle = handle;
    std::uint32_t ext_count = 0;
    vkEnumerateDeviceExtensionProperties(handle, nullptr, &ext_count, nullptr);
    std::vector<VkExtensionProperties> exts(ext_count);
    vkEnumerateDeviceExtensionProperties(handle, nullptr, &ext_count, exts.data());
    for (const auto& e : exts) d.extensions.emplace_back(e.extensionName);
    d.pci_bus_info = d.has_extension(VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
    d.driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    d.id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    d.pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
    d.driver.pNext = &d.id;
    if (d.pci_bus_info) d.id.pNext = &d.pci;
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &d.driver};
    vkGetPhysicalDeviceProperties2(handle, &props);
    // The chain points into `d`, which moves into the list below.
    d.driver.pNext = nullptr;
    d.id.pNext = nullptr;
    d.properties = props.properties;
    std::uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(handle, &family_count, nullptr);
    d.families.resize(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(handle, &family_count, d.families.data());
    d.global_priority = d.has_extension(VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME) ||
                        d.has_extension(VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME);
    d.calibrated_timestamps = d.has_extension(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    d.shader_clock = d.has_extension(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);
    self->devices_.push_back(std::move(d));
  }
  return self;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

}  // namespace gpuoverlap::vk
