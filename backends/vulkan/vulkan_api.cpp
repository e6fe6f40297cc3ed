#include "backends/vulkan/vulkan_api.h"

#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_instance.h"
#include "backends/vulkan/vulkan_loader.h"

namespace gpuoverlap::vk {
namespace {

DeviceFacts facts_of(const PhysicalDeviceInfo& d) {
  DeviceFacts facts;
  facts.candidate = d.candidate();
  facts.driver_name = d.driver.driverName;
  facts.driver_info = d.driver.driverInfo;
  facts.description = d.describe();
  for (const VkQueueFamilyProperties& f : d.families)
    facts.queue_families.push_back(
        {queue_flags_text(f.queueFlags), f.queueCount, f.timestampValidBits});
  facts.global_priority = d.global_priority;
  facts.priorities = d.global_priority ? "normal/high/realtime (global priority)"
                                       : "normal only (no global priority extension)";
  facts.calibrated_timestamps = d.calibrated_timestamps;
  facts.shader_clock = d.shader_clock;
  return facts;
}

class VulkanApi final : public GpuApi {
 public:
  explicit VulkanApi(std::unique_ptr<Instance> instance) : instance_(std::move(instance)) {
    for (const PhysicalDeviceInfo& d : instance_->devices()) devices_.push_back(facts_of(d));
  }
  std::string name() const override { return "Vulkan"; }
  const std::vector<DeviceFacts>& devices() const override { return devices_; }
  std::unique_ptr<ScenarioExecutor> executor(std::size_t index) override {
    return std::make_unique<DeviceExecutor>(std::make_unique<VulkanDevice>(*instance_, index),
                                            GpuApiKind::vulkan);
  }
  std::uint32_t validation_errors() const override { return instance_->validation_errors(); }
  std::uint32_t sync_hazards() const override { return instance_->sync_hazards(); }

 private:
  std::unique_ptr<Instance> instance_;
  std::vector<DeviceFacts> devices_;
};

}  // namespace

Result<std::unique_ptr<GpuApi>> open_vulkan(const GpuApiOptions& options) {
  // Without a loader the Windows build says so itself (vulkan_loader.h), in a line of its own.
  GPUOVERLAP_TRY(open_vulkan_loader());
  auto instance = Instance::create(options.validation, options.synchronization_validation);
  if (!instance)
    return instance.error().with_context(
#if defined(_WIN32)
        "cannot start Vulkan (is a GPU driver with Vulkan installed?): ");
#else
        "cannot start Vulkan (is a driver installed? Debian: mesa-vulkan-drivers): ");
#endif
  return std::unique_ptr<GpuApi>(std::make_unique<VulkanApi>(std::move(*instance)));
}

}  // namespace gpuoverlap::vk
