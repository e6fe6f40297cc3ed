// The preemption streams on Vulkan: what engine/preemption_loop.cpp submits (ScenarioBackend's
// stream methods).
//
// Each submission starts by zeroing its own stamp counters behind a barrier on everything
// earlier on its queue: submissions of one queue therefore run one after the other (as a
// compositor's frames and a renderer's frames do), and a workload's single stamp slot is
// reused only once its previous use has finished.
#include <algorithm>

#include "backends/vulkan/scenario_device.h"
#include "backends/vulkan/vk_check.h"
#include "core/clock.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::vk {

namespace {

// Queries per submission of a stream: two per part.
constexpr std::uint32_t kQueriesPerLoad = kMaxLoadParts * 2;

}  // namespace

Status ScenarioDevice::prepare_streams(const StreamLayout& layout) {
  if (layout.load_parts.size() > kMaxLoadParts) return make_error("a load has at most two parts");
  streams_ = layout;
  auto make_stream = [&](std::size_t workload, std::uint32_t ring, StreamState& out) -> Status {
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    out.queue = scenario_.workloads[workload].queue;
    pi.queueFamilyIndex = queues_[out.queue].family;
    GPUOVERLAP_VK(vkCreateCommandPool(device_, &pi, nullptr, out.pool.receive(device_)));
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = out.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = ring;
    out.buffers.resize(ring);
    GPUOVERLAP_VK(vkAllocateCommandBuffers(device_, &ai, out.buffers.data()));
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                 VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
    GPUOVERLAP_VK(vkCreateSemaphore(device_, &si, nullptr, out.done.receive(device_)));
    return ok_status();
  };
  if (!layout.load_parts.empty())
    GPUOVERLAP_TRY(make_stream(layout.load_parts.front(), layout.load_ring, load_stream_));
  if (layout.urgent)
    GPUOVERLAP_TRY(make_stream(*layout.urgent, layout.urgent_ring, urgent_stream_));
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = layout.load_ring * kQueriesPerLoad + layout.urgent_ring * 2;
  GPUOVERLAP_VK(vkCreateQueryPool(device_, &qi, nullptr, stream_queries_.receive(device_)));
  return ok_status();
}

std::uint32_t ScenarioDevice::first_stream_query(Stream stream, std::uint32_t ring) const {
  return stream == Stream::urgent ? streams_.load_ring * kQueriesPerLoad + ring * 2
                                  : ring * kQueriesPerLoad;
}

// Queries first (outside any render pass), then the workloads' counters are zeroed once
// everything earlier on the queue is done with them, and made visible to the shaders.
void ScenarioDevice::record_counter_reset(VkCommandBuffer cmd,
                                          const std::vector<std::size_t>& workloads,
                                          std::uint32_t first_query, std::uint32_t queries) {
  if (streams_.timestamps) vkCmdResetQueryPool(cmd, stream_queries_, first_query, queries);
  const SyncScope everything{VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                             VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT};
  const SyncScope fill{VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT};
  record_global_barrier(cmd, everything, fill);
  for (std::size_t w : workloads)
    vkCmdFillBuffer(cmd, counters_.buffer, w * slot_stride_, kSlotBytes, 0);
  std::vector<VkImageMemoryBarrier2> images;
  for (std::size_t w : workloads) {
    const Image& target = targets_[w];
    if (!target.image) continue;
    // The previous load's draws are done writing (the barrier above); its contents are not
    // needed, so the layout starts from UNDEFINED every time.
    images.push_back(to_start_layout(target.image, VK_IMAGE_ASPECT_COLOR_BIT,
                                     VK_IMAGE_LAYOUT_UNDEFINED,
                                     VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0, 0));
  }
  record_global_barrier(cmd, fill, everything, images);
}

// One part: a dispatch, or `size.draws` draws into its target, stamped with `sequence`, between
// two timestamps at `query` and `query + 1`.
void ScenarioDevice::record_stream_part(VkCommandBuffer cmd, std::size_t w, std::uint32_t sequence,
                                        const preemption::LoadSize& size, std::uint32_t query) {
  if (streams_.timestamps)
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, stream_queries_, query);
  const PushConstants pc = stream_params(static_cast<std::uint32_t>(w), size.draws, size.rows,
                                         size.groups, size.iterations, sequence);
  record_perlin(cmd, w, pc, size.draws);
  if (streams_.timestamps)
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, stream_queries_, query + 1);
}

Status ScenarioDevice::record_stream(const StreamSubmission& s) {
  StreamState& stream = s.stream == Stream::urgent ? urgent_stream_ : load_stream_;
  VkCommandBuffer cmd = stream.buffers[s.ring];
  GPUOVERLAP_VK(vkResetCommandBuffer(cmd, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  GPUOVERLAP_VK(vkBeginCommandBuffer(cmd, &bi));
  const std::uint32_t first_query = first_stream_query(s.stream, s.ring);
  std::vector<std::size_t> workloads;
  for (const StreamPart& part : s.parts) workloads.push_back(part.workload);
  record_counter_reset(cmd, workloads, first_query,
                       s.stream == Stream::urgent ? 2 : kQueriesPerLoad);
  for (const StreamPart& part : s.parts)
    record_stream_part(cmd, part.workload, s.sequence, part.size,
                       first_query + static_cast<std::uint32_t>(part.part) * 2);
  GPUOVERLAP_VK(vkEndCommandBuffer(cmd));
  return ok_status();
}

GpuOutcome ScenarioDevice::submit_stream(const StreamSubmission& submission) {
  StreamState& stream = submission.stream == Stream::urgent ? urgent_stream_ : load_stream_;
  VkCommandBuffer cmd = stream.buffers[submission.ring];
  const VkSemaphoreSubmitInfo signal{
      VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, stream.done, submission.sequence,
      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,    0};
  const VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, cmd, 0};
  VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
  si.commandBufferInfoCount = 1;
  si.pCommandBufferInfos = &cb;
  si.signalSemaphoreInfoCount = 1;
  si.pSignalSemaphoreInfos = &signal;
  return outcome_of(vkQueueSubmit2(queues_[stream.queue].queue, 1, &si, VK_NULL_HANDLE),
                    "vkQueueSubmit2");
}

GpuOutcome ScenarioDevice::stream_completed(Stream stream, std::uint64_t& completed) {
  const StreamState& state = stream == Stream::urgent ? urgent_stream_ : load_stream_;
  return outcome_of(vkGetSemaphoreCounterValue(device_, state.done, &completed),
                    "vkGetSemaphoreCounterValue");
}

GpuOutcome ScenarioDevice::wait_stream(Stream stream, std::uint64_t sequence,
                                       std::int64_t deadline_ns) {
  const StreamState& state = stream == Stream::urgent ? urgent_stream_ : load_stream_;
  const std::int64_t remaining_ns = std::max<std::int64_t>(deadline_ns - monotonic_raw_ns(), 0);
  VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wait.semaphoreCount = 1;
  wait.pSemaphores = state.done.address();
  wait.pValues = &sequence;
  return outcome_of(vkWaitSemaphores(device_, &wait, static_cast<std::uint64_t>(remaining_ns)),
                    "vkWaitSemaphores");
}

std::vector<std::optional<TimestampTicks>> ScenarioDevice::read_stream_timestamps(
    Stream stream, std::uint32_t ring, std::size_t parts) {
  std::vector<std::optional<TimestampTicks>> ticks(parts);
  if (!streams_.timestamps || parts > kMaxLoadParts) return ticks;
  // Per query: the value, then its availability.
  std::uint64_t data[kMaxLoadParts * 2][2] = {};
  const VkResult result = vkGetQueryPoolResults(
      device_, stream_queries_, first_stream_query(stream, ring),
      static_cast<std::uint32_t>(parts * 2), sizeof data, data, 2 * sizeof(std::uint64_t),
      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (result != VK_SUCCESS && result != VK_NOT_READY) return ticks;
  for (std::size_t p = 0; p < parts; ++p)
    if (data[p * 2][1] && data[p * 2 + 1][1])
      ticks[p] = TimestampTicks{data[p * 2][0], data[p * 2 + 1][0]};
  return ticks;
}

}  // namespace gpuoverlap::vk
