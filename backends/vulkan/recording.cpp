// What a frame records: each workload's barriers (the frame plan's, translated to
// synchronization2), events of split barriers, the Perlin dispatch or draws with their
// timestamps, and each queue's submissions between the gate and its done semaphore.
#include <algorithm>
#include <vector>

#include "backends/vulkan/barrier_translation.h"
#include "backends/vulkan/scenario_device.h"
#include "backends/vulkan/vk_check.h"
#include "scenarios/frame_plan.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::vk {

namespace {

// Vulkan barrier structs of one recording call, with their handles filled in.
struct RecordedDependency {
  std::vector<VkMemoryBarrier2> memory;
  std::vector<VkBufferMemoryBarrier2> buffers;
  std::vector<VkImageMemoryBarrier2> images;
  VkDependencyInfo info{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
};

// Contract: the result refers to its own vectors; do not copy it after filling (the
// constructor-free aggregate is filled in place by fill_dependency).
// The stage and access scopes every synchronization2 barrier struct carries.
template <typename Barrier>
Barrier with_scopes(Barrier barrier, const BarrierDesc& d) {
  barrier.srcStageMask = d.src.stages;
  barrier.srcAccessMask = d.src.access;
  barrier.dstStageMask = d.dst.stages;
  barrier.dstAccessMask = d.dst.access;
  return barrier;
}

void fill_dependency(RecordedDependency& out, const std::vector<BarrierDesc>& descs,
                     VkBuffer buffer, VkImage image, VkImageAspectFlags aspect) {
  for (const BarrierDesc& d : descs) {
    switch (d.target) {
      case BarrierDesc::Target::memory:
        out.memory.push_back(with_scopes(VkMemoryBarrier2{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2}, d));
        break;
      case BarrierDesc::Target::buffer: {
        auto b = with_scopes(VkBufferMemoryBarrier2{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2}, d);
        b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.buffer = buffer;
        b.size = VK_WHOLE_SIZE;
        out.buffers.push_back(b);
        break;
      }
      case BarrierDesc::Target::image: {
        auto b = with_scopes(VkImageMemoryBarrier2{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2}, d);
        b.oldLayout = d.old_layout;
        b.newLayout = d.new_layout;
        b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.image = image;
        b.subresourceRange = {aspect, d.base_mip, d.mip_count, d.base_layer, d.layer_count};
        out.images.push_back(b);
        break;
      }
    }
  }
  out.info.memoryBarrierCount = static_cast<std::uint32_t>(out.memory.size());
  out.info.pMemoryBarriers = out.memory.data();
  out.info.bufferMemoryBarrierCount = static_cast<std::uint32_t>(out.buffers.size());
  out.info.pBufferMemoryBarriers = out.buffers.data();
  out.info.imageMemoryBarrierCount = static_cast<std::uint32_t>(out.images.size());
  out.info.pImageMemoryBarriers = out.images.data();
}

}  // namespace

void ScenarioDevice::record_barriers(VkCommandBuffer cmd, const std::vector<BarrierDesc>& descs,
                                     std::size_t producer) const {
  if (descs.empty()) return;
  RecordedDependency dependency;
  const DrawTarget target = draw_target(producer);
  fill_dependency(dependency, descs, outputs_[producer].buffer, target.image,
                  aspect_of(target.format));
  vkCmdPipelineBarrier2(cmd, &dependency.info);
}

// A split pair's halves: vkCmdSetEvent2 after the producer, vkCmdWaitEvents2 before the
// consumer, with one and the same dependency (Vulkan requires them to match).
void ScenarioDevice::record_event(VkCommandBuffer cmd, VkEvent event,
                                  const std::vector<BarrierDesc>& descs, std::size_t producer,
                                  bool set) const {
  RecordedDependency dependency;
  const DrawTarget target = draw_target(producer);
  fill_dependency(dependency, descs, outputs_[producer].buffer, target.image,
                  aspect_of(target.format));
  if (set)
    vkCmdSetEvent2(cmd, event, &dependency.info);
  else
    vkCmdWaitEvents2(cmd, 1, &event, &dependency.info);
}

// One workload: the barriers and event waits its dependencies put before it, a timestamp, the
// dispatch or draw, a timestamp, then what its consumers put right after it (BEGIN halves of
// split barriers, and barriers a consumer on a compute queue cannot record itself).
void ScenarioDevice::record_perlin(VkCommandBuffer cmd, std::size_t w, const PushConstants& pc,
                                   std::uint32_t draws) const {
  constexpr VkShaderStageFlags kPushStages =
      VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_VERTEX_BIT;
  if (scenario_.workloads[w].kind == WorkloadKind::compute) {
    const background::PipelineHandle variant = w < bound_variants_.size() ? bound_variants_[w] : 0;
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                      variant ? reinterpret_cast<VkPipeline>(variant)
                              : static_cast<VkPipeline>(compute_pipeline_));
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &sets_[w],
                            0, nullptr);
    vkCmdPushConstants(cmd, pipeline_layout_, kPushStages, 0, sizeof(pc), &pc);
    vkCmdDispatch(cmd, pc.thread_count / kThreadsPerDispatchGroup, 1, 1);
    return;
  }
  const DrawTarget target = draw_target(w);
  const bool depth = aspect_of(target.format) == VK_IMAGE_ASPECT_DEPTH_BIT;
  VkRenderingAttachmentInfo attachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
  attachment.imageView = target.view;
  attachment.imageLayout = depth ? VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
                                 : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
  attachment.loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  VkRenderingInfo ri{VK_STRUCTURE_TYPE_RENDERING_INFO};
  ri.renderArea = {{0, 0}, {target.width, target.height}};
  ri.layerCount = 1;
  if (depth) {
    ri.pDepthAttachment = &attachment;
  } else {
    ri.colorAttachmentCount = 1;
    ri.pColorAttachments = &attachment;
  }
  vkCmdBeginRendering(cmd, &ri);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, graphics_pipeline_for(target.format));
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_layout_, 0, 1, &sets_[w],
                          0, nullptr);
  vkCmdPushConstants(cmd, pipeline_layout_, kPushStages, 0, sizeof(pc), &pc);
  const VkViewport viewport{
      0, 0, static_cast<float>(target.width), static_cast<float>(target.height), 0, 1};
  const VkRect2D scissor{{0, 0}, {target.width, target.height}};
  vkCmdSetViewport(cmd, 0, 1, &viewport);
  vkCmdSetScissor(cmd, 0, 1, &scissor);
  for (std::uint32_t i = 0; i < draws; ++i) vkCmdDraw(cmd, 3, 1, 0, 0);
  vkCmdEndRendering(cmd);
}

void ScenarioDevice::record_copy(VkCommandBuffer cmd, std::size_t w, std::uint32_t frame,
                                 bool timestamps) const {
  // The stamp protocol's words (workloads/perlin.hlsl): the frame number at byte 0 when the
  // work starts, at byte 4 when it has finished. Execution barriers on this queue place them:
  // the start fill waits for what the copy's own barriers wait for (their second scope is the
  // COPY stage, which a fill, a CLEAR, is not in: a barrier from COPY to CLEAR chains them),
  // and completes before the copy begins; the end fill begins after the copy completes. The
  // stamps are host-coherent memory the poller reads.
  const VkDeviceSize slot = w * slot_stride_;
  auto order = [cmd](VkPipelineStageFlags2 before, VkPipelineStageFlags2 after) {
    record_global_barrier(cmd, {before, 0}, {after, 0});
  };
  if (settings_.stamping) {
    order(VK_PIPELINE_STAGE_2_COPY_BIT, VK_PIPELINE_STAGE_2_CLEAR_BIT);
    vkCmdFillBuffer(cmd, stamps_.buffer, slot, 4, frame);
    order(VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_PIPELINE_STAGE_2_COPY_BIT);
  }
  if (timestamps)
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, queries_,
                         static_cast<std::uint32_t>(2 * w));
  const WorkloadSpec& spec = scenario_.workloads[w];
  if (is_readback(spec)) {
    // From its producer's output, in the layout the barrier before it left (TRANSFER_SRC_OPTIMAL
    // by default; GENERAL for a COMMON or GENERIC_READ the scenario asked for), into the
    // readback buffer.
    const std::size_t source = spec.depends_on.front().producer;
    const WorkloadSpec& producer = scenario_.workloads[source];
    if (producer.target || producer.kind == WorkloadKind::graphics) {
      const DrawTarget image = draw_target(source);
      VkBufferImageCopy region{};
      region.imageSubresource = {aspect_of(image.format),
                                 producer.target ? producer.target->mip : 0,
                                 producer.target ? producer.target->slice : 0, 1};
      region.imageExtent = {image.width, image.height, 1};
      vkCmdCopyImageToBuffer(cmd, image.image,
                             layout_for_barrier_layout(plan_.dependency(w, 0).layout_at_consumer),
                             outputs_[w].buffer, 1, &region);
    } else {
      const VkBufferCopy region{0, 0, spec.bytes};
      vkCmdCopyBuffer(cmd, outputs_[source].buffer, outputs_[w].buffer, 1, &region);
    }
  } else if (const std::optional<TextureTarget>& target = spec.target) {
    // Into a declared texture's subresource, tightly packed rows (its target transition left
    // it in TRANSFER_DST_OPTIMAL).
    const TextureSpec& texture = scenario_.textures[target->texture];
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, target->mip, target->slice, 1};
    region.imageExtent = {mip_size(texture.width, target->mip),
                          mip_size(texture.height, target->mip), 1};
    vkCmdCopyBufferToImage(cmd, uploads_[w].buffer, textures_[target->texture].image,
                           VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
  } else {
    const VkBufferCopy region{0, 0, uploads_[w].size};
    vkCmdCopyBuffer(cmd, uploads_[w].buffer, outputs_[w].buffer, 1, &region);
  }
  if (timestamps)
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, queries_,
                         static_cast<std::uint32_t>(2 * w + 1));
  if (settings_.stamping) {
    order(VK_PIPELINE_STAGE_2_COPY_BIT, VK_PIPELINE_STAGE_2_CLEAR_BIT);
    vkCmdFillBuffer(cmd, stamps_.buffer, slot + 4, 4, frame);
  }
}

void record_global_barrier(VkCommandBuffer cmd, const SyncScope& src, const SyncScope& dst,
                           const std::vector<VkImageMemoryBarrier2>& images) {
  VkMemoryBarrier2 global{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  global.srcStageMask = src.stages;
  global.srcAccessMask = src.access;
  global.dstStageMask = dst.stages;
  global.dstAccessMask = dst.access;
  VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dependency.memoryBarrierCount = 1;
  dependency.pMemoryBarriers = &global;
  dependency.imageMemoryBarrierCount = static_cast<std::uint32_t>(images.size());
  dependency.pImageMemoryBarriers = images.data();
  vkCmdPipelineBarrier2(cmd, &dependency);
}

VkImageMemoryBarrier2 to_start_layout(VkImage image, VkImageAspectFlags aspect,
                                      VkImageLayout old_layout, VkImageLayout new_layout,
                                      std::uint32_t mip, std::uint32_t layer) {
  VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
  b.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  b.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
  switch (new_layout) {
    case VK_IMAGE_LAYOUT_GENERAL:  // a dispatch's storage writes
      b.dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
      b.dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
      break;
    case VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL:  // a copy's
      b.dstStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
      b.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
      break;
    case VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL:  // a draw's
      b.dstStageMask = VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT;
      b.dstAccessMask = VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT;
      break;
    case VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL:  // a depth draw's
      b.dstStageMask = VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT |
                       VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT;
      b.dstAccessMask = VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                        VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
      break;
    default:  // a layout a read left (the heap holder's, once): whatever runs next, on any queue
      b.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
      b.dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
  }
  b.oldLayout = old_layout;
  b.newLayout = new_layout;
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {aspect, mip, 1, layer, 1};
  return b;
}

void ScenarioDevice::record_workload(VkCommandBuffer cmd, std::size_t w, std::uint32_t frame,
                                     bool timestamps) {
  const WorkloadSpec& spec = scenario_.workloads[w];
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i) {
    if (plan_.barriers.dependencies[i].consumer != w) continue;
    const std::size_t producer = plan_.barriers.dependencies[i].producer;
    if (!ops_[i].wait_event_before_consumer.empty())
      record_event(cmd, events_[i], ops_[i].wait_event_before_consumer, producer, false);
    record_barriers(cmd, ops_[i].barriers_before_consumer, producer);
  }
  for (const TargetOp& op : target_ops_[w]) {
    // Its subresource into its writer's layout (COLOR_ATTACHMENT, DEPTH_STENCIL_ATTACHMENT,
    // GENERAL or TRANSFER_DST) after a read or from the frame start, or discarded from UNDEFINED.
    // From the frame start it waits for nothing (the enhanced form's SyncBefore NONE): the restore
    // was recorded in this queue's prepare submission, before the gate, and layout transitions on
    // one queue happen in submission order. An aliasing hand-over's barriers name the texture that
    // held the heap and the one that takes it.
    RecordedDependency dependency;
    fill_dependency(dependency, {op.desc}, VK_NULL_HANDLE, textures_[op.texture].image,
                    aspect_of(textures_[op.texture].format));
    vkCmdPipelineBarrier2(cmd, &dependency.info);
  }
  if (spec.kind == WorkloadKind::copy) {
    record_copy(cmd, w, frame, timestamps);
  } else {
    if (timestamps)
      vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, queries_,
                           static_cast<std::uint32_t>(2 * w));
    const PushConstants pc =
        frame_params(static_cast<std::uint32_t>(w), workload_shape(scenario_, w), spec.iterations,
                     frame, settings_.stamping, producers_[w]);
    record_perlin(cmd, w, pc, 1);
    if (timestamps)
      vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, queries_,
                           static_cast<std::uint32_t>(2 * w + 1));
  }
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i) {
    if (plan_.barriers.dependencies[i].producer != w) continue;
    if (!ops_[i].set_event_after_producer.empty())
      record_event(cmd, events_[i], ops_[i].set_event_after_producer, w, true);
    record_barriers(cmd, ops_[i].barriers_after_producer, w);
  }
}

Status ScenarioDevice::record_frame(std::uint32_t frame) {
  for (std::size_t qi = 0; qi < queues_.size(); ++qi) {
    QueueState& q = queues_[qi];
    GPUOVERLAP_VK(vkResetCommandPool(device_, q.pool, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;

    // Prepare (before the gate, not measured): zero this queue's counters, reset its queries
    // and events, bring its render targets back to RENDER_TARGET from the layout the last
    // frame left them in, then one barrier so that everything submitted later on this queue
    // sees it.
    GPUOVERLAP_VK(vkBeginCommandBuffer(q.prepare, &bi));
    std::vector<VkImageMemoryBarrier2> target_barriers;
    for (std::size_t w : q.workloads) {
      vkCmdFillBuffer(q.prepare, counters_.buffer, w * slot_stride_, kSlotBytes, 0);
      vkCmdResetQueryPool(q.prepare, queries_, static_cast<std::uint32_t>(2 * w), 2);
      if (targets_[w].image && target_layouts_[w] != VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL) {
        target_barriers.push_back(to_start_layout(targets_[w].image, VK_IMAGE_ASPECT_COLOR_BIT,
                                                  target_layouts_[w],
                                                  VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0, 0));
      }
    }
    // Declared textures: every subresource, on the queue of the texture's writers (a barrier
    // on a range may have moved subresources that nothing writes).
    for (std::size_t t = 0; t < textures_.size(); ++t) {
      const auto first =
          std::find_if(scenario_.workloads.begin(), scenario_.workloads.end(),
                       [&](const WorkloadSpec& w) { return w.target && w.target->texture == t; });
      if (first == scenario_.workloads.end() || first->queue != qi) continue;
      // A texture in a heap is brought in and out by the frame's hand-overs; a barrier here
      // would write memory another texture may hold. Only the one holding the heap when the
      // frame starts is brought, once, to where the frame leaves it (its first hand-over
      // takes the heap from there); after the first frame it already is there.
      const bool aliased = plan_.barriers.texture_aliased[t];
      if (aliased && !plan_.barriers.texture_holds_heap_at_start[t]) continue;
      const TextureSpec& texture = scenario_.textures[t];
      const VkImageLayout start =
          layout_for_barrier_layout(aliased ? plan_.barriers.texture_final_layouts[t].front()
                                            : plan_.barriers.texture_start_layouts[t]);
      for (std::uint32_t slice = 0; slice < texture.slices; ++slice)
        for (std::uint32_t mip = 0; mip < texture.mips; ++mip) {
          const VkImageLayout layout =
              texture_layouts_[t][subresource_index(mip, slice, texture.mips)];
          if (layout != start)
            target_barriers.push_back(to_start_layout(
                textures_[t].image, aspect_of(textures_[t].format), layout, start, mip, slice));
        }
    }
    for (std::size_t i = 0; i < events_.size(); ++i)
      if (events_[i] && scenario_.workloads[plan_.barriers.dependencies[i].consumer].queue == qi)
        vkCmdResetEvent2(q.prepare, events_[i], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    record_global_barrier(q.prepare,
                          {VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT},
                          {VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                           VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT},
                          target_barriers);
    GPUOVERLAP_VK(vkEndCommandBuffer(q.prepare));
  }

  // Work (released by the gate): one command buffer per submission of the frame plan.
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    const Segment& segment = plan_.segments[i];
    const QueueState& q = queues_[segment.queue];
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    GPUOVERLAP_VK(vkBeginCommandBuffer(segment_buffers_[i], &bi));
    const bool timestamps = q.timestamp_valid_bits > 0 && settings_.timestamp_queries;
    for (std::size_t w : segment.workloads)
      record_workload(segment_buffers_[i], w, frame, timestamps);
    GPUOVERLAP_VK(vkEndCommandBuffer(segment_buffers_[i]));
  }
  for (std::size_t w = 0; w < targets_.size(); ++w)
    if (targets_[w].image)
      target_layouts_[w] = layout_for_barrier_layout(plan_.barriers.final_layouts[w]);
  for (std::size_t t = 0; t < textures_.size(); ++t)
    for (std::size_t sub = 0; sub < texture_layouts_[t].size(); ++sub)
      texture_layouts_[t][sub] =
          layout_for_barrier_layout(plan_.barriers.texture_final_layouts[t][sub]);
  return ok_status();
}

}  // namespace gpuoverlap::vk
