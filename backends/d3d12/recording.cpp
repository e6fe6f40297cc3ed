// What a frame records on D3D12: each queue's prepare list (counters zeroed, render targets
// back to RENDER_TARGET, declared textures to where a frame starts them), then one command list per
// submission of the frame plan with each workload's barriers (the plan's own D3D12 barriers),
// timestamps and Perlin dispatch or draw, or copy between its WriteBufferImmediate stamps.
//
// Buffers and ExecuteCommandLists: a buffer decays to COMMON when the GPU completes the
// ExecuteCommandLists that used it, and is promoted to the state of its first use in the next
// one. The plan tracks states through the whole frame, so a transition it places in another
// command list than the producer's write names the buffer's real state there: COMMON. The
// same boundary is why a split pair whose halves would fall in two command lists (which D3D12
// does not allow) is recorded as one full barrier at its END.
//
// Enhanced barriers (ID3D12GraphicsCommandList7::Barrier, where the runtime has them) are the
// plan's own D3D12_GLOBAL/BUFFER/TEXTURE_BARRIERs with the resource filled in; buffers have no
// layout, so the decay above does not concern them.
#include <algorithm>
#include <utility>

#include "backends/d3d12/hresult.h"
#include "backends/d3d12/scenario_device.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::d3d12 {

namespace {

D3D12_RESOURCE_BARRIER transition(ID3D12Resource* resource, D3D12_RESOURCE_STATES before,
                                  D3D12_RESOURCE_STATES after) {
  D3D12_RESOURCE_BARRIER barrier = legacy_transition(before, after);
  barrier.Transition.pResource = resource;
  return barrier;
}

// The work a frame-start restore into `layout` comes before, for an enhanced barrier's
// SyncAfter and AccessAfter: the first write of the frame, a draw into a render target or a
// depth buffer, a copy into a texture, or else a dispatch through a UAV.
std::pair<D3D12_BARRIER_SYNC, D3D12_BARRIER_ACCESS> first_write_in(D3D12_BARRIER_LAYOUT layout) {
  switch (layout) {
    case D3D12_BARRIER_LAYOUT_RENDER_TARGET:
      return {D3D12_BARRIER_SYNC_RENDER_TARGET, D3D12_BARRIER_ACCESS_RENDER_TARGET};
    case D3D12_BARRIER_LAYOUT_DEPTH_STENCIL_WRITE:
      return {D3D12_BARRIER_SYNC_DEPTH_STENCIL, D3D12_BARRIER_ACCESS_DEPTH_STENCIL_WRITE};
    case D3D12_BARRIER_LAYOUT_COPY_DEST:
      return {D3D12_BARRIER_SYNC_COPY, D3D12_BARRIER_ACCESS_COPY_DEST};
    default:
      return {D3D12_BARRIER_SYNC_COMPUTE_SHADING, D3D12_BARRIER_ACCESS_UNORDERED_ACCESS};
  }
}

}  // namespace

void ScenarioDevice::bind_workload(ID3D12GraphicsCommandList* list, std::size_t w,
                                   const RootConstants& constants) const {
  const bool compute = scenario_.workloads[w].kind == WorkloadKind::compute;
  ID3D12DescriptorHeap* heaps[] = {gpu_.srv_heap.get()};
  list->SetDescriptorHeaps(1, heaps);
  ID3D12Resource* output = gpu_.outputs[w] ? gpu_.outputs[w].get() : gpu_.dummy_output.get();
  const D3D12_GPU_VIRTUAL_ADDRESS slot = w * kSlotStrideBytes;
  const D3D12_GPU_DESCRIPTOR_HANDLE targets{gpu_start(gpu_.srv_heap.get()).ptr +
                                            w * kDescriptorsPerWorkload * srv_increment_};
  // The compute and graphics root signatures are the same one, bound through each's calls.
  if (compute) {
    list->SetComputeRootSignature(gpu_.root_signature.get());
    const background::PipelineHandle variant = w < bound_variants_.size() ? bound_variants_[w] : 0;
    list->SetPipelineState(variant ? reinterpret_cast<ID3D12PipelineState*>(variant)
                                   : gpu_.compute_pipeline.get());
    list->SetComputeRoot32BitConstants(kRootConstants, sizeof constants / 4, &constants, 0);
    list->SetComputeRootShaderResourceView(kRootInput, gpu_.input->GetGPUVirtualAddress());
    list->SetComputeRootUnorderedAccessView(kRootOutput, output->GetGPUVirtualAddress());
    list->SetComputeRootUnorderedAccessView(kRootCounters,
                                            gpu_.counters->GetGPUVirtualAddress() + slot);
    list->SetComputeRootUnorderedAccessView(kRootStamps,
                                            gpu_.stamps->GetGPUVirtualAddress() + slot);
    for (UINT b = 0; b < kMaxProducerBindings; ++b)
      list->SetComputeRootShaderResourceView(kRootProducerBuffers + b, producer_buffers_[w][b]);
    list->SetComputeRootDescriptorTable(kRootProducerTargets, targets);
    return;
  }
  list->SetGraphicsRootSignature(gpu_.root_signature.get());
  list->SetPipelineState(graphics_pipeline_for(draw_target(w).format));
  list->SetGraphicsRoot32BitConstants(kRootConstants, sizeof constants / 4, &constants, 0);
  list->SetGraphicsRootShaderResourceView(kRootInput, gpu_.input->GetGPUVirtualAddress());
  list->SetGraphicsRootUnorderedAccessView(kRootOutput, output->GetGPUVirtualAddress());
  list->SetGraphicsRootUnorderedAccessView(kRootCounters,
                                           gpu_.counters->GetGPUVirtualAddress() + slot);
  list->SetGraphicsRootUnorderedAccessView(kRootStamps, gpu_.stamps->GetGPUVirtualAddress() + slot);
  for (UINT b = 0; b < kMaxProducerBindings; ++b)
    list->SetGraphicsRootShaderResourceView(kRootProducerBuffers + b, producer_buffers_[w][b]);
  list->SetGraphicsRootDescriptorTable(kRootProducerTargets, targets);
}

void ScenarioDevice::record_perlin(ID3D12GraphicsCommandList* list, std::size_t w,
                                   const RootConstants& constants, std::uint32_t draws) const {
  bind_workload(list, w, constants);
  if (scenario_.workloads[w].kind == WorkloadKind::compute) {
    list->Dispatch(constants.thread_count / kThreadsPerDispatchGroup, 1, 1);
    return;
  }
  const DrawTarget target = draw_target(w);
  if (target.depth)
    list->OMSetRenderTargets(0, nullptr, FALSE, &target.view);
  else
    list->OMSetRenderTargets(1, &target.view, FALSE, nullptr);
  const D3D12_VIEWPORT viewport{
      0, 0, static_cast<float>(target.width), static_cast<float>(target.height), 0, 1};
  const D3D12_RECT scissor{0, 0, static_cast<LONG>(target.width), static_cast<LONG>(target.height)};
  list->RSSetViewports(1, &viewport);
  list->RSSetScissorRects(1, &scissor);
  list->IASetPrimitiveTopology(D3D_PRIMITIVE_TOPOLOGY_TRIANGLELIST);
  for (std::uint32_t i = 0; i < draws; ++i) list->DrawInstanced(3, 1, 0, 0);
}

void ScenarioDevice::record_dependency_barriers(ID3D12GraphicsCommandList* list,
                                                std::size_t segment, std::size_t dependency,
                                                Placement placement) const {
  const DependencyPlan& d = plan_.barriers.dependencies[dependency];
  const bool buffer = d.resource == ResourceKind::buffer;
  ID3D12Resource* resource = buffer      ? gpu_.outputs[d.producer].get()
                             : d.texture ? gpu_.textures[*d.texture].get()
                                         : gpu_.targets[d.producer].get();
  const bool producer_in_this_list = segment_of_[d.producer] == segment;
  const bool split_spans_lists = segment_of_[d.producer] != segment_of_[d.consumer];
  std::vector<D3D12_RESOURCE_BARRIER> barriers;
  std::vector<EnhancedBarrier> enhanced;
  for (const PlacedBarrier& placed : d.barriers) {
    if (placed.placement != placement) continue;
    if (const auto* e = std::get_if<EnhancedBarrier>(&placed.barrier)) {
      EnhancedBarrier barrier = *e;
      if (split_spans_lists) {
        // The BEGIN half (SyncAfter SPLIT) is dropped; the END half waits for everything.
        bool begin = false;
        std::visit(
            [&](auto& b) {
              begin = b.SyncAfter == D3D12_BARRIER_SYNC_SPLIT;
              if (b.SyncBefore == D3D12_BARRIER_SYNC_SPLIT) b.SyncBefore = D3D12_BARRIER_SYNC_ALL;
            },
            barrier);
        if (begin) continue;
      }
      enhanced.push_back(barrier);
      continue;
    }
    D3D12_RESOURCE_BARRIER barrier = std::get<D3D12_RESOURCE_BARRIER>(placed.barrier);
    if (split_spans_lists) {
      if (barrier.Flags == D3D12_RESOURCE_BARRIER_FLAG_BEGIN_ONLY) continue;
      barrier.Flags = D3D12_RESOURCE_BARRIER_FLAG_NONE;
    }
    if (barrier.Type == D3D12_RESOURCE_BARRIER_TYPE_UAV) {
      barrier.UAV.pResource = resource;
    } else if (barrier.Type == D3D12_RESOURCE_BARRIER_TYPE_TRANSITION) {
      barrier.Transition.pResource = resource;
      if (buffer && !producer_in_this_list)
        barrier.Transition.StateBefore = D3D12_RESOURCE_STATE_COMMON;
      if (barrier.Transition.StateBefore == barrier.Transition.StateAfter) continue;
    }
    barriers.push_back(barrier);
  }
  if (!barriers.empty()) list->ResourceBarrier(static_cast<UINT>(barriers.size()), barriers.data());
  if (!enhanced.empty()) record_enhanced_barriers(segment, enhanced, resource);
}

// Contract: the plan has enhanced barriers, so segment_lists7 exists (check_barriers).
void ScenarioDevice::record_enhanced_barriers(std::size_t segment,
                                              const std::vector<EnhancedBarrier>& barriers,
                                              ID3D12Resource* resource) const {
  std::vector<D3D12_GLOBAL_BARRIER> globals;
  std::vector<D3D12_BUFFER_BARRIER> buffers;
  std::vector<D3D12_TEXTURE_BARRIER> textures;
  for (const EnhancedBarrier& barrier : barriers) {
    if (const auto* g = std::get_if<D3D12_GLOBAL_BARRIER>(&barrier)) {
      globals.push_back(*g);
    } else if (const auto* b = std::get_if<D3D12_BUFFER_BARRIER>(&barrier)) {
      D3D12_BUFFER_BARRIER filled = *b;
      filled.pResource = resource;
      filled.Offset = 0;
      filled.Size = UINT64_MAX;  // the whole buffer
      buffers.push_back(filled);
    } else {
      D3D12_TEXTURE_BARRIER filled = std::get<D3D12_TEXTURE_BARRIER>(barrier);
      filled.pResource = resource;  // its subresources are the planner's
      textures.push_back(filled);
    }
  }
  std::vector<D3D12_BARRIER_GROUP> groups;
  auto add = [&](D3D12_BARRIER_TYPE type, std::size_t count, const void* data) {
    if (count == 0) return;
    D3D12_BARRIER_GROUP group{};
    group.Type = type;
    group.NumBarriers = static_cast<UINT32>(count);
    if (type == D3D12_BARRIER_TYPE_GLOBAL)
      group.pGlobalBarriers = static_cast<const D3D12_GLOBAL_BARRIER*>(data);
    else if (type == D3D12_BARRIER_TYPE_BUFFER)
      group.pBufferBarriers = static_cast<const D3D12_BUFFER_BARRIER*>(data);
    else
      group.pTextureBarriers = static_cast<const D3D12_TEXTURE_BARRIER*>(data);
    groups.push_back(group);
  };
  add(D3D12_BARRIER_TYPE_GLOBAL, globals.size(), globals.data());
  add(D3D12_BARRIER_TYPE_BUFFER, buffers.size(), buffers.data());
  add(D3D12_BARRIER_TYPE_TEXTURE, textures.size(), textures.data());
  gpu_.segment_lists7[segment]->Barrier(static_cast<UINT32>(groups.size()), groups.data());
}

void ScenarioDevice::record_workload(ID3D12GraphicsCommandList* list, std::size_t segment,
                                     std::size_t w, std::uint32_t frame, bool timestamps) {
  const WorkloadSpec& spec = scenario_.workloads[w];
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i)
    if (plan_.barriers.dependencies[i].consumer == w)
      record_dependency_barriers(list, segment, i, Placement::before_consumer);
  // Its subresource into its layout for the write (RENDER_TARGET, DEPTH_WRITE, UNORDERED_ACCESS
  // or COPY_DEST) after a read or from the frame start, or discarded from UNDEFINED. From the
  // frame start the enhanced form waits for nothing (SyncBefore NONE): the restore is in the
  // queue's prepare list, an ExecuteCommandLists of its own before this one, which orders it.
  for (const TargetTransition& transition : plan_.barriers.target_transitions) {
    if (transition.workload != w) continue;
    ID3D12Resource* texture = gpu_.textures[transition.texture].get();
    if (const auto* e = std::get_if<EnhancedBarrier>(&transition.barrier)) {
      record_enhanced_barriers(segment, {*e}, texture);
      continue;
    }
    D3D12_RESOURCE_BARRIER barrier = std::get<D3D12_RESOURCE_BARRIER>(transition.barrier);
    if (barrier.Type == D3D12_RESOURCE_BARRIER_TYPE_ALIASING) {
      // An aliasing hand-over: the texture that held the heap to this one, which D3D12
      // requires to be initialised before its first use (every declared texture is a render
      // target or a depth stencil). A direct list discards a render target in RENDER_TARGET
      // and a depth stencil in DEPTH_WRITE, so a texture resting in UNORDERED_ACCESS goes to
      // RENDER_TARGET and back (a depth texture rests in DEPTH_WRITE: only draws write it); a
      // compute list discards it in UNORDERED_ACCESS, where a dispatch leaves it. A texture
      // resting in COPY_DEST (only copies write it) is not discarded: a compute list could not,
      // and the copy that follows writes its one subresource whole, which initialises it too.
      barrier.Aliasing.pResourceBefore = gpu_.textures[*transition.aliasing_from].get();
      barrier.Aliasing.pResourceAfter = texture;
      list->ResourceBarrier(1, &barrier);
      const D3D12_RESOURCE_STATES rest = plan_.barriers.texture_start_states[transition.texture];
      if (rest == D3D12_RESOURCE_STATE_COPY_DEST) continue;
      const bool detour = rest != D3D12_RESOURCE_STATE_RENDER_TARGET &&
                          rest != D3D12_RESOURCE_STATE_DEPTH_WRITE &&
                          scenario_.queues[spec.queue].type == QueueType::direct;
      const D3D12_RESOURCE_BARRIER there =
          d3d12::transition(texture, rest, D3D12_RESOURCE_STATE_RENDER_TARGET);
      const D3D12_RESOURCE_BARRIER back =
          d3d12::transition(texture, D3D12_RESOURCE_STATE_RENDER_TARGET, rest);
      if (detour) list->ResourceBarrier(1, &there);
      list->DiscardResource(texture, nullptr);
      if (detour) list->ResourceBarrier(1, &back);
      continue;
    }
    barrier.Transition.pResource = texture;
    list->ResourceBarrier(1, &barrier);
  }
  if (spec.kind == WorkloadKind::copy) {
    record_copy(list, segment, w, frame, timestamps);
  } else {
    if (timestamps)
      list->EndQuery(gpu_.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, static_cast<UINT>(2 * w));
    const RootConstants constants =
        frame_params(static_cast<std::uint32_t>(w), workload_shape(scenario_, w), spec.iterations,
                     frame, settings_.stamping, producers_[w]);
    record_perlin(list, w, constants, 1);
    if (timestamps)
      list->EndQuery(gpu_.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, static_cast<UINT>(2 * w + 1));
  }
  for (std::size_t i = 0; i < plan_.barriers.dependencies.size(); ++i)
    if (plan_.barriers.dependencies[i].producer == w)
      record_dependency_barriers(list, segment, i, Placement::after_producer);
}

// The stamp protocol's words (workloads/perlin.hlsl), written by the command processor: the
// frame number at byte 0 once the commands before the copy have started (MARKER_IN), at byte 4
// once every command before it, the copy included, has completed (MARKER_OUT). Hazards: the
// start mark follows the start of the barrier before the copy, not its end (on hardware whose
// command processor finishes a barrier's wait before it takes the next command, as is usual,
// that is the same); the end mark waits for every earlier command of the list, not the copy
// alone (Vulkan's end fill waits for the COPY stage only). Contract: where stamping, the copy
// stamp buffer and segment_lists2 exist (create_copy_resources, check_copies); the buffers a copy
// reads and writes are in COPY_SOURCE and COPY_DEST (the plan's barriers; an UPLOAD heap's
// buffer is GENERIC_READ, which includes COPY_SOURCE; a READBACK heap's is COPY_DEST).
void ScenarioDevice::record_copy(ID3D12GraphicsCommandList* list, std::size_t segment,
                                 std::size_t w, std::uint32_t frame, bool timestamps) const {
  auto stamp = [&](UINT64 offset, D3D12_WRITEBUFFERIMMEDIATE_MODE mode) {
    if (!settings_.stamping) return;
    const D3D12_WRITEBUFFERIMMEDIATE_PARAMETER parameter{
        gpu_.copy_stamps->GetGPUVirtualAddress() + w * kSlotStrideBytes + offset, frame};
    gpu_.segment_lists2[segment]->WriteBufferImmediate(1, &parameter, &mode);
  };
  stamp(0, D3D12_WRITEBUFFERIMMEDIATE_MODE_MARKER_IN);
  if (timestamps)
    list->EndQuery(gpu_.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, static_cast<UINT>(2 * w));
  const WorkloadSpec& spec = scenario_.workloads[w];
  const std::optional<TextureCopy>& texture = texture_copies_[w];
  if (is_readback(spec)) {
    const std::size_t source = spec.depends_on.front().producer;
    if (texture) {
      D3D12_TEXTURE_COPY_LOCATION to{};
      to.pResource = gpu_.outputs[w].get();
      to.Type = D3D12_TEXTURE_COPY_TYPE_PLACED_FOOTPRINT;
      to.PlacedFootprint = texture->footprint;
      D3D12_TEXTURE_COPY_LOCATION from{};
      from.pResource = texture->texture;
      from.Type = D3D12_TEXTURE_COPY_TYPE_SUBRESOURCE_INDEX;
      from.SubresourceIndex = texture->subresource;
      list->CopyTextureRegion(&to, 0, 0, 0, &from, nullptr);
    } else {
      list->CopyBufferRegion(gpu_.outputs[w].get(), 0, gpu_.outputs[source].get(), 0, spec.bytes);
    }
  } else if (texture) {
    D3D12_TEXTURE_COPY_LOCATION to{};
    to.pResource = texture->texture;
    to.Type = D3D12_TEXTURE_COPY_TYPE_SUBRESOURCE_INDEX;
    to.SubresourceIndex = texture->subresource;
    D3D12_TEXTURE_COPY_LOCATION from{};
    from.pResource = gpu_.uploads[w].get();
    from.Type = D3D12_TEXTURE_COPY_TYPE_PLACED_FOOTPRINT;
    from.PlacedFootprint = texture->footprint;
    list->CopyTextureRegion(&to, 0, 0, 0, &from, nullptr);
  } else {
    list->CopyBufferRegion(gpu_.outputs[w].get(), 0, gpu_.uploads[w].get(), 0, spec.bytes);
  }
  if (timestamps)
    list->EndQuery(gpu_.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, static_cast<UINT>(2 * w + 1));
  stamp(4, D3D12_WRITEBUFFERIMMEDIATE_MODE_MARKER_OUT);
}

// Contract: the frame before completed on every queue (wait_frame), so the allocators' memory
// is free to reuse and the CPU-side target states are the GPU's.
void ScenarioDevice::record_counter_reset(ID3D12GraphicsCommandList* list,
                                          const std::vector<std::size_t>& workloads) const {
  for (std::size_t w : workloads)
    list->CopyBufferRegion(gpu_.counters.get(), w * kSlotStrideBytes, gpu_.zeros.get(), 0,
                           kSlotBytes);
}

// Per render target, once when the scenario opens: whether enhanced barriers move it (tracked
// by layout) or legacy ones (by state), and the state a frame leaves it in (the last
// transition the plan records for it).
void ScenarioDevice::plan_target_tracking() {
  const std::size_t count = scenario_.workloads.size();
  enhanced_targets_.assign(count, false);
  target_layouts_.assign(count, D3D12_BARRIER_LAYOUT_RENDER_TARGET);
  final_target_states_.assign(count, D3D12_RESOURCE_STATE_RENDER_TARGET);
  enhanced_textures_.assign(scenario_.textures.size(), false);
  for (const DependencyPlan& d : plan_.barriers.dependencies) {
    if (d.resource != ResourceKind::texture) continue;
    if (d.texture) {
      if (is_enhanced(d.kind)) enhanced_textures_[*d.texture] = true;
      continue;  // its subresources' states are the plan's texture_final_states
    }
    if (is_enhanced(d.kind)) enhanced_targets_[d.producer] = true;
    for (const PlacedBarrier& placed : d.barriers)
      if (const auto* legacy = std::get_if<D3D12_RESOURCE_BARRIER>(&placed.barrier);
          legacy && legacy->Type == D3D12_RESOURCE_BARRIER_TYPE_TRANSITION &&
          legacy->Flags != D3D12_RESOURCE_BARRIER_FLAG_BEGIN_ONLY)
        final_target_states_[d.producer] = legacy->Transition.StateAfter;
  }
}

Status ScenarioDevice::record_frame(std::uint32_t frame) {
  for (QueueState& q : gpu_.queues) {
    GPUOVERLAP_HR(q.allocator->Reset(), "ID3D12CommandAllocator::Reset");
    ID3D12GraphicsCommandList* prepare = q.prepare.get();
    GPUOVERLAP_HR(prepare->Reset(q.allocator.get(), nullptr), "ID3D12GraphicsCommandList::Reset");
    // Not measured: the counters of this queue's workloads zeroed (the ExecuteCommandLists
    // boundary orders the copies before the work, see the top of this file), and its render
    // targets back in RENDER_TARGET from where the last frame left them.
    record_counter_reset(prepare, q.workloads);
    std::vector<D3D12_RESOURCE_BARRIER> targets;
    std::vector<D3D12_TEXTURE_BARRIER> layouts;
    for (std::size_t w : q.workloads) {
      if (!gpu_.targets[w]) continue;
      if (enhanced_targets_[w]) {
        // A target whose barriers are enhanced goes back by layout: nothing of the last frame
        // is pending (it completed), so no earlier sync or access is named.
        if (target_layouts_[w] != D3D12_BARRIER_LAYOUT_RENDER_TARGET)
          layouts.push_back({D3D12_BARRIER_SYNC_NONE,
                             D3D12_BARRIER_SYNC_RENDER_TARGET,
                             D3D12_BARRIER_ACCESS_NO_ACCESS,
                             D3D12_BARRIER_ACCESS_RENDER_TARGET,
                             target_layouts_[w],
                             D3D12_BARRIER_LAYOUT_RENDER_TARGET,
                             gpu_.targets[w].get(),
                             {0xFFFFFFFFu, 0, 0, 0, 0, 0},
                             D3D12_TEXTURE_BARRIER_FLAG_NONE});
      } else if (target_states_[w] != D3D12_RESOURCE_STATE_RENDER_TARGET) {
        targets.push_back(transition(gpu_.targets[w].get(), target_states_[w],
                                     D3D12_RESOURCE_STATE_RENDER_TARGET));
      }
    }
    // Declared textures: every subresource, on the queue of the texture's writers, to where
    // the frame starts it (RENDER_TARGET, DEPTH_WRITE for a depth texture, UNORDERED_ACCESS
    // where only dispatches write it, or COPY_DEST where only copies do).
    for (std::size_t t = 0; t < scenario_.textures.size(); ++t) {
      const auto first =
          std::find_if(scenario_.workloads.begin(), scenario_.workloads.end(),
                       [&](const WorkloadSpec& w) { return w.target && w.target->texture == t; });
      if (first == scenario_.workloads.end() || &gpu_.queues[first->queue] != &q) continue;
      // A texture in a heap is brought in and out by the frame's hand-overs: a barrier here
      // would touch memory another texture holds. The one holding the heap at the frame start
      // was created where every frame leaves it.
      if (plan_.barriers.texture_aliased[t]) continue;
      const TextureSpec& texture = scenario_.textures[t];
      const D3D12_BARRIER_LAYOUT start_layout = plan_.barriers.texture_start_layouts[t];
      const D3D12_RESOURCE_STATES start_state = plan_.barriers.texture_start_states[t];
      const auto [first_sync, first_access] = first_write_in(start_layout);
      for (UINT slice = 0; slice < texture.slices; ++slice)
        for (UINT mip = 0; mip < texture.mips; ++mip) {
          const UINT sub = subresource_index(mip, slice, texture.mips);
          if (enhanced_textures_[t]) {
            if (texture_layouts_[t][sub] != start_layout)
              layouts.push_back({D3D12_BARRIER_SYNC_NONE,
                                 first_sync,
                                 D3D12_BARRIER_ACCESS_NO_ACCESS,
                                 first_access,
                                 texture_layouts_[t][sub],
                                 start_layout,
                                 gpu_.textures[t].get(),
                                 {mip, 1, slice, 1, 0, 1},
                                 D3D12_TEXTURE_BARRIER_FLAG_NONE});
          } else if (texture_states_[t][sub] != start_state) {
            D3D12_RESOURCE_BARRIER back =
                transition(gpu_.textures[t].get(), texture_states_[t][sub], start_state);
            back.Transition.Subresource = sub;
            targets.push_back(back);
          }
        }
    }
    if (!targets.empty())
      prepare->ResourceBarrier(static_cast<UINT>(targets.size()), targets.data());
    if (!layouts.empty()) {
      D3D12_BARRIER_GROUP group{};
      group.Type = D3D12_BARRIER_TYPE_TEXTURE;
      group.NumBarriers = static_cast<UINT32>(layouts.size());
      group.pTextureBarriers = layouts.data();
      q.prepare7->Barrier(1, &group);
    }
    GPUOVERLAP_HR(prepare->Close(), "ID3D12GraphicsCommandList::Close");
  }
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    const Segment& segment = plan_.segments[i];
    QueueState& q = gpu_.queues[segment.queue];
    ID3D12GraphicsCommandList* list = gpu_.segment_lists[i].get();
    GPUOVERLAP_HR(list->Reset(q.allocator.get(), nullptr), "ID3D12GraphicsCommandList::Reset");
    const bool timestamps = settings_.timestamp_queries;
    for (std::size_t w : segment.workloads) record_workload(list, i, w, frame, timestamps);
    if (timestamps)
      for (std::size_t w : segment.workloads)
        list->ResolveQueryData(gpu_.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP,
                               static_cast<UINT>(2 * w), 2, gpu_.query_readback.get(),
                               2 * w * sizeof(std::uint64_t));
    GPUOVERLAP_HR(list->Close(), "ID3D12GraphicsCommandList::Close");
  }
  for (std::size_t w = 0; w < gpu_.targets.size(); ++w) {
    if (!gpu_.targets[w]) continue;
    target_states_[w] = final_target_states_[w];
    target_layouts_[w] = plan_.barriers.final_layouts[w];
  }
  texture_states_ = plan_.barriers.texture_final_states;
  texture_layouts_ = plan_.barriers.texture_final_layouts;
  return ok_status();
}

}  // namespace gpuoverlap::d3d12
