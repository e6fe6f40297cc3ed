// The device of one scenario: features, the device and its queues (priorities by
// queues/priority_policy.h), the clocks, a frame's submission and wait.
#include "backends/vulkan/scenario_device.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/barrier_translation.h"
#include "backends/vulkan/vk_check.h"
#include "background/background_session.h"
#include "core/clock.h"
#include "queues/priority_policy.h"
#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"
#include "timeline/clock_conversion.h"

namespace gpuoverlap::vk {

namespace {

VkQueueGlobalPriorityKHR to_global_priority(QueuePriority p) {
  switch (p) {
    case QueuePriority::normal:
      return VK_QUEUE_GLOBAL_PRIORITY_MEDIUM_KHR;
    case QueuePriority::high:
      return VK_QUEUE_GLOBAL_PRIORITY_HIGH_KHR;
    case QueuePriority::realtime:
      return VK_QUEUE_GLOBAL_PRIORITY_REALTIME_KHR;
  }
  return VK_QUEUE_GLOBAL_PRIORITY_MEDIUM_KHR;
}

}  // namespace

Status ScenarioDevice::check_features() {
  if (VK_API_VERSION_MINOR(info_.properties.apiVersion) < 3 &&
      VK_API_VERSION_MAJOR(info_.properties.apiVersion) == 1)
    return make_error(std::string("device '") + info_.properties.deviceName + "' supports Vulkan " +
                      std::to_string(VK_API_VERSION_MINOR(info_.properties.apiVersion)) +
                      ".x; gpuoverlap needs Vulkan 1.3 (synchronization2, timeline semaphores, "
                      "dynamic rendering)");
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  vkGetPhysicalDeviceFeatures2(info_.handle, &f);
  std::string missing;
  if (!f13.synchronization2) missing += " synchronization2";
  if (!f13.dynamicRendering) missing += " dynamicRendering";
  if (!f12.timelineSemaphore) missing += " timelineSemaphore";
  if (!f.features.fragmentStoresAndAtomics) missing += " fragmentStoresAndAtomics";
  // A consumer reads texel (thread % 1024, 0) of its producer's subresource; a texture's mip may
  // be narrower, and robust image access makes those reads zero instead of undefined.
  if (!scenario_.textures.empty() && !f13.robustImageAccess)
    missing += " robustImageAccess (for the scenario's textures)";
  if (!missing.empty())
    return make_error(std::string("device '") + info_.properties.deviceName +
                      "' lacks required features:" + missing);
  // D32_SFLOAT is a required depth attachment format only where X8_D24 is not one: ask.
  for (const TextureSpec& texture : scenario_.textures) {
    if (!is_depth(texture.format)) continue;
    VkFormatProperties format{};
    vkGetPhysicalDeviceFormatProperties(info_.handle, VK_FORMAT_D32_SFLOAT, &format);
    const VkFormatFeatureFlags needed = VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT |
                                        VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT |
                                        VK_FORMAT_FEATURE_TRANSFER_SRC_BIT;
    if ((format.optimalTilingFeatures & needed) != needed)
      return make_error(std::string("device '") + info_.properties.deviceName +
                            "' cannot use D32_SFLOAT as a sampled depth attachment that copies "
                            "read (texture '" +
                            texture.name + "' is d32)",
                        ErrorCategory::unsupported);
    break;
  }
  if (info_.shader_clock) {
    VkPhysicalDeviceShaderClockFeaturesKHR clock{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 clock_query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &clock};
    vkGetPhysicalDeviceFeatures2(info_.handle, &clock_query);
    facts_.shader_clock.device_scope = clock.shaderDeviceClock == VK_TRUE;
  }
  ShaderClockFacts& clock = facts_.shader_clock;
  clock.extension = info_.shader_clock;
  // A bound variant is compiled at run time, where the build's shader-clock patch
  // (workloads/patch_shader_clock.py) cannot run: its stamps would carry no clock.
  const bool binds_variants = scenario_.background && scenario_.background->bind_committed;
  clock.recorded =
      clock.device_scope && settings_.shader_clock && settings_.stamping && !binds_variants;
  if (!clock.recorded)
    clock.reason = !info_.shader_clock   ? "the device has no VK_KHR_shader_clock"
                   : !clock.device_scope ? "the device has no device-scope shader clock"
                   : !settings_.stamping ? "stamping is off"
                   : binds_variants      ? "committed variants are bound (bind_committed): a "
                                           "run-time compile cannot read the shader clock"
                                         : "not requested";
  return ok_status();
}

std::string ScenarioDevice::device_key() const {
  nlohmann::json queues = nlohmann::json::array();
  for (const QueueSpec& q : scenario_.queues)
    queues.push_back({q.name, to_string(q.type), to_string(q.priority)});
  return nlohmann::json{{"queues", queues},
                        {"priority_fallback", settings_.priority_fallback},
                        {"robust_image_access", !scenario_.textures.empty()},
                        {"shader_clock", facts_.shader_clock.recorded}}
      .dump();
}

void ScenarioDevice::arm_return_to_pool() {
  if (!pool_) return;
  pooled_.mapping = mapping_;
  pooled_.granted_priority = granted_priority_;
  pooled_.priority_notes = facts_.priority_notes;
  pooled_.global_priority_requested = facts_.global_priority_requested;
  // Called from device_'s destructor, which pool_ outlives (declared before it).
  device_.release = [pool = pool_.get(), pooled = pooled_](VkDevice handle) mutable {
    pooled.handle = handle;
    pool->put(std::move(pooled));
  };
}

Status ScenarioDevice::create_device() {
  if (pool_) {
    pooled_ = {.key = device_key(), .created_for = scenario_.name};
    if (std::optional<PooledDevice> idle = pool_->take(pooled_.key)) {
      pooled_ = std::move(*idle);
      ++pooled_.uses;
      device_.adopt(pooled_.handle);
      mapping_ = pooled_.mapping;
      granted_priority_ = pooled_.granted_priority;
      facts_.priority_notes = pooled_.priority_notes;
      facts_.global_priority_requested = pooled_.global_priority_requested;
      vkGetPhysicalDeviceMemoryProperties(info_.handle, &memory_properties_);
      facts_.api_device_created_for = pooled_.created_for;
      facts_.api_device_use = pooled_.uses;
      arm_return_to_pool();
      return ok_status();
    }
    pooled_.uses = 1;
  }
  std::vector<QueueType> types;
  for (const auto& q : scenario_.queues) types.push_back(q.type);
  auto mapped = map_queues(info_.family_descriptions(), types);
  if (!mapped) return mapped.error();
  mapping_ = *mapped;

  // The priority policy (queues/priority_policy.h) decides each family's global priority and
  // what a priority that cannot be granted does; this function only asks the driver.
  std::vector<PriorityAsk> asks;
  for (const QueueSpec& q : scenario_.queues) asks.push_back({q.name, q.priority});
  auto planned = plan_priorities(asks, mapping_, info_.families.size(), info_.global_priority,
                                 std::string("device '") + info_.properties.deviceName +
                                     "' has no VK_KHR/EXT_global_priority, so queue priorities "
                                     "above normal cannot be requested",
                                 settings_.priority_fallback);
  if (!planned) return planned.error();
  PriorityPlan& priorities = *planned;
  // Device queues per family: enough for the highest queue index mapped there.
  std::vector<std::uint32_t> queue_counts(info_.families.size(), 0);
  for (const MappedQueue& m : mapping_)
    if (m.shares_with < 0)
      queue_counts[m.family_index] = std::max(queue_counts[m.family_index], m.queue_index + 1);

  VkPhysicalDeviceShaderClockFeaturesKHR clock_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  clock_features.shaderDeviceClock = VK_TRUE;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                       facts_.shader_clock.recorded ? &clock_features : nullptr};
  f13.synchronization2 = VK_TRUE;
  f13.dynamicRendering = VK_TRUE;
  f13.robustImageAccess = scenario_.textures.empty() ? VK_FALSE : VK_TRUE;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  f12.timelineSemaphore = VK_TRUE;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  features.features.fragmentStoresAndAtomics = VK_TRUE;

  // A refused priority (VK_ERROR_NOT_PERMITTED_KHR: NVIDIA needs CAP_SYS_NICE for HIGH and
  // REALTIME) is lowered one step per attempt, only with --priority-fallback.
  for (;;) {
    const bool wants_priority = priorities.requests_priority();
    std::vector<const char*> extensions;
    facts_.global_priority_requested = wants_priority;
    if (wants_priority)
      extensions.push_back(info_.has_extension(VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME)
                               ? VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME
                               : VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME);
    if (info_.calibrated_timestamps)
      extensions.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    if (facts_.shader_clock.recorded) extensions.push_back(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);

    std::vector<VkDeviceQueueCreateInfo> queue_infos;
    std::vector<VkDeviceQueueGlobalPriorityCreateInfoKHR> priority_infos;
    std::vector<std::vector<float>> queue_priorities;
    priority_infos.reserve(queue_counts.size());
    queue_priorities.reserve(queue_counts.size());
    for (std::uint32_t family = 0; family < queue_counts.size(); ++family) {
      if (queue_counts[family] == 0) continue;
      // Within a family, a queue that asked for more than normal gets the higher local
      // priority (pQueuePriorities), as far as the driver honours it.
      queue_priorities.emplace_back(queue_counts[family], 0.5f);
      for (std::size_t q = 0; q < mapping_.size(); ++q)
        if (mapping_[q].shares_with < 0 && mapping_[q].family_index == family &&
            scenario_.queues[q].priority != QueuePriority::normal)
          queue_priorities.back()[mapping_[q].queue_index] = 1.0f;
      VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
      qi.queueFamilyIndex = family;
      qi.queueCount = queue_counts[family];
      qi.pQueuePriorities = queue_priorities.back().data();
      if (wants_priority) {
        priority_infos.push_back({VK_STRUCTURE_TYPE_DEVICE_QUEUE_GLOBAL_PRIORITY_CREATE_INFO_KHR,
                                  nullptr, to_global_priority(priorities.family_priority[family])});
        qi.pNext = &priority_infos.back();
      }
      queue_infos.push_back(qi);
    }
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    di.queueCreateInfoCount = static_cast<std::uint32_t>(queue_infos.size());
    di.pQueueCreateInfos = queue_infos.data();
    di.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    di.ppEnabledExtensionNames = extensions.data();
    const VkResult result = vkCreateDevice(info_.handle, &di, nullptr, device_.receive());
    if (result == VK_SUCCESS) break;
    const bool refused = result == VK_ERROR_NOT_PERMITTED_KHR ||
                         (wants_priority && result == VK_ERROR_INITIALIZATION_FAILED);
    if (!refused) return vk_error(result, "vkCreateDevice");
    GPUOVERLAP_TRY(
        lower_after_refusal(priorities,
                            Error{"NVIDIA grants HIGH and REALTIME only to root or CAP_SYS_NICE",
                                  result, result_name(result)},
                            settings_.priority_fallback));
  }

  granted_priority_ = priorities.granted(mapping_);
  facts_.priority_notes = priorities.notes;
  vkGetPhysicalDeviceMemoryProperties(info_.handle, &memory_properties_);
  facts_.api_device_created_for = scenario_.name;
  facts_.api_device_use = 1;
  arm_return_to_pool();
  return ok_status();
}

Status ScenarioDevice::create_queue_objects() {
  queues_.resize(scenario_.queues.size());
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    QueueState& state = queues_[q];
    state.family = mapping_[q].family_index;
    state.timestamp_valid_bits = info_.families[state.family].timestampValidBits;
    state.workloads = scenario_.workloads_on(q);
    vkGetDeviceQueue(device_, state.family, mapping_[q].queue_index, &state.queue);
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = state.family;
    GPUOVERLAP_VK(vkCreateCommandPool(device_, &pi, nullptr, state.pool.receive(device_)));
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = state.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, &state.prepare));
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                 VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
    GPUOVERLAP_VK(vkCreateSemaphore(device_, &si, nullptr, state.done.receive(device_)));
  }
  VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                               VK_SEMAPHORE_TYPE_TIMELINE, 0};
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
  GPUOVERLAP_VK(vkCreateSemaphore(device_, &si, nullptr, gate_.receive(device_)));

  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = static_cast<std::uint32_t>(2 * scenario_.workloads.size());
  GPUOVERLAP_VK(vkCreateQueryPool(device_, &qi, nullptr, queries_.receive(device_)));

  // One command buffer per submission of the frame plan, from its queue's pool.
  segment_buffers_.resize(plan_.segments.size());
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = queues_[plan_.segments[i].queue].pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, &segment_buffers_[i]));
  }
  // A timeline semaphore per workload that another queue waits for (D3D12 Signal/Wait);
  // frame f signals value f.
  fences_.clear();
  fences_.resize(scenario_.workloads.size());
  for (const Segment& segment : plan_.segments) {
    if (!segment.signals_fence) continue;
    VkSemaphoreTypeCreateInfo fti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                  VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo fsi{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &fti};
    GPUOVERLAP_VK(vkCreateSemaphore(device_, &fsi, nullptr,
                                    fences_[segment.workloads.back()].receive(device_)));
  }
  // An event per split pair translated with the event policy.
  ops_.clear();
  events_.clear();
  events_.resize(plan_.barriers.dependencies.size());
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i) {
    ops_.push_back(translate(plan_.barriers.dependencies[i]));
    if (ops_.back().set_event_after_producer.empty()) continue;
    VkEventCreateInfo ei{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    ei.flags = VK_EVENT_CREATE_DEVICE_ONLY_BIT;
    GPUOVERLAP_VK(vkCreateEvent(device_, &ei, nullptr, events_[i].receive(device_)));
  }
  target_ops_.assign(scenario_.workloads.size(), {});
  for (const TargetTransition& transition : plan_.barriers.target_transitions) {
    const TextureSpec& texture = scenario_.textures[transition.texture];
    target_ops_[transition.workload].push_back(
        {translate(transition, {texture.mips, texture.slices},
                   scenario_.queues[scenario_.workloads[transition.workload].queue].type),
         transition.texture});
  }
  // What a frame's wait and its timestamp read use, built here, not inside a measured frame.
  done_semaphores_.clear();
  for (const QueueState& q : queues_) done_semaphores_.push_back(q.done);
  done_values_.assign(done_semaphores_.size(), 0);
  query_data_.assign(4 * scenario_.workloads.size(), 0);
  return ok_status();
}

Status ScenarioDevice::setup_calibration() {
  // `available`: timestamp queries are recorded and can be put on the CPU clock. Calibrated
  // timestamps need no query pool: with --no-timestamps they still place the shader clock on
  // the CPU clock, so the mode recommended for same-queue overlap keeps its most precise clock.
  TimestampFacts& ts = facts_.timestamps;
  ts.available = settings_.timestamp_queries;
  ts.period_ns = info_.properties.limits.timestampPeriod;
  if (!settings_.timestamp_queries)
    ts.reason = std::string(
                    "disabled (--no-timestamps): end-of-workload timestamps can serialise a "
                    "queue") +
                (facts_.shader_clock.recorded ? "; calibrated timestamps are still taken for the "
                                                "shader clock"
                                              : "");
  // Neither clock that needs it is wanted: no calibration on any frame or submission.
  if (!settings_.timestamp_queries && !facts_.shader_clock.recorded) return ok_status();
  if (!info_.calibrated_timestamps) {
    ts.available = false;
    ts.reason = "no VK_EXT_calibrated_timestamps: GPU ticks cannot be placed on the CPU clock";
    return ok_status();
  }
  auto get_domains = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
      vkGetInstanceProcAddr(instance_.handle(), "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
  get_calibrated_timestamps_ = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
      vkGetDeviceProcAddr(device_, "vkGetCalibratedTimestampsEXT"));
  std::uint32_t count = 0;
  if (get_domains) get_domains(info_.handle, &count, nullptr);
  std::vector<VkTimeDomainEXT> domains(count);
  if (get_domains) get_domains(info_.handle, &count, domains.data());
  const bool has_device =
      std::find(domains.begin(), domains.end(), VK_TIME_DOMAIN_DEVICE_EXT) != domains.end();
#if defined(_WIN32)
  // The poll clock is QueryPerformanceCounter (core/clock.h): the GPU ticks are paired with it.
  const bool has_qpc = std::find(domains.begin(), domains.end(),
                                 VK_TIME_DOMAIN_QUERY_PERFORMANCE_COUNTER_EXT) != domains.end();
  if (!get_calibrated_timestamps_ || !has_device || !has_qpc) {
    get_calibrated_timestamps_ = nullptr;
    ts.available = false;
    ts.reason = "the device cannot calibrate its timestamps against QueryPerformanceCounter";
    return ok_status();
  }
  host_domain_ = VK_TIME_DOMAIN_QUERY_PERFORMANCE_COUNTER_EXT;
  ts.calibrated = true;
  ts.host_domain = "QueryPerformanceCounter";
#else
  const bool has_raw = std::find(domains.begin(), domains.end(),
                                 VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT) != domains.end();
  const bool has_mono = std::find(domains.begin(), domains.end(),
                                  VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT) != domains.end();
  if (!get_calibrated_timestamps_ || !has_device || (!has_raw && !has_mono)) {
    get_calibrated_timestamps_ = nullptr;
    ts.available = false;
    ts.reason = "the device cannot calibrate its timestamps against CLOCK_MONOTONIC(_RAW)";
    return ok_status();
  }
  host_domain_ =
      has_raw ? VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT : VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
  if (!has_raw) monotonic_to_raw_ns_ = monotonic_to_raw_offset_ns();
  ts.calibrated = true;
  ts.host_domain = has_raw ? "CLOCK_MONOTONIC_RAW" : "CLOCK_MONOTONIC (offset to RAW measured)";
#endif
  ts.calibration = "best of " + std::to_string(kCalibrationSamples) +
                   " vkGetCalibratedTimestampsEXT samples (smallest max deviation), before every "
                   "frame";
  ts.start_stage = "TOP_OF_PIPE after the workload's barrier: the queue reached the workload";
  ts.end_stage = "BOTTOM_OF_PIPE: all work submitted before it on its queue completed";
  return ok_status();
}

std::optional<GpuCalibration> ScenarioDevice::calibrate() {
  if (!get_calibrated_timestamps_) return std::nullopt;
  const VkCalibratedTimestampInfoEXT infos[2] = {
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, host_domain_}};
  std::optional<GpuCalibration> best;
  for (std::uint32_t i = 0; i < kCalibrationSamples; ++i) {
    std::uint64_t values[2];
    std::uint64_t deviation = 0;
    if (get_calibrated_timestamps_(device_, 2, infos, values, &deviation) != VK_SUCCESS) continue;
    if (best && deviation >= best->max_deviation_ns) continue;
    GpuCalibration c;
    c.gpu_ticks = values[0];
#if defined(_WIN32)
    c.cpu_ns = qpc_ticks_to_ns(static_cast<std::int64_t>(values[1]));
#else
    c.cpu_ns = static_cast<std::int64_t>(values[1]) + monotonic_to_raw_ns_;
#endif
    c.tick_period_ns = info_.properties.limits.timestampPeriod;
    c.max_deviation_ns = deviation;
    best = c;
  }
  return best;
}

Status ScenarioDevice::create() {
  // Each part's time goes to facts_.open_parts_ms: what a device opening costs, per part, is
  // what decides whether keeping devices or pipelines between scenarios would pay.
  std::int64_t part_start_ns = monotonic_raw_ns();
  auto part_done = [&](const char* part) {
    const std::int64_t now_ns = monotonic_raw_ns();
    facts_.open_parts_ms.emplace_back(part, rounded_ms(now_ns - part_start_ns));
    part_start_ns = now_ns;
  };
  GPUOVERLAP_TRY(check_features());
  GPUOVERLAP_TRY(create_device());
  part_done("device");
  for (const MappedQueue& m : mapping_)
    if (std::find(families_in_use_.begin(), families_in_use_.end(), m.family_index) ==
        families_in_use_.end())
      families_in_use_.push_back(m.family_index);
  const VkDeviceSize alignment =
      std::max<VkDeviceSize>(1, info_.properties.limits.minStorageBufferOffsetAlignment);
  slot_stride_ = (kSlotBytes + alignment - 1) / alignment * alignment;
  facts_.slot_stride_bytes = slot_stride_;
  const std::size_t slots = scenario_.workloads.size();
  producers_.assign(slots, 0);
  target_layouts_.assign(slots, VK_IMAGE_LAYOUT_UNDEFINED);
  GPUOVERLAP_TRY(create_stamp_buffer(stamps_, slots * slot_stride_, "stamp buffer"));
  GPUOVERLAP_TRY(create_buffer(
      counters_, slots * slot_stride_,
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "counter buffer"));
  GPUOVERLAP_TRY(create_buffer(
      input_, VkDeviceSize{kInputElements} * 16,
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "input buffer"));
  GPUOVERLAP_TRY(create_buffer(dummy_output_, 4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0,
                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "placeholder buffer"));
  GPUOVERLAP_TRY(create_image(dummy_target_, 1024, 1));
  GPUOVERLAP_TRY(create_texture(placeholder_storage_,
                                {"placeholder storage", TextureFormat::r32f,
                                 kThreadsPerDispatchGroup, 1, 1, static_cast<std::uint32_t>(slots)},
                                true, false));
  outputs_.resize(slots);
  uploads_.resize(slots);
  targets_.resize(slots);
  // Outputs a readback copy reads: its image is a transfer source too (a buffer always is).
  std::vector<bool> read_back(slots, false);
  std::vector<bool> texture_read_back(scenario_.textures.size(), false);
  for (const WorkloadSpec& spec : scenario_.workloads)
    if (is_readback(spec)) {
      const std::size_t source = spec.depends_on.front().producer;
      read_back[source] = true;
      if (const auto& target = scenario_.workloads[source].target)
        texture_read_back[target->texture] = true;
    }
  for (std::size_t w = 0; w < slots; ++w) {
    const WorkloadSpec& spec = scenario_.workloads[w];
    if (is_readback(spec)) {
      // A readback buffer, as a D3D12 READBACK heap: host-visible, cached where the device
      // offers it, outside device memory.
      GPUOVERLAP_TRY(
          create_buffer(outputs_[w], spec.bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                        VK_MEMORY_PROPERTY_HOST_CACHED_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                        "readback buffer"));
      continue;
    }
    if (spec.kind == WorkloadKind::copy) {
      // The source is an upload heap's buffer (host-visible, written once here, in host
      // memory rather than a resizable BAR's device memory where the device offers both); the
      // destination device memory, read by consumers as a dispatch's output.
      GPUOVERLAP_TRY(
          create_buffer(uploads_[w], spec.bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                        0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "copy upload buffer"));
      std::memset(uploads_[w].mapped, 0, spec.bytes);
      if (spec.target) continue;  // into a declared texture
      GPUOVERLAP_TRY(create_buffer(outputs_[w], spec.bytes,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                   0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "copy destination buffer"));
      continue;
    }
    // Every dispatch has its own, a texture's too: cs_main names output_values, and
    // synchronization validation takes every binding a shader names as accessed.
    if (spec.kind == WorkloadKind::compute)
      GPUOVERLAP_TRY(
          create_buffer(outputs_[w], VkDeviceSize{workload_shape(scenario_, w).threads} * 4,
                        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0,
                        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                        "output buffer"));
    else if (!spec.target)
      GPUOVERLAP_TRY(create_image(targets_[w], kRenderTargetWidth, spec.groups,
                                  read_back[w] ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0));
  }
  textures_.resize(scenario_.textures.size());
  texture_layouts_.clear();
  for (std::size_t t = 0; t < textures_.size(); ++t) {
    GPUOVERLAP_TRY(create_texture(
        textures_[t], scenario_.textures[t], plan_.barriers.texture_unordered_access[t],
        plan_.barriers.texture_copy_destination[t], texture_read_back[t]));
    texture_layouts_.emplace_back(scenario_.textures[t].subresources(), VK_IMAGE_LAYOUT_UNDEFINED);
  }
  GPUOVERLAP_TRY(bind_heaps());
  part_done("resources");
  GPUOVERLAP_TRY(create_queue_objects());
  part_done("queue_objects");
  GPUOVERLAP_TRY(upload_input());
  part_done("upload");
  GPUOVERLAP_TRY(create_pipelines());
  part_done("pipelines");
  GPUOVERLAP_TRY(create_descriptors());
  GPUOVERLAP_TRY(setup_calibration());
  part_done("descriptors_and_clocks");
  GPUOVERLAP_TRY(create_background(scenario_.background));
  part_done("background");
  record_memory_and_queue_facts();
  return ok_status();
}

// What create() made, as meta.json's device facts: the stamp and counter memory, each queue as
// mapped with its family, sharer and granted priority.
void ScenarioDevice::record_memory_and_queue_facts() {
  const auto stamp_flags = memory_properties_.memoryTypes[stamps_.memory_type].propertyFlags;
  const auto counter_flags = memory_properties_.memoryTypes[counters_.memory_type].propertyFlags;
  const bool stamps_device_local = (stamp_flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
  facts_.stamp_memory = {
      .requested = std::string(to_string(settings_.stamp_memory)),
      .memory_type = stamps_.memory_type,
      .flags = memory_flags_text(stamp_flags),
      .device_local = stamps_device_local,
      .note = stamps_device_local
                  ? "no host-visible coherent type outside device memory; used the best available"
                  : "system memory, as the protocol asks"};
  facts_.counter_memory = {.memory_type = counters_.memory_type,
                           .flags = memory_flags_text(counter_flags)};
  for (std::size_t q = 0; q < scenario_.queues.size(); ++q) {
    const bool shared = mapping_[q].shares_with >= 0;
    const QueueSpec* sharer =
        shared ? &scenario_.queues[static_cast<std::size_t>(mapping_[q].shares_with)] : nullptr;
    if (sharer && scenario_.queues[q].type == QueueType::compute &&
        sharer->type == QueueType::direct)
      facts_.compute_queue_shared = true;
    const auto& family = info_.families[mapping_[q].family_index];
    facts_.queues.push_back(
        {.name = scenario_.queues[q].name,
         .type = scenario_.queues[q].type,
         .family = mapping_[q].family_index,
         .family_flags = queue_flags_text(family.queueFlags),
         .queue_index = mapping_[q].queue_index,
         .shares_queue_of = sharer ? std::optional<std::string>(sharer->name) : std::nullopt,
         .priority_requested = scenario_.queues[q].priority,
         .priority_granted = granted_priority_[q],
         .timestamp_valid_bits = family.timestampValidBits});
  }
  facts_.global_priority_extension = info_.global_priority;
  facts_.stamping = settings_.stamping;
  facts_.max_workgroups_x = info_.properties.limits.maxComputeWorkGroupCount[0];
}

Status ScenarioDevice::submit_frame_commands(std::uint32_t frame) {
  // All prepare submissions first, then the gated work in the plan's submission order, which
  // puts every fence signal before its wait (required where two scenario queues share a device
  // queue, as on lavapipe).
  for (const QueueState& q : queues_) {
    VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, q.prepare,
                                 0};
    VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    si.commandBufferInfoCount = 1;
    si.pCommandBufferInfos = &cb;
    GPUOVERLAP_VK(vkQueueSubmit2(q.queue, 1, &si, VK_NULL_HANDLE));
  }
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    const Segment& segment = plan_.segments[i];
    const QueueState& q = queues_[segment.queue];
    std::vector<VkSemaphoreSubmitInfo> waits, signals;
    auto semaphore = [frame](VkSemaphore s) {
      return VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, s, frame,
                                   VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,    0};
    };
    if (plan_.first_segment_of_queue[segment.queue] == i) waits.push_back(semaphore(gate_));
    for (std::size_t producer : segment.wait_for) waits.push_back(semaphore(fences_[producer]));
    if (segment.signals_fence) signals.push_back(semaphore(fences_[segment.workloads.back()]));
    if (plan_.last_segment_of_queue[segment.queue] == i) signals.push_back(semaphore(q.done));
    VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr,
                                 segment_buffers_[i], 0};
    VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    si.waitSemaphoreInfoCount = static_cast<std::uint32_t>(waits.size());
    si.pWaitSemaphoreInfos = waits.data();
    si.commandBufferInfoCount = 1;
    si.pCommandBufferInfos = &cb;
    si.signalSemaphoreInfoCount = static_cast<std::uint32_t>(signals.size());
    si.pSignalSemaphoreInfos = signals.data();
    GPUOVERLAP_VK(vkQueueSubmit2(q.queue, 1, &si, VK_NULL_HANDLE));
  }
  return ok_status();
}

// --- ScenarioBackend: the frame loop itself is engine/frame_loop.cpp's --------------------------

StampView ScenarioDevice::stamps() const {
  return evenly_spaced_stamps(static_cast<const std::uint32_t*>(stamps_.mapped),
                              slot_stride_ / sizeof(std::uint32_t), scenario_.workloads.size());
}

GpuOutcome ScenarioDevice::outcome_of(VkResult result, const char* call) const {
  if (result == VK_SUCCESS) return GpuOutcome::ok();
  const GpuStatus status = result == VK_TIMEOUT             ? GpuStatus::timeout
                           : result == VK_ERROR_DEVICE_LOST ? GpuStatus::device_lost
                                                            : GpuStatus::failed;
  return {status, vk_error(result, call)};
}

GpuOutcome ScenarioDevice::submit_frame(std::uint32_t frame) {
  last_frame_ = std::max(last_frame_, frame);
  Status submitted = submit_frame_commands(frame);
  if (submitted) return GpuOutcome::ok();
  return {submitted.error().api_code == VK_ERROR_DEVICE_LOST ? GpuStatus::device_lost
                                                             : GpuStatus::failed,
          submitted.error()};
}

GpuOutcome ScenarioDevice::release_gate(std::uint32_t frame) {
  VkSemaphoreSignalInfo release{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, nullptr, gate_, frame};
  return outcome_of(vkSignalSemaphore(device_, &release), "vkSignalSemaphore");
}

GpuOutcome ScenarioDevice::wait_frame(std::uint32_t frame, std::int64_t deadline_ns) {
  std::fill(done_values_.begin(), done_values_.end(), std::uint64_t{frame});
  VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wait.semaphoreCount = static_cast<std::uint32_t>(done_semaphores_.size());
  wait.pSemaphores = done_semaphores_.data();
  wait.pValues = done_values_.data();
  const std::int64_t remaining_ns = std::max<std::int64_t>(deadline_ns - monotonic_raw_ns(), 0);
  return outcome_of(vkWaitSemaphores(device_, &wait, static_cast<std::uint64_t>(remaining_ns)),
                    "vkWaitSemaphores");
}

std::vector<std::optional<TimestampTicks>> ScenarioDevice::read_timestamps() {
  const std::size_t slots = scenario_.workloads.size();
  // Per query: the value, then its availability.
  const VkResult result = vkGetQueryPoolResults(
      device_, queries_, 0, static_cast<std::uint32_t>(2 * slots),
      query_data_.size() * sizeof(std::uint64_t), query_data_.data(), 2 * sizeof(std::uint64_t),
      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (result != VK_SUCCESS && result != VK_NOT_READY) return {};
  std::vector<std::optional<TimestampTicks>> ticks(slots);
  for (std::size_t w = 0; w < slots; ++w)
    if (query_data_[4 * w + 1] && query_data_[4 * w + 3])
      ticks[w] = TimestampTicks{query_data_[4 * w], query_data_[4 * w + 2]};
  return ticks;
}

Error ScenarioDevice::timeout_error() const {
  return vk_error(VK_TIMEOUT, "waiting for the frame");
}

ScenarioDevice::~ScenarioDevice() {
  // Background compiles use the device: none may run once anything is destroyed, whether or
  // not anything is freed.
  if (background_) background_->stop();
  if (device_ == VK_NULL_HANDLE || device_.gpu_may_be_busy) return;  // every handle leaks
  // Every submission was waited for with a deadline; this returns at once. Then the members'
  // handles free their objects, the device last (or back to the pool, only if it is idle).
  if (vkDeviceWaitIdle(device_) != VK_SUCCESS) device_.release = nullptr;
  for (background::PipelineHandle variant : compute_variants_.take())
    vkDestroyPipeline(device_, reinterpret_cast<VkPipeline>(variant), nullptr);
}

}  // namespace gpuoverlap::vk
