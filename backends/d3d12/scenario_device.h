// The D3D12 objects of one scenario on one adapter, the ScenarioBackend of the frame loop
// (engine/frame_loop.cpp) and the preemption loop (engine/preemption_loop.cpp): the same
// contracts as the Vulkan backend's ScenarioDevice, in native D3D12 (no translation). Internal
// to the D3D12 backend.
//
// What maps to what:
//   scenario queue      one ID3D12CommandQueue of its type (DIRECT or COMPUTE) and priority;
//   gate                an ID3D12Fence every queue Waits on (value = frame) before its work,
//                       signalled by the CPU (release_gate);
//   cross-queue fence   an ID3D12Fence per producer another queue waits for (value = frame);
//   frame completion    an ID3D12Fence per queue, signalled after its last submission;
//   barriers            the frame plan's D3D12 barriers as they are (legacy TRANSITION and UAV,
//                       split BEGIN_ONLY/END_ONLY pairs, enhanced barriers through
//                       ID3D12GraphicsCommandList7 where D3D12_OPTIONS12 has them), with the
//                       producer's resource filled in;
//   stamps, counters    CUSTOM-heap buffers (MEMORY_POOL_L0, WRITE_COMBINE for uncached,
//                       WRITE_BACK for cached), persistently mapped; a copy's stamps are
//                       WriteBufferImmediate writes (MARKER_IN, MARKER_OUT) into another such
//                       buffer, where D3D12_OPTIONS3 offers them;
//   copies              CopyBufferRegion and CopyTextureRegion from an UPLOAD heap's buffer,
//                       or into a READBACK heap's buffer for a readback;
//   timestamps          a TIMESTAMP query heap resolved into a READBACK buffer per submission,
//                       placed on QueryPerformanceCounter by GetClockCalibration.
//
// Its methods live in one file per concern: scenario_device.cpp (device, queues, clocks, a
// frame's submission and wait), resources.cpp (memory, root signature, pipelines), recording.cpp
// (a frame's commands), streams.cpp (the preemption streams).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/d3d12/com_ptr.h"
#include "backends/d3d12/d3d12_headers.h"
#include "background/background_session.h"
#include "background/variant_slot.h"
#include "engine/executor.h"
#include "engine/scenario_backend.h"
#include "scenarios/frame_plan.h"

namespace gpuoverlap::d3d12 {

// Stamp and counter slots are 256 bytes apart: each workload's root descriptors point at its
// own slot, and 256 bytes satisfies every runtime's alignment of a root descriptor's address
// (vkd3d turns them into Vulkan buffer views, which have an offset alignment of their own).
constexpr UINT64 kSlotStrideBytes = 256;
constexpr std::uint32_t kCalibrationSamples = 8;
// Deadline of one-time setup work (the input's upload): not a frame, so not --timeout-ms.
constexpr std::int64_t kSetupTimeoutNs = 30'000'000'000;

using RootConstants = PerlinParams;  // workloads/workload.h, at b0

// The root signature's parameters, in order (perlin.hlsl's registers under GPUOVERLAP_D3D12).
enum RootParameter : UINT {
  kRootConstants = 0,        // b0
  kRootInput = 1,            // t0, root SRV
  kRootOutput = 2,           // u0, root UAV
  kRootCounters = 3,         // u1, root UAV at the workload's slot
  kRootStamps = 4,           // u2, root UAV at the workload's slot
  kRootProducerBuffers = 5,  // t1-t4, root SRVs (5..8)
  kRootProducerTargets = 9,  // t5-t8 and u3: a descriptor table of 4 SRVs and the output
                             // texture's UAV (a dispatch into a declared texture)
  kRootParameterCount = 10,
};
// A workload's run of the shader-visible heap: the producer targets' SRVs, then its UAV.
constexpr UINT kDescriptorsPerWorkload = kMaxProducerBindings + 1;

// A Win32 event for fence completions, closed when destroyed.
class WaitEvent {
 public:
  WaitEvent() : handle_(CreateEventW(nullptr, FALSE, FALSE, nullptr)) {}
  ~WaitEvent() {
    if (handle_) CloseHandle(handle_);
  }
  WaitEvent(const WaitEvent&) = delete;
  WaitEvent& operator=(const WaitEvent&) = delete;
  HANDLE get() const { return handle_; }

 private:
  HANDLE handle_;
};

// One scenario queue on the device.
struct QueueState {
  ComPtr<ID3D12CommandQueue> queue;
  D3D12_COMMAND_LIST_TYPE type = D3D12_COMMAND_LIST_TYPE_DIRECT;
  ComPtr<ID3D12CommandAllocator> allocator;     // the frame's lists; reset once a frame completed
  ComPtr<ID3D12GraphicsCommandList> prepare;    // zeroes counters, resets targets; before the gate
  ComPtr<ID3D12Fence> done;                     // frame f complete when value >= f
  ComPtr<ID3D12GraphicsCommandList7> prepare7;  // the same list, where enhanced barriers are used
  std::vector<std::size_t> workloads;           // in recording order
};

// A preemption scenario's stream: a ring of command lists on one queue.
struct StreamState {
  std::size_t queue = 0;
  std::vector<ComPtr<ID3D12CommandAllocator>> allocators;  // per ring entry
  std::vector<ComPtr<ID3D12GraphicsCommandList>> lists;
  ComPtr<ID3D12Fence> done;  // the sequence completed
};

// Every object the GPU may use. Held by one pointer so that a scenario whose work may still
// run (a timed-out frame) leaks all of them at once instead of freeing memory the GPU uses.
struct DeviceObjects {
  ComPtr<ID3D12Device> device;
  ComPtr<ID3D12Device6> device6;  // background processing; empty where the runtime has none
  std::vector<QueueState> queues;
  ComPtr<ID3D12Fence> gate;
  std::vector<ComPtr<ID3D12Fence>> fences;  // per workload; only where another queue waits
  std::vector<ComPtr<ID3D12GraphicsCommandList>> segment_lists;  // per plan segment
  // The same lists as ID3D12GraphicsCommandList7, only where the plan has enhanced barriers.
  std::vector<ComPtr<ID3D12GraphicsCommandList7>> segment_lists7;
  // The same lists as ID3D12GraphicsCommandList2, only where the scenario has copies.
  std::vector<ComPtr<ID3D12GraphicsCommandList2>> segment_lists2;
  ComPtr<ID3D12Resource> stamps, counters, zeros, input, dummy_output, dummy_target;
  // The copies' stamps: WriteBufferImmediate writes only a buffer in COPY_DEST, while the
  // shaders of every queue write `stamps` as an unordered-access view. Only with copies, and
  // stamping.
  ComPtr<ID3D12Resource> copy_stamps;
  // Per workload; empty for graphics. A copy's: its destination buffer, or its READBACK heap
  // buffer for a readback; none for a copy into a texture.
  std::vector<ComPtr<ID3D12Resource>> outputs;
  std::vector<ComPtr<ID3D12Resource>> uploads;  // per workload: an upload copy's UPLOAD buffer
  // Per workload: a draw's own render target; none where it draws into a declared texture.
  std::vector<ComPtr<ID3D12Resource>> targets;
  std::vector<ComPtr<ID3D12Heap>> heaps;         // per heap of aliased textures
  std::vector<ComPtr<ID3D12Resource>> textures;  // per declared texture
  ComPtr<ID3D12DescriptorHeap> rtv_heap, srv_heap;
  ComPtr<ID3D12DescriptorHeap> dsv_heap;  // only where a texture is a depth texture
  ComPtr<ID3D12QueryHeap> queries;
  ComPtr<ID3D12Resource> query_readback;  // 2 ticks per workload
  ComPtr<ID3D12RootSignature> root_signature;
  ComPtr<ID3D12PipelineState> compute_pipeline, graphics_pipeline;
  // Draws into declared textures of other formats than R32_FLOAT: one pipeline per format (a
  // depth texture's, keyed by D32_FLOAT, has no render target and writes the depth).
  std::vector<std::pair<DXGI_FORMAT, ComPtr<ID3D12PipelineState>>> format_pipelines;
  StreamState load_stream, urgent_stream;
  ComPtr<ID3D12QueryHeap> stream_queries;
  ComPtr<ID3D12Resource> stream_readback;
};

class ScenarioDevice final : public ScenarioBackend {
 public:
  // Contract: `adapter` outlives this object; the scenario's plan is attached and error-free.
  ScenarioDevice(IDXGIAdapter1* adapter, const Scenario& scenario, const RunSettings& settings);
  ~ScenarioDevice() override;
  ScenarioDevice(const ScenarioDevice&) = delete;
  ScenarioDevice& operator=(const ScenarioDevice&) = delete;

  Status create();
  bool gpu_may_be_busy() const { return gpu_may_be_busy_; }
  void set_gpu_may_be_busy() override { gpu_may_be_busy_ = true; }

  // ScenarioBackend (engine/scenario_backend.h).
  StampView stamps() const override;
  Status record_frame(std::uint32_t frame) override;
  GpuOutcome submit_frame(std::uint32_t frame) override;
  GpuOutcome release_gate(std::uint32_t frame) override;
  GpuOutcome wait_frame(std::uint32_t frame, std::int64_t deadline_ns) override;
  std::vector<std::optional<TimestampTicks>> read_timestamps() override;
  std::optional<GpuCalibration> calibrate() override;
  Error timeout_error() const override;
  background::BackgroundSession* background() override { return background_.get(); }
  void bind_compute_variant(std::size_t workload, std::uint64_t variant) override {
    if (workload < bound_variants_.size()) bound_variants_[workload] = variant;
  }
  Status replace_background(const Scenario& scenario) override;
  std::uint32_t last_frame() const override { return last_frame_; }
  const ScenarioDeviceFacts& facts() const override { return facts_; }
  Status prepare_streams(const StreamLayout& layout) override;
  Status record_stream(const StreamSubmission& submission) override;
  GpuOutcome submit_stream(const StreamSubmission& submission) override;
  GpuOutcome stream_completed(Stream stream, std::uint64_t& completed) override;
  GpuOutcome wait_stream(Stream stream, std::uint64_t sequence, std::int64_t deadline_ns) override;
  std::vector<std::optional<TimestampTicks>> read_stream_timestamps(Stream stream,
                                                                    std::uint32_t ring,
                                                                    std::size_t parts) override;

 private:
  // scenario_device.cpp
  Status check_barriers();
  Status check_copies();
  Status create_device();
  Status create_queues();
  Status create_queue_objects();
  Status setup_calibration();
  // `spec`'s background session over this device's compute pipeline (none without one).
  Status create_background(const std::optional<background::BackgroundSpec>& spec);
  Result<background::PipelineHandle> build_variant(const std::vector<std::uint32_t>& dxbc) const;
  void fill_facts();
  // Waits until `fence` reaches `value` or `deadline_ns` passes (QPC ns).
  GpuOutcome wait_fence(ID3D12Fence* fence, std::uint64_t value, std::int64_t deadline_ns,
                        const char* what);
  GpuOutcome outcome_of(HRESULT result, const char* call) const;

  // resources.cpp
  Status create_buffer(ComPtr<ID3D12Resource>& out, UINT64 bytes, D3D12_HEAP_TYPE heap,
                       D3D12_RESOURCE_FLAGS flags, D3D12_RESOURCE_STATES state, const char* what);
  Status create_mapped_buffer(ComPtr<ID3D12Resource>& out, UINT64 bytes,
                              D3D12_CPU_PAGE_PROPERTY page, void** mapped, const char* what);
  Status create_target(ComPtr<ID3D12Resource>& out, UINT width, UINT height,
                       D3D12_RESOURCE_STATES state, const char* what);
  Status create_resources();
  Status create_copy_resources(D3D12_CPU_PAGE_PROPERTY page);
  Status upload_input();
  Status create_pipelines();
  Status create_descriptors();

  // recording.cpp
  void bind_workload(ID3D12GraphicsCommandList* list, std::size_t w,
                     const RootConstants& constants) const;
  // Workload w's Perlin work: a dispatch of constants.thread_count threads, or `draws`
  // full-target draws (the target must be in RENDER_TARGET, or DEPTH_WRITE for a depth
  // texture).
  void record_perlin(ID3D12GraphicsCommandList* list, std::size_t w, const RootConstants& constants,
                     std::uint32_t draws) const;
  void record_workload(ID3D12GraphicsCommandList* list, std::size_t segment, std::size_t w,
                       std::uint32_t frame, bool timestamps);
  // Copy workload w between its stamps (and timestamps): an upload or a readback.
  void record_copy(ID3D12GraphicsCommandList* list, std::size_t segment, std::size_t w,
                   std::uint32_t frame, bool timestamps) const;
  void record_dependency_barriers(ID3D12GraphicsCommandList* list, std::size_t segment,
                                  std::size_t dependency, Placement placement) const;
  void record_enhanced_barriers(std::size_t segment, const std::vector<EnhancedBarrier>& barriers,
                                ID3D12Resource* resource) const;
  // Copies zeros over the counters of `workloads`, after everything earlier on the queue.
  void record_counter_reset(ID3D12GraphicsCommandList* list,
                            const std::vector<std::size_t>& workloads) const;
  Status submit_frame_commands(std::uint32_t frame);
  void plan_target_tracking();

  IDXGIAdapter1* adapter_;
  const Scenario& scenario_;
  const RunSettings& settings_;
  const FramePlan& plan_;
  bool gpu_may_be_busy_ = false;

  std::unique_ptr<DeviceObjects> owned_;  // first: leaked whole when the GPU may be busy
  DeviceObjects& gpu_;
  ScenarioDeviceFacts facts_;  // filled while create() runs, unchanged after
  std::vector<QueuePriority> granted_priority_;

  void* stamps_mapped_ = nullptr;
  void* copy_stamps_mapped_ = nullptr;
  // Per workload: where a copy to or from a texture puts its texels in its buffer (rows aligned
  // as CopyTextureRegion requires), and that texture subresource.
  struct TextureCopy {
    ID3D12Resource* texture = nullptr;
    UINT subresource = 0;
    D3D12_PLACED_SUBRESOURCE_FOOTPRINT footprint{};
  };
  std::vector<std::optional<TextureCopy>> texture_copies_;
  const std::uint64_t* query_ticks_ = nullptr;   // mapped query_readback
  const std::uint64_t* stream_ticks_ = nullptr;  // mapped stream_readback
  UINT srv_increment_ = 0, rtv_increment_ = 0, dsv_increment_ = 0;
  std::vector<std::uint32_t> producers_;  // per workload: RootConstants::producers
  std::vector<std::array<D3D12_GPU_VIRTUAL_ADDRESS, kMaxProducerBindings>> producer_buffers_;
  std::vector<std::size_t> segment_of_;                     // per workload: its plan segment
  std::vector<D3D12_RESOURCE_STATES> target_states_;        // per workload: where its target is now
  std::vector<D3D12_RESOURCE_STATES> final_target_states_;  // per workload: where a frame ends
  std::vector<bool> enhanced_targets_;  // per workload: its target is moved by enhanced barriers
  std::vector<D3D12_BARRIER_LAYOUT> target_layouts_;  // per workload, for enhanced targets
  // Declared textures, per texture and subresource (subresource_index order): where each is
  // now, by state and by layout, and whether enhanced barriers move it.
  std::vector<std::vector<D3D12_RESOURCE_STATES>> texture_states_;
  std::vector<std::vector<D3D12_BARRIER_LAYOUT>> texture_layouts_;
  std::vector<bool> enhanced_textures_;
  // Per texture: its subresources' first RTV in the RTV heap, or first DSV in the DSV heap for
  // a depth texture.
  std::vector<UINT> texture_view_first_;
  // What workload `w` draws into and how big: its own render target, or the subresource of a
  // declared texture it targets.
  struct DrawTarget {
    ID3D12Resource* resource = nullptr;
    D3D12_CPU_DESCRIPTOR_HANDLE view{};  // its RTV, or its DSV where `depth`
    UINT width = 0, height = 0;
    DXGI_FORMAT format = DXGI_FORMAT_R32_FLOAT;  // the view's (the pipeline's)
    bool depth = false;  // a depth texture: bound as the depth-stencil, with no render target
  };
  DrawTarget draw_target(std::size_t w) const;
  ID3D12PipelineState* graphics_pipeline_for(DXGI_FORMAT format) const;
  WaitEvent fence_event_;
  UINT64 timestamp_frequency_ = 0;
  bool calibration_works_ = false;
  bool uses_enhanced_barriers_ = false;  // the plan has some (check_barriers)
  bool uses_copies_ = false;             // the scenario has some (check_copies)

  background::VariantSlot<background::PipelineHandle> compute_variants_;
  // Per workload, the committed variant bound in place of the build-time compute pipeline
  // (a handle from compute_variants_; 0: none). Declared after the slot, so destroyed first.
  std::vector<background::PipelineHandle> bound_variants_;
  std::unique_ptr<background::BackgroundSession> background_;
  std::uint32_t last_frame_ = 0;  // the highest frame submitted (last_frame)

  StreamLayout streams_;
};

}  // namespace gpuoverlap::d3d12
