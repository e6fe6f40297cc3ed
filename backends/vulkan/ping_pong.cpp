// The self-test's host-GPU ping-pong (ScenarioDevice::ping_pong): one GPU thread answers the
// CPU's posts through the stamp memory.
#include <atomic>
#include <string>
#include <vector>

#include "backends/vulkan/scenario_device.h"
#include "backends/vulkan/vk_check.h"
#include "core/clock.h"
#include "workload_spirv.h"

namespace gpuoverlap::vk {

// The GPU answers each round the CPU posts (pingpong.comp). Its own pipeline and
// mailbox, on the device's first queue; everything is freed unless the GPU may still spin.
Result<PingPongResult> ScenarioDevice::ping_pong(std::uint32_t rounds, std::uint32_t timeout_ms) {
  PingPongResult out;
  // Freed on every return path by their handles, except when the GPU may still spin.
  Buffer mailbox;
  OwnedSetLayout layout;
  OwnedPipelineLayout pipeline_layout;
  OwnedShaderModule module;
  OwnedPipeline pipeline;
  OwnedDescriptorPool pool;
  OneTimeCommands commands(device_, queues_.front());
  GPUOVERLAP_TRY(create_stamp_buffer(mailbox, kSlotBytes, "ping-pong mailbox"));
  out.memory = memory_flags_text(memory_properties_.memoryTypes[mailbox.memory_type].propertyFlags);

  const VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                             VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = 1;
  li.pBindings = &binding;
  GPUOVERLAP_VK(vkCreateDescriptorSetLayout(device_, &li, nullptr, layout.receive(device_)));
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 2 * sizeof(std::uint32_t)};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = layout.address();
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  GPUOVERLAP_VK(vkCreatePipelineLayout(device_, &pli, nullptr, pipeline_layout.receive(device_)));
  GPUOVERLAP_VK(
      create_shader_module(kPingPongSpirv, sizeof(kPingPongSpirv), module.receive(device_)));
  GPUOVERLAP_VK(
      create_compute_pipeline(module, "main", pipeline_layout, pipeline.receive(device_)));
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  GPUOVERLAP_VK(vkCreateDescriptorPool(device_, &dpi, nullptr, pool.receive(device_)));
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = layout.address();
  GPUOVERLAP_VK(vkAllocateDescriptorSets(device_, &dai, &set));
  const VkDescriptorBufferInfo buffer_info{mailbox.buffer, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
  write.dstSet = set;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &buffer_info;
  vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);

  GPUOVERLAP_TRY(commands.begin());
  const VkCommandBuffer cmd = commands.cmd();
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout, 0, 1, &set, 0,
                          nullptr);
  // One extra round first: its round trip includes the dispatch's launch, so it is dropped.
  const std::uint32_t gpu_rounds = rounds + 1;
  const std::uint32_t push[2] = {gpu_rounds,
                                 info_.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                                     ? kPingPongMaxSpinsCpu
                                     : kPingPongMaxSpinsGpu};
  vkCmdPushConstants(cmd, pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), push);
  vkCmdDispatch(cmd, 1, 1, 1);
  GPUOVERLAP_VK(commands.submit());

  auto* words = static_cast<std::uint32_t*>(mailbox.mapped);
  const std::int64_t deadline_ns = monotonic_raw_ns() + std::int64_t{timeout_ms} * 1'000'000;
  for (std::uint32_t round = 1; round <= gpu_rounds; ++round) {
    const std::int64_t posted_ns = monotonic_raw_ns();
    __atomic_store_n(&words[0], round, __ATOMIC_SEQ_CST);
    // Drains a write-combining buffer, so the post reaches memory now, not when it fills.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    bool answered = false, gave_up = false, ahead = false;
    std::int64_t now_ns = posted_ns;
    std::uint32_t pong = 0;
    while (now_ns < deadline_ns) {
      pong = __atomic_load_n(&words[1], __ATOMIC_ACQUIRE);
      answered = pong == round;
      gave_up = pong == kPingPongGaveUp;
      // An answer to a round not posted yet: the shader went past its wait for it.
      ahead = pong > round && !gave_up && pong != kPingPongCancel;
      if (answered || gave_up || ahead) break;
      now_ns = monotonic_raw_ns();
    }
    const std::int64_t seen_ns = monotonic_raw_ns();
    if (ahead) {
      // Seen on lavapipe on a loaded 2-core machine: while the CPU waited for round r, the
      // shader answered r + 1 and finished; its 32 invocations (four 8-wide vectors) do not
      // all wait for each host write. The round trip is not measurable there.
      out.unordered_answers = true;
      out.failure = make_error("ping-pong round " + std::to_string(round - 1) +
                               ": the shader answered round " + std::to_string(pong - 1) +
                               " before it was posted (its reads of host memory do not "
                               "wait for the host's writes in order on this device)");
      break;
    }
    if (gave_up) {
      out.host_writes_invisible = true;
      out.failure = make_error("ping-pong round " + std::to_string(round - 1) +
                               ": the GPU gave up waiting (it never saw the CPU's post: host "
                               "writes do not reach a running shader on this device)");
      break;
    }
    if (!answered) {
      out.failure = make_error("ping-pong round " + std::to_string(round - 1) +
                               " was not answered within " + std::to_string(timeout_ms) + " ms");
      break;
    }
    if (round > 1) out.round_trip_us.push_back(static_cast<double>(seen_ns - posted_ns) / 1000.0);
  }
  // Releases the GPU thread from every remaining round.
  __atomic_store_n(&words[0], kPingPongCancel, __ATOMIC_SEQ_CST);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::int64_t remaining_ns = std::max<std::int64_t>(
      deadline_ns - monotonic_raw_ns(), std::int64_t{kSetupTimeoutNs} / 30);  // >= 1 s
  const VkResult waited = commands.wait(static_cast<std::uint64_t>(remaining_ns));
  if (waited != VK_SUCCESS) {
    device_.gpu_may_be_busy = true;
    if (!out.failure) out.failure = vk_error(waited, "waiting for the ping-pong dispatch");
  }
  return out;
}

// Every round is submitted up front, each its own submission that waits for the semaphore's
// value r and fills the mailbox with r, so a round trip is the CPU's signal, the queue's
// release, one command and the write reaching the CPU: what a frame's gate costs, on the
// path drivers do promise. The first round is dropped (it includes the submissions' launch).
Result<PingPongResult> ScenarioDevice::semaphore_round_trip(std::uint32_t rounds,
                                                            std::uint32_t timeout_ms) {
  PingPongResult out;
  Buffer mailbox;
  OwnedSemaphore release;
  OwnedFence done;
  GPUOVERLAP_TRY(create_stamp_buffer(mailbox, kSlotBytes, "round-trip mailbox"));
  out.memory = memory_flags_text(memory_properties_.memoryTypes[mailbox.memory_type].propertyFlags);
  VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                               VK_SEMAPHORE_TYPE_TIMELINE, 0};
  VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
  GPUOVERLAP_VK(vkCreateSemaphore(device_, &si, nullptr, release.receive(device_)));
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  GPUOVERLAP_VK(vkCreateFence(device_, &fi, nullptr, done.receive(device_)));

  const QueueState& queue = queues_.front();
  const std::uint32_t gpu_rounds = rounds + 1;
  std::vector<VkCommandBuffer> commands(gpu_rounds, VK_NULL_HANDLE);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = queue.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = gpu_rounds;
  GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, commands.data()));
  // Freed unless the GPU may still hold them (a release that never came).
  struct FreeCommands {
    const OwnedDevice& device;
    VkCommandPool pool;
    std::vector<VkCommandBuffer>& buffers;
    ~FreeCommands() {
      if (!device.gpu_may_be_busy)
        vkFreeCommandBuffers(device, pool, static_cast<std::uint32_t>(buffers.size()),
                             buffers.data());
    }
  } free_commands{device_, queue.pool, commands};
  // The answer goes to the second word, where the flag probe's goes: the host reads it.
  const VkMemoryBarrier2 to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2, nullptr,
                                 VK_PIPELINE_STAGE_2_CLEAR_BIT,      VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                 VK_PIPELINE_STAGE_2_HOST_BIT,       VK_ACCESS_2_HOST_READ_BIT};
  VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dependency.memoryBarrierCount = 1;
  dependency.pMemoryBarriers = &to_host;
  for (std::uint32_t r = 0; r < gpu_rounds; ++r) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    GPUOVERLAP_VK(vkBeginCommandBuffer(commands[r], &bi));
    vkCmdFillBuffer(commands[r], mailbox.buffer, sizeof(std::uint32_t), sizeof(std::uint32_t),
                    r + 1);
    vkCmdPipelineBarrier2(commands[r], &dependency);
    GPUOVERLAP_VK(vkEndCommandBuffer(commands[r]));
  }
  std::vector<VkSemaphoreSubmitInfo> waits(gpu_rounds);
  std::vector<VkCommandBufferSubmitInfo> buffers(gpu_rounds);
  std::vector<VkSubmitInfo2> submits(gpu_rounds);
  for (std::uint32_t r = 0; r < gpu_rounds; ++r) {
    waits[r] = {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, release, r + 1ull,
                VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,    0};
    buffers[r] = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, commands[r], 0};
    submits[r] = {VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    submits[r].waitSemaphoreInfoCount = 1;
    submits[r].pWaitSemaphoreInfos = &waits[r];
    submits[r].commandBufferInfoCount = 1;
    submits[r].pCommandBufferInfos = &buffers[r];
  }
  // From here the queue holds submissions that wait for the CPU: every path out signals
  // past the last round first.
  GPUOVERLAP_VK(vkQueueSubmit2(queue.queue, gpu_rounds, submits.data(), done));
  auto signal = [&](std::uint64_t value) {
    VkSemaphoreSignalInfo signal_info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, nullptr, release,
                                      value};
    return vkSignalSemaphore(device_, &signal_info);
  };

  auto* words = static_cast<std::uint32_t*>(mailbox.mapped);
  const std::int64_t deadline_ns = monotonic_raw_ns() + std::int64_t{timeout_ms} * 1'000'000;
  std::uint64_t signalled = 0;
  for (std::uint32_t round = 1; round <= gpu_rounds; ++round) {
    const std::int64_t posted_ns = monotonic_raw_ns();
    if (VkResult r = signal(round); r != VK_SUCCESS) {
      out.failure = vk_error(r, "vkSignalSemaphore");
      break;
    }
    signalled = round;
    bool answered = false;
    std::int64_t now_ns = posted_ns;
    while (now_ns < deadline_ns) {
      answered = __atomic_load_n(&words[1], __ATOMIC_ACQUIRE) >= round;
      if (answered) break;
      now_ns = monotonic_raw_ns();
    }
    const std::int64_t seen_ns = monotonic_raw_ns();
    if (!answered) {
      out.failure = make_error("semaphore round " + std::to_string(round - 1) +
                               " was not answered within " + std::to_string(timeout_ms) + " ms");
      break;
    }
    if (round > 1) out.round_trip_us.push_back(static_cast<double>(seen_ns - posted_ns) / 1000.0);
  }
  // Releases every round not signalled yet (after a failure), so the queue drains.
  if (signalled < gpu_rounds && signal(gpu_rounds) != VK_SUCCESS && !out.failure)
    out.failure = make_error("vkSignalSemaphore: could not release the remaining rounds");
  const std::int64_t remaining_ns = std::max<std::int64_t>(
      deadline_ns - monotonic_raw_ns(), std::int64_t{kSetupTimeoutNs} / 30);  // >= 1 s
  const VkResult waited = vkWaitForFences(device_, 1, done.address(), VK_TRUE,
                                          static_cast<std::uint64_t>(remaining_ns));
  if (waited != VK_SUCCESS) {
    device_.gpu_may_be_busy = true;
    if (!out.failure) out.failure = vk_error(waited, "waiting for the semaphore rounds");
  }
  return out;
}

}  // namespace gpuoverlap::vk
