// The self-test's host-GPU ping-pong (ScenarioDevice::ping_pong): one GPU thread answers the
// CPU's posts through the stamp memory.
#include <atomic>
#include <string>

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

}  // namespace gpuoverlap::vk
