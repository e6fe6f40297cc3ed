// The preemption streams on D3D12: what engine/preemption_loop.cpp submits (ScenarioBackend's
// stream methods). A ring of command lists per stream, each with an allocator of its own (an
// allocator is reused only once its submission completed), and a fence per stream whose value
// is the last completed sequence.
//
// Each submission starts by copying zeros over its parts' counters. Earlier submissions on the
// same queue completed their ExecuteCommandLists first (D3D12 orders them on a queue and flushes
// at their boundary), so a stream's submissions run one after the other and a workload's single
// stamp slot is reused only once its previous use finished, as on Vulkan.
#include "backends/d3d12/hresult.h"
#include "backends/d3d12/scenario_device.h"
#include "core/clock.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::d3d12 {

namespace {

// Queries per submission of a stream: two per part.
constexpr UINT kQueriesPerLoad = kMaxLoadParts * 2;

UINT first_query(const StreamLayout& layout, Stream stream, std::uint32_t ring) {
  return stream == Stream::urgent ? layout.load_ring * kQueriesPerLoad + ring * 2
                                  : ring * kQueriesPerLoad;
}

}  // namespace

Status ScenarioDevice::prepare_streams(const StreamLayout& layout) {
  if (layout.load_parts.size() > kMaxLoadParts) return make_error("a load has at most two parts");
  streams_ = layout;
  auto make_stream = [&](std::size_t workload, std::uint32_t ring, StreamState& out) -> Status {
    out.queue = scenario_.workloads[workload].queue;
    const QueueState& queue = gpu_.queues[out.queue];
    out.allocators.resize(ring);
    out.lists.resize(ring);
    for (std::uint32_t r = 0; r < ring; ++r) {
      GPUOVERLAP_HR(
          gpu_.device->CreateCommandAllocator(queue.type, __uuidof(ID3D12CommandAllocator),
                                              out.allocators[r].receive_void()),
          "CreateCommandAllocator (stream)");
      GPUOVERLAP_HR(gpu_.device->CreateCommandList(0, queue.type, out.allocators[r].get(), nullptr,
                                                   __uuidof(ID3D12GraphicsCommandList),
                                                   out.lists[r].receive_void()),
                    "CreateCommandList (stream)");
      GPUOVERLAP_HR(out.lists[r]->Close(), "ID3D12GraphicsCommandList::Close");
    }
    GPUOVERLAP_HR(gpu_.device->CreateFence(0, D3D12_FENCE_FLAG_NONE, __uuidof(ID3D12Fence),
                                           out.done.receive_void()),
                  "CreateFence (stream)");
    return ok_status();
  };
  if (!layout.load_parts.empty())
    GPUOVERLAP_TRY(make_stream(layout.load_parts.front(), layout.load_ring, gpu_.load_stream));
  if (layout.urgent)
    GPUOVERLAP_TRY(make_stream(*layout.urgent, layout.urgent_ring, gpu_.urgent_stream));
  const UINT queries = layout.load_ring * kQueriesPerLoad + layout.urgent_ring * 2;
  if (queries == 0) return ok_status();
  D3D12_QUERY_HEAP_DESC desc{D3D12_QUERY_HEAP_TYPE_TIMESTAMP, queries, 0};
  GPUOVERLAP_HR(gpu_.device->CreateQueryHeap(&desc, __uuidof(ID3D12QueryHeap),
                                             gpu_.stream_queries.receive_void()),
                "CreateQueryHeap (streams)");
  GPUOVERLAP_TRY(create_buffer(gpu_.stream_readback, UINT64{queries} * sizeof(std::uint64_t),
                               D3D12_HEAP_TYPE_READBACK, D3D12_RESOURCE_FLAG_NONE,
                               D3D12_RESOURCE_STATE_COPY_DEST, "stream timestamp readback"));
  void* mapped = nullptr;
  GPUOVERLAP_HR(gpu_.stream_readback->Map(0, nullptr, &mapped), "Map (stream timestamps)");
  stream_ticks_ = static_cast<const std::uint64_t*>(mapped);
  return ok_status();
}

Status ScenarioDevice::record_stream(const StreamSubmission& s) {
  StreamState& stream = s.stream == Stream::urgent ? gpu_.urgent_stream : gpu_.load_stream;
  ID3D12CommandAllocator* allocator = stream.allocators[s.ring].get();
  ID3D12GraphicsCommandList* list = stream.lists[s.ring].get();
  GPUOVERLAP_HR(allocator->Reset(), "ID3D12CommandAllocator::Reset (stream)");
  GPUOVERLAP_HR(list->Reset(allocator, nullptr), "ID3D12GraphicsCommandList::Reset (stream)");
  std::vector<std::size_t> workloads;
  for (const StreamPart& part : s.parts) workloads.push_back(part.workload);
  // The copies promote the counters (COMMON at the start of a command list) to COPY_DEST; the
  // shaders then use them as UAV in the same list.
  record_counter_reset(list, workloads);
  D3D12_RESOURCE_BARRIER to_uav{};
  to_uav.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
  to_uav.Transition.pResource = gpu_.counters.get();
  to_uav.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
  to_uav.Transition.StateBefore = D3D12_RESOURCE_STATE_COPY_DEST;
  to_uav.Transition.StateAfter = D3D12_RESOURCE_STATE_UNORDERED_ACCESS;
  list->ResourceBarrier(1, &to_uav);

  const UINT first = first_query(streams_, s.stream, s.ring);
  for (const StreamPart& part : s.parts) {
    const UINT query = first + static_cast<UINT>(part.part) * 2;
    if (streams_.timestamps)
      list->EndQuery(gpu_.stream_queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, query);
    const RootConstants constants =
        stream_params(static_cast<std::uint32_t>(part.workload), part.size.draws, part.size.rows,
                      part.size.groups, part.size.iterations, s.sequence);
    record_perlin(list, part.workload, constants, part.size.draws);
    if (streams_.timestamps)
      list->EndQuery(gpu_.stream_queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, query + 1);
  }
  if (streams_.timestamps)
    for (const StreamPart& part : s.parts) {
      const UINT query = first + static_cast<UINT>(part.part) * 2;
      list->ResolveQueryData(gpu_.stream_queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, query, 2,
                             gpu_.stream_readback.get(), UINT64{query} * sizeof(std::uint64_t));
    }
  GPUOVERLAP_HR(list->Close(), "ID3D12GraphicsCommandList::Close (stream)");
  return ok_status();
}

GpuOutcome ScenarioDevice::submit_stream(const StreamSubmission& submission) {
  StreamState& stream = submission.stream == Stream::urgent ? gpu_.urgent_stream : gpu_.load_stream;
  ID3D12CommandQueue* queue = gpu_.queues[stream.queue].queue.get();
  ID3D12CommandList* lists[] = {stream.lists[submission.ring].get()};
  queue->ExecuteCommandLists(1, lists);
  return outcome_of(queue->Signal(stream.done.get(), submission.sequence),
                    "ID3D12CommandQueue::Signal (stream)");
}

GpuOutcome ScenarioDevice::stream_completed(Stream stream, std::uint64_t& completed) {
  const StreamState& state = stream == Stream::urgent ? gpu_.urgent_stream : gpu_.load_stream;
  completed = state.done->GetCompletedValue();
  // A removed device completes every fence (UINT64_MAX): that is no completion.
  if (completed == UINT64_MAX) {
    completed = 0;
    return outcome_of(gpu_.device->GetDeviceRemovedReason(), "ID3D12Fence::GetCompletedValue");
  }
  return GpuOutcome::ok();
}

GpuOutcome ScenarioDevice::wait_stream(Stream stream, std::uint64_t sequence,
                                       std::int64_t deadline_ns) {
  const StreamState& state = stream == Stream::urgent ? gpu_.urgent_stream : gpu_.load_stream;
  return wait_fence(state.done.get(), sequence, deadline_ns, "waiting for the stream");
}

std::vector<std::optional<TimestampTicks>> ScenarioDevice::read_stream_timestamps(
    Stream stream, std::uint32_t ring, std::size_t parts) {
  std::vector<std::optional<TimestampTicks>> ticks(parts);
  if (!streams_.timestamps || !stream_ticks_ || parts > kMaxLoadParts) return ticks;
  const UINT first = first_query(streams_, stream, ring);
  for (std::size_t p = 0; p < parts; ++p)
    ticks[p] = TimestampTicks{stream_ticks_[first + 2 * p], stream_ticks_[first + 2 * p + 1]};
  return ticks;
}

}  // namespace gpuoverlap::d3d12
