// The D3D12 device of one scenario: the device, its queues (priorities by
// queues/priority_policy.h), fences, clocks, a frame's submission and wait.
#include "backends/d3d12/scenario_device.h"

#include <algorithm>
#include <limits>
#include <string>

#include "backends/d3d12/hresult.h"
#include "background/background_session.h"
#include "background/shader_variants.h"
#include "core/clock.h"
#include "queues/priority_policy.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::d3d12 {

namespace {

const char* priority_name(QueuePriority priority) {
  switch (priority) {
    case QueuePriority::normal:
      return "NORMAL";
    case QueuePriority::high:
      return "HIGH";
    case QueuePriority::realtime:
      return "GLOBAL_REALTIME";
  }
  return "NORMAL";
}

D3D12_BACKGROUND_PROCESSING_MODE to_d3d12(background::ProcessingMode mode) {
  switch (mode) {
    case background::ProcessingMode::allowed:
      return D3D12_BACKGROUND_PROCESSING_MODE_ALLOWED;
    case background::ProcessingMode::allow_intrusive_measurements:
      return D3D12_BACKGROUND_PROCESSING_MODE_ALLOW_INTRUSIVE_MEASUREMENTS;
    case background::ProcessingMode::disable_background_work:
      return D3D12_BACKGROUND_PROCESSING_MODE_DISABLE_BACKGROUND_WORK;
    case background::ProcessingMode::disable_profiling_by_system:
      return D3D12_BACKGROUND_PROCESSING_MODE_DISABLE_PROFILING_BY_SYSTEM;
  }
  return D3D12_BACKGROUND_PROCESSING_MODE_ALLOWED;
}

D3D12_MEASUREMENTS_ACTION to_d3d12(background::MeasurementsAction action) {
  switch (action) {
    case background::MeasurementsAction::keep_all:
      return D3D12_MEASUREMENTS_ACTION_KEEP_ALL;
    case background::MeasurementsAction::commit_results:
      return D3D12_MEASUREMENTS_ACTION_COMMIT_RESULTS;
    case background::MeasurementsAction::commit_results_high_priority:
      return D3D12_MEASUREMENTS_ACTION_COMMIT_RESULTS_HIGH_PRIORITY;
    case background::MeasurementsAction::discard_previous:
      return D3D12_MEASUREMENTS_ACTION_DISCARD_PREVIOUS;
  }
  return D3D12_MEASUREMENTS_ACTION_KEEP_ALL;
}

}  // namespace

ScenarioDevice::ScenarioDevice(IDXGIAdapter1* adapter, const Scenario& scenario,
                               const RunSettings& settings)
    : adapter_(adapter),
      scenario_(scenario),
      settings_(settings),
      plan_(frame_plan_of(scenario)),
      owned_(std::make_unique<DeviceObjects>()),
      gpu_(*owned_) {}

// Enhanced barriers are recorded through ID3D12GraphicsCommandList7::Barrier, which the
// runtime offers only where D3D12_OPTIONS12 says EnhancedBarriersSupported. Without it a
// scenario that asks for them is refused before any object exists, with the runtime's reason.
Status ScenarioDevice::check_barriers() {
  const auto enhanced =
      std::find_if(plan_.barriers.dependencies.begin(), plan_.barriers.dependencies.end(),
                   [](const DependencyPlan& d) { return is_enhanced(d.kind); });
  const auto enhanced_target = std::find_if(
      plan_.barriers.target_transitions.begin(), plan_.barriers.target_transitions.end(),
      [](const TargetTransition& t) { return std::holds_alternative<EnhancedBarrier>(t.barrier); });
  if (enhanced == plan_.barriers.dependencies.end() &&
      enhanced_target == plan_.barriers.target_transitions.end())
    return ok_status();
  const std::string consumer =
      scenario_
          .workloads[enhanced != plan_.barriers.dependencies.end() ? enhanced->consumer
                                                                   : enhanced_target->workload]
          .name;
  D3D12_FEATURE_DATA_D3D12_OPTIONS12 options12{};
  const HRESULT result =
      gpu_.device->CheckFeatureSupport(D3D12_FEATURE_D3D12_OPTIONS12, &options12, sizeof options12);
  if (FAILED(result))
    return Error{"workload '" + consumer +
                     "' asks for an enhanced barrier: enhanced barriers (D3D12_OPTIONS12): "
                     "unsupported by this runtime (" +
                     hresult_name(result) + ")",
                 static_cast<std::int64_t>(result), hresult_name(result),
                 ErrorCategory::unsupported};
  if (!options12.EnhancedBarriersSupported)
    return make_error("workload '" + consumer +
                          "' asks for an enhanced barrier: EnhancedBarriersSupported is FALSE on "
                          "this device",
                      ErrorCategory::unsupported);
  uses_enhanced_barriers_ = true;
  return ok_status();
}

// A copy has no shader to stamp it: its stamps are WriteBufferImmediate writes (recording.cpp),
// which a runtime offers per command-list type (D3D12_OPTIONS3). Where the type of a copy's
// queue lacks them (Wine's vkd3d offers none) the scenario is refused before any queue exists,
// as an unsupported feature: a copy without stamps would leave every frame unfinished. Without
// stamping (the self-test's timestamps alone) nothing is written, so nothing is asked.
Status ScenarioDevice::check_copies() {
  uses_copies_ = std::any_of(scenario_.workloads.begin(), scenario_.workloads.end(),
                             [](const WorkloadSpec& w) { return w.kind == WorkloadKind::copy; });
  if (!uses_copies_ || !settings_.stamping) return ok_status();
  D3D12_FEATURE_DATA_D3D12_OPTIONS3 options3{};
  const HRESULT result =
      gpu_.device->CheckFeatureSupport(D3D12_FEATURE_D3D12_OPTIONS3, &options3, sizeof options3);
  for (const WorkloadSpec& w : scenario_.workloads) {
    if (w.kind != WorkloadKind::copy) continue;
    const bool direct = scenario_.queues[w.queue].type == QueueType::direct;
    const std::string asked = "workload '" + w.name + "' is a copy, stamped by " +
                              "WriteBufferImmediate on a " + (direct ? "DIRECT" : "COMPUTE") +
                              " command list: ";
    if (FAILED(result))
      return Error{
          asked + "D3D12_OPTIONS3: unsupported by this runtime (" + hresult_name(result) + ")",
          static_cast<std::int64_t>(result), hresult_name(result), ErrorCategory::unsupported};
    const D3D12_COMMAND_LIST_SUPPORT_FLAGS needed =
        direct ? D3D12_COMMAND_LIST_SUPPORT_FLAG_DIRECT : D3D12_COMMAND_LIST_SUPPORT_FLAG_COMPUTE;
    if (!(options3.WriteBufferImmediateSupportFlags & needed))
      return make_error(asked +
                            "unsupported by this runtime (D3D12_OPTIONS3 "
                            "WriteBufferImmediateSupportFlags leaves that type out)",
                        ErrorCategory::unsupported);
  }
  return ok_status();
}

Status ScenarioDevice::create_device() {
  GPUOVERLAP_HR(D3D12CreateDevice(adapter_, D3D_FEATURE_LEVEL_11_0, __uuidof(ID3D12Device),
                                  gpu_.device.receive_void()),
                "D3D12CreateDevice");
  srv_increment_ =
      gpu_.device->GetDescriptorHandleIncrementSize(D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);
  rtv_increment_ = gpu_.device->GetDescriptorHandleIncrementSize(D3D12_DESCRIPTOR_HEAP_TYPE_RTV);
  dsv_increment_ = gpu_.device->GetDescriptorHandleIncrementSize(D3D12_DESCRIPTOR_HEAP_TYPE_DSV);
  return ok_status();
}

// D3D12 has no queue families: each scenario queue is a command queue of its own, created with
// its own priority, so the policy sees one "family" per queue. A refusal (E_NOTIMPL for
// GLOBAL_REALTIME under Wine, E_ACCESSDENIED without the privilege on Windows) lowers the
// priorities by the policy and creates every queue again.
Status ScenarioDevice::create_queues() {
  const std::size_t count = scenario_.queues.size();
  std::vector<MappedQueue> mapping(count);
  std::vector<PriorityAsk> asks;
  for (std::size_t q = 0; q < count; ++q) {
    mapping[q].family_index = static_cast<std::uint32_t>(q);
    asks.push_back({scenario_.queues[q].name, scenario_.queues[q].priority});
  }
  auto planned = plan_priorities(asks, mapping, count, true, "", settings_.priority_fallback);
  if (!planned) return planned.error();
  PriorityPlan& priorities = *planned;
  for (;;) {
    gpu_.queues.clear();
    gpu_.queues.resize(count);
    std::optional<Error> refusal;
    for (std::size_t q = 0; q < count && !refusal; ++q) {
      D3D12_COMMAND_QUEUE_DESC desc{};
      desc.Type = to_d3d12(scenario_.queues[q].type);
      desc.Priority = to_d3d12(priorities.family_priority[q]);
      gpu_.queues[q].type = desc.Type;
      const HRESULT result = gpu_.device->CreateCommandQueue(&desc, __uuidof(ID3D12CommandQueue),
                                                             gpu_.queues[q].queue.receive_void());
      if (SUCCEEDED(result)) continue;
      if (priorities.family_priority[q] == QueuePriority::normal)
        return hresult_error(result,
                             "CreateCommandQueue for queue '" + scenario_.queues[q].name + "'");
      refusal =
          Error{std::string("queue priority ") + priority_name(priorities.family_priority[q]) +
                    ": unsupported by this runtime",
                static_cast<std::int64_t>(result), hresult_name(result)};
    }
    if (!refusal) break;
    GPUOVERLAP_TRY(lower_after_refusal(priorities, *refusal, settings_.priority_fallback));
  }
  granted_priority_ = priorities.granted(mapping);
  facts_.priority_notes = priorities.notes;
  facts_.global_priority_requested =
      std::any_of(scenario_.queues.begin(), scenario_.queues.end(),
                  [](const QueueSpec& q) { return q.priority != QueuePriority::normal; });
  return ok_status();
}

Status ScenarioDevice::create_queue_objects() {
  ID3D12Device* device = gpu_.device.get();
  for (std::size_t q = 0; q < gpu_.queues.size(); ++q) {
    QueueState& state = gpu_.queues[q];
    state.workloads = scenario_.workloads_on(q);
    GPUOVERLAP_HR(device->CreateCommandAllocator(state.type, __uuidof(ID3D12CommandAllocator),
                                                 state.allocator.receive_void()),
                  "CreateCommandAllocator");
    GPUOVERLAP_HR(device->CreateCommandList(0, state.type, state.allocator.get(), nullptr,
                                            __uuidof(ID3D12GraphicsCommandList),
                                            state.prepare.receive_void()),
                  "CreateCommandList");
    GPUOVERLAP_HR(state.prepare->Close(), "ID3D12GraphicsCommandList::Close");
    GPUOVERLAP_HR(device->CreateFence(0, D3D12_FENCE_FLAG_NONE, __uuidof(ID3D12Fence),
                                      state.done.receive_void()),
                  "CreateFence");
  }
  GPUOVERLAP_HR(device->CreateFence(0, D3D12_FENCE_FLAG_NONE, __uuidof(ID3D12Fence),
                                    gpu_.gate.receive_void()),
                "CreateFence (gate)");

  // One command list per submission of the frame plan, from its queue's allocator.
  segment_of_.assign(scenario_.workloads.size(), 0);
  gpu_.segment_lists.resize(plan_.segments.size());
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    QueueState& queue = gpu_.queues[plan_.segments[i].queue];
    GPUOVERLAP_HR(device->CreateCommandList(0, queue.type, queue.allocator.get(), nullptr,
                                            __uuidof(ID3D12GraphicsCommandList),
                                            gpu_.segment_lists[i].receive_void()),
                  "CreateCommandList");
    GPUOVERLAP_HR(gpu_.segment_lists[i]->Close(), "ID3D12GraphicsCommandList::Close");
    for (std::size_t w : plan_.segments[i].workloads) segment_of_[w] = i;
  }
  if (uses_copies_ && settings_.stamping) {
    gpu_.segment_lists2.resize(gpu_.segment_lists.size());
    for (std::size_t i = 0; i < gpu_.segment_lists.size(); ++i)
      GPUOVERLAP_HR(gpu_.segment_lists[i]->QueryInterface(__uuidof(ID3D12GraphicsCommandList2),
                                                          gpu_.segment_lists2[i].receive_void()),
                    "QueryInterface (ID3D12GraphicsCommandList2, WriteBufferImmediate)");
  }
  if (uses_enhanced_barriers_) {
    auto seven = [](ID3D12GraphicsCommandList* list, ComPtr<ID3D12GraphicsCommandList7>& out) {
      return list->QueryInterface(__uuidof(ID3D12GraphicsCommandList7), out.receive_void());
    };
    gpu_.segment_lists7.resize(gpu_.segment_lists.size());
    for (std::size_t i = 0; i < gpu_.segment_lists.size(); ++i)
      GPUOVERLAP_HR(seven(gpu_.segment_lists[i].get(), gpu_.segment_lists7[i]),
                    "QueryInterface (ID3D12GraphicsCommandList7, enhanced barriers)");
    for (QueueState& q : gpu_.queues)
      GPUOVERLAP_HR(seven(q.prepare.get(), q.prepare7),
                    "QueryInterface (ID3D12GraphicsCommandList7, enhanced barriers)");
  }
  // A fence per workload that another queue waits for; frame f signals value f.
  gpu_.fences.resize(scenario_.workloads.size());
  for (const Segment& segment : plan_.segments)
    if (segment.signals_fence)
      GPUOVERLAP_HR(device->CreateFence(0, D3D12_FENCE_FLAG_NONE, __uuidof(ID3D12Fence),
                                        gpu_.fences[segment.workloads.back()].receive_void()),
                    "CreateFence");

  // Two timestamps per workload, resolved by the submission that wrote them.
  D3D12_QUERY_HEAP_DESC query_desc{D3D12_QUERY_HEAP_TYPE_TIMESTAMP,
                                   static_cast<UINT>(2 * scenario_.workloads.size()), 0};
  GPUOVERLAP_HR(
      device->CreateQueryHeap(&query_desc, __uuidof(ID3D12QueryHeap), gpu_.queries.receive_void()),
      "CreateQueryHeap");
  GPUOVERLAP_TRY(create_buffer(gpu_.query_readback, query_desc.Count * sizeof(std::uint64_t),
                               D3D12_HEAP_TYPE_READBACK, D3D12_RESOURCE_FLAG_NONE,
                               D3D12_RESOURCE_STATE_COPY_DEST, "timestamp readback buffer"));
  void* mapped = nullptr;
  GPUOVERLAP_HR(gpu_.query_readback->Map(0, nullptr, &mapped), "Map (timestamp readback)");
  query_ticks_ = static_cast<const std::uint64_t*>(mapped);
  return ok_status();
}

Status ScenarioDevice::setup_calibration() {
  TimestampFacts& ts = facts_.timestamps;
  ID3D12CommandQueue* queue = gpu_.queues.front().queue.get();
  if (FAILED(queue->GetTimestampFrequency(&timestamp_frequency_)) || timestamp_frequency_ == 0) {
    ts.reason = "GetTimestampFrequency failed: no timestamps on this device";
    return ok_status();
  }
  ts.period_ns = 1e9 / static_cast<double>(timestamp_frequency_);
  UINT64 gpu_ticks = 0, cpu_ticks = 0;
  const HRESULT result = queue->GetClockCalibration(&gpu_ticks, &cpu_ticks);
  // A runtime without a CPU time domain answers S_OK with two zeros (Wine 8).
  calibration_works_ = SUCCEEDED(result) && (gpu_ticks != 0 || cpu_ticks != 0);
  ts.calibrated = calibration_works_;
  ts.available = settings_.timestamp_queries && calibration_works_;
  if (!calibration_works_)
    ts.reason = FAILED(result)
                    ? "GetClockCalibration: unsupported by this runtime (" + hresult_name(result) +
                          "): GPU ticks cannot be placed on the CPU clock"
                    : "GetClockCalibration: returns 0/0, unsupported by this runtime (no CPU time "
                      "domain): GPU ticks cannot be placed on the CPU clock";
  else if (!settings_.timestamp_queries)
    ts.reason = "disabled (--no-timestamps): end-of-workload timestamps can serialise a queue";
  ts.host_domain = kCpuClockName;
  ts.calibration = "best of " + std::to_string(kCalibrationSamples) +
                   " GetClockCalibration samples (narrowest QueryPerformanceCounter bracket), "
                   "before every frame";
  ts.start_stage = "EndQuery(TIMESTAMP) after the workload's barriers (D3D12 names no stage)";
  ts.end_stage = "EndQuery(TIMESTAMP) after the workload (D3D12 names no stage)";
  return ok_status();
}

std::optional<GpuCalibration> ScenarioDevice::calibrate() {
  if (!calibration_works_) return std::nullopt;
  ID3D12CommandQueue* queue = gpu_.queues.front().queue.get();
  std::optional<GpuCalibration> best;
  for (std::uint32_t i = 0; i < kCalibrationSamples; ++i) {
    UINT64 gpu_ticks = 0, cpu_ticks = 0;
    const std::int64_t before_ns = monotonic_raw_ns();
    if (FAILED(queue->GetClockCalibration(&gpu_ticks, &cpu_ticks))) continue;
    const std::int64_t bracket_ns = monotonic_raw_ns() - before_ns;
    if (best && static_cast<std::uint64_t>(bracket_ns) >= best->max_deviation_ns) continue;
    GpuCalibration c;
    c.gpu_ticks = gpu_ticks;
    c.cpu_ns = qpc_ticks_to_ns(static_cast<std::int64_t>(cpu_ticks));
    c.tick_period_ns = facts_.timestamps.period_ns;
    c.max_deviation_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(bracket_ns, 0));
    best = c;
  }
  return best;
}

Status ScenarioDevice::create_background(const std::optional<background::BackgroundSpec>& spec) {
  bound_variants_.assign(scenario_.workloads.size(), 0);
  if (!spec) return ok_status();
  // Variants arrive as DXBC (D3DCompile, background/shader_variants_d3dcompile.cpp) and become
  // compute pipeline states with the foreground's root signature, never bound. A runtime that
  // cannot compile them (Wine's D3DCompile cannot parse perlin.hlsl) would turn the
  // background work into a stream of instant failures, which measures nothing: one variant
  // is compiled and built first, and the scenario is refused with the compiler's reason, as
  // unsupported by this runtime (the rest of a suite goes on).
  background::PipelineBuilder builder;
  builder.build = [this](const std::vector<std::uint32_t>& dxbc) { return build_variant(dxbc); };
  builder.dispose = [](background::PipelineHandle handle) {
    reinterpret_cast<ID3D12PipelineState*>(handle)->Release();
  };
  auto probe = background::compile_variant({.iterations = 1, .optimize = true});
  if (!probe)
    return probe.error()
        .with_context("background work needs its shader variants compiled on this runtime: ")
        .with_category(ErrorCategory::unsupported);
  auto probe_pipeline = build_variant(*probe);
  if (!probe_pipeline)
    return probe_pipeline.error().with_context(
        "background work needs its shader variants built on this device: ");
  builder.dispose(*probe_pipeline);
  // The driver's own background work: told every mode and action the runtime is given.
  // Without ID3D12Device6 (Wine 8) every call is recorded as unsupported, never skipped.
  const HRESULT queried =
      gpu_.device->QueryInterface(__uuidof(ID3D12Device6), gpu_.device6.receive_void());
  builder.driver_mode_api = "ID3D12Device6::SetBackgroundProcessingMode";
  builder.driver_mode = [this, queried](background::ProcessingMode mode,
                                        background::MeasurementsAction action) {
    if (!gpu_.device6)
      return background::DriverModeResult{
          "unsupported by this runtime (no ID3D12Device6: " + hresult_name(queried) + ")", {}};
    BOOL further = FALSE;
    const HRESULT result = gpu_.device6->SetBackgroundProcessingMode(
        to_d3d12(mode), to_d3d12(action), nullptr, &further);
    if (FAILED(result))
      return background::DriverModeResult{
          "unsupported by this runtime (" + hresult_name(result) + ")", {}};
    return background::DriverModeResult{hresult_name(result), further != FALSE};
  };
  auto session = background::BackgroundSession::open(*spec, std::move(builder));
  if (!session) return session.error().with_context("background: ");
  background_ = std::move(*session);
  for (const WorkloadSpec& w : scenario_.workloads)
    background_->watch(w.name, w.iterations, compute_variants_.back_pointer(),
                       w.kind != WorkloadKind::copy);
  return ok_status();
}

Status ScenarioDevice::replace_background(const Scenario& scenario) {
  // No compile may deliver into the slot once its variants are released.
  if (background_) background_->stop();
  background_.reset();
  // Every frame of the last run completed (the contract), so no command list that sets a
  // variant is pending, and the next record_frame records new ones.
  for (background::PipelineHandle variant : compute_variants_.take())
    reinterpret_cast<ID3D12PipelineState*>(variant)->Release();
  return create_background(scenario.background);
}

// The driver's compiler work for one background compile: the variant's DXBC becomes a compute
// pipeline state. Runs on background threads (ID3D12Device is free-threaded).
Result<background::PipelineHandle> ScenarioDevice::build_variant(
    const std::vector<std::uint32_t>& dxbc) const {
  // The container's own size (bytes 24-27 of its header) drops the padding to whole words.
  std::size_t bytes = dxbc.size() * sizeof(std::uint32_t);
  if (dxbc.size() > 6) bytes = std::min<std::size_t>(bytes, dxbc[6]);
  D3D12_COMPUTE_PIPELINE_STATE_DESC desc{};
  desc.pRootSignature = gpu_.root_signature.get();
  desc.CS = {dxbc.data(), bytes};
  ID3D12PipelineState* pipeline = nullptr;
  GPUOVERLAP_HR(gpu_.device->CreateComputePipelineState(&desc, __uuidof(ID3D12PipelineState),
                                                        reinterpret_cast<void**>(&pipeline)),
                "CreateComputePipelineState (background variant)");
  return reinterpret_cast<background::PipelineHandle>(pipeline);
}

void ScenarioDevice::fill_facts() {
  for (std::size_t q = 0; q < scenario_.queues.size(); ++q)
    facts_.queues.push_back(
        {.name = scenario_.queues[q].name,
         .type = scenario_.queues[q].type,
         .family = static_cast<std::uint32_t>(q),
         .family_flags = scenario_.queues[q].type == QueueType::compute ? "COMPUTE" : "DIRECT",
         .queue_index = 0,
         .shares_queue_of = std::nullopt,
         .priority_requested = scenario_.queues[q].priority,
         .priority_granted = granted_priority_[q],
         .timestamp_valid_bits = 64});
  // Any application may ask for any priority: the runtime answers when the queue is created.
  facts_.global_priority_extension = true;
  ShaderClockFacts& clock = facts_.shader_clock;
  clock.reason = "D3D12 shader model 5.x has no shader clock";
  const bool cached = settings_.stamp_memory == StampMemory::cached;
  const std::string page = cached ? "CUSTOM heap, CPU_PAGE_PROPERTY_WRITE_BACK, MEMORY_POOL_L0"
                                  : "CUSTOM heap, CPU_PAGE_PROPERTY_WRITE_COMBINE, MEMORY_POOL_L0";
  facts_.stamp_memory = {.requested = std::string(to_string(settings_.stamp_memory)),
                         .memory_type = 0,
                         .flags = page,
                         .device_local = false,
                         .note = "system memory, as the protocol asks"};
  facts_.counter_memory = {
      .requested = "", .memory_type = 0, .flags = page, .device_local = false, .note = ""};
  facts_.slot_stride_bytes = kSlotStrideBytes;
  facts_.stamping = settings_.stamping;
  facts_.max_workgroups_x = D3D12_CS_DISPATCH_MAX_THREAD_GROUPS_PER_DIMENSION;
}

Status ScenarioDevice::create() {
  GPUOVERLAP_TRY(create_device());
  GPUOVERLAP_TRY(check_barriers());
  GPUOVERLAP_TRY(check_copies());
  GPUOVERLAP_TRY(create_queues());
  GPUOVERLAP_TRY(create_queue_objects());
  GPUOVERLAP_TRY(create_resources());
  plan_target_tracking();
  GPUOVERLAP_TRY(upload_input());
  GPUOVERLAP_TRY(create_pipelines());
  GPUOVERLAP_TRY(create_descriptors());
  GPUOVERLAP_TRY(setup_calibration());
  GPUOVERLAP_TRY(create_background(scenario_.background));
  fill_facts();
  return ok_status();
}

GpuOutcome ScenarioDevice::outcome_of(HRESULT result, const char* call) const {
  if (SUCCEEDED(result)) return GpuOutcome::ok();
  const bool lost = result == DXGI_ERROR_DEVICE_REMOVED || result == DXGI_ERROR_DEVICE_HUNG ||
                    result == DXGI_ERROR_DEVICE_RESET;
  return {lost ? GpuStatus::device_lost : GpuStatus::failed, hresult_error(result, call)};
}

Status ScenarioDevice::submit_frame_commands(std::uint32_t frame) {
  // All prepare lists first, then the gated work in the plan's submission order, which puts
  // every fence signal before its wait.
  for (QueueState& q : gpu_.queues) {
    ID3D12CommandList* lists[] = {q.prepare.get()};
    q.queue->ExecuteCommandLists(1, lists);
  }
  for (std::size_t i = 0; i < plan_.segments.size(); ++i) {
    const Segment& segment = plan_.segments[i];
    ID3D12CommandQueue* queue = gpu_.queues[segment.queue].queue.get();
    if (plan_.first_segment_of_queue[segment.queue] == i)
      GPUOVERLAP_HR(queue->Wait(gpu_.gate.get(), frame), "ID3D12CommandQueue::Wait (gate)");
    for (std::size_t producer : segment.wait_for)
      GPUOVERLAP_HR(queue->Wait(gpu_.fences[producer].get(), frame),
                    "ID3D12CommandQueue::Wait (fence)");
    ID3D12CommandList* lists[] = {gpu_.segment_lists[i].get()};
    queue->ExecuteCommandLists(1, lists);
    if (segment.signals_fence)
      GPUOVERLAP_HR(queue->Signal(gpu_.fences[segment.workloads.back()].get(), frame),
                    "ID3D12CommandQueue::Signal (fence)");
    if (plan_.last_segment_of_queue[segment.queue] == i)
      GPUOVERLAP_HR(queue->Signal(gpu_.queues[segment.queue].done.get(), frame),
                    "ID3D12CommandQueue::Signal");
  }
  return ok_status();
}

// --- ScenarioBackend: the frame loop itself is engine/frame_loop.cpp's --------------------------

// A copy's slot is in the copy stamp buffer, at the offset its slot would have in the other
// (without stamping there is none, and nothing reads the slot).
StampView ScenarioDevice::stamps() const {
  StampView view;
  for (std::size_t w = 0; w < scenario_.workloads.size(); ++w) {
    const void* base = scenario_.workloads[w].kind == WorkloadKind::copy && copy_stamps_mapped_
                           ? copy_stamps_mapped_
                           : stamps_mapped_;
    view.slot_words.push_back(static_cast<const std::uint32_t*>(base) +
                              w * (kSlotStrideBytes / sizeof(std::uint32_t)));
  }
  return view;
}

GpuOutcome ScenarioDevice::submit_frame(std::uint32_t frame) {
  // ExecuteCommandLists returns nothing: a device it removed shows in the frame's wait
  // (wait_fence asks GetDeviceRemovedReason), not here inside the measured submission.
  last_frame_ = std::max(last_frame_, frame);
  Status submitted = submit_frame_commands(frame);
  if (submitted) return GpuOutcome::ok();
  return {submitted.error().api_code == DXGI_ERROR_DEVICE_REMOVED ? GpuStatus::device_lost
                                                                  : GpuStatus::failed,
          submitted.error()};
}

GpuOutcome ScenarioDevice::release_gate(std::uint32_t frame) {
  return outcome_of(gpu_.gate->Signal(frame), "ID3D12Fence::Signal (gate)");
}

GpuOutcome ScenarioDevice::wait_fence(ID3D12Fence* fence, std::uint64_t value,
                                      std::int64_t deadline_ns, const char* what) {
  // A completion registered by an earlier wait that timed out may set the event late: the
  // fence's value decides, the event only wakes the thread.
  bool blocked = false;
  while (fence->GetCompletedValue() < value) {
    const std::int64_t remaining_ns = deadline_ns - monotonic_raw_ns();
    if (remaining_ns <= 0) {
      // A removed device completes every fence (below), so a poll ([cpu] gpu_wait spin or
      // yield: a deadline already past) only reads the fence: no device call in the game's
      // spin. A wait that blocked asks the device why the fence did not move.
      if (blocked)
        if (const HRESULT removed = gpu_.device->GetDeviceRemovedReason(); FAILED(removed))
          return outcome_of(removed, what);
      return {GpuStatus::timeout, Error{std::string(what) + ": the deadline passed",
                                        static_cast<std::int64_t>(WAIT_TIMEOUT), "WAIT_TIMEOUT"}};
    }
    if (const HRESULT result = fence->SetEventOnCompletion(value, fence_event_.get());
        FAILED(result))
      return outcome_of(result, "ID3D12Fence::SetEventOnCompletion");
    const auto remaining_ms = static_cast<DWORD>(
        std::min<std::int64_t>((remaining_ns + 999'999) / 1'000'000, INFINITE - 1));
    if (WaitForSingleObject(fence_event_.get(), remaining_ms) == WAIT_FAILED)
      return {GpuStatus::failed, Error{std::string(what) + ": WaitForSingleObject failed",
                                       static_cast<std::int64_t>(GetLastError()), ""}};
    blocked = true;
  }
  // A removed device completes every fence (UINT64_MAX): that is no completion.
  if (fence->GetCompletedValue() == std::numeric_limits<UINT64>::max())
    return outcome_of(gpu_.device->GetDeviceRemovedReason(), what);
  return GpuOutcome::ok();
}

GpuOutcome ScenarioDevice::wait_frame(std::uint32_t frame, std::int64_t deadline_ns) {
  for (QueueState& q : gpu_.queues)
    if (GpuOutcome outcome = wait_fence(q.done.get(), frame, deadline_ns, "waiting for the frame");
        outcome.status != GpuStatus::ok)
      return outcome;
  return GpuOutcome::ok();
}

std::vector<std::optional<TimestampTicks>> ScenarioDevice::read_timestamps() {
  std::vector<std::optional<TimestampTicks>> ticks(scenario_.workloads.size());
  if (!settings_.timestamp_queries || !query_ticks_) return ticks;
  // The readback buffer's map is persistent: the frame's fences completed, so the resolves
  // that wrote it are visible (READBACK memory is coherent).
  for (std::size_t w = 0; w < ticks.size(); ++w)
    ticks[w] = TimestampTicks{query_ticks_[2 * w], query_ticks_[2 * w + 1]};
  return ticks;
}

Error ScenarioDevice::timeout_error() const {
  return Error{"waiting for the frame: the deadline passed",
               static_cast<std::int64_t>(WAIT_TIMEOUT), "WAIT_TIMEOUT"};
}

ScenarioDevice::~ScenarioDevice() {
  // Background compiles use the device: none may run once anything is released.
  if (background_) background_->stop();
  if (gpu_may_be_busy_) {
    // The GPU may still use any of them: every object leaks, the process reports and exits.
    (void)owned_.release();
    return;
  }
  // Every submission was waited for with a deadline; make sure, then release.
  ComPtr<ID3D12Fence> idle;
  if (gpu_.device && SUCCEEDED(gpu_.device->CreateFence(
                         0, D3D12_FENCE_FLAG_NONE, __uuidof(ID3D12Fence), idle.receive_void())))
    for (std::size_t q = 0; q < gpu_.queues.size(); ++q)
      if (gpu_.queues[q].queue && SUCCEEDED(gpu_.queues[q].queue->Signal(idle.get(), q + 1)) &&
          wait_fence(idle.get(), q + 1, monotonic_raw_ns() + kSetupTimeoutNs, "idle").status !=
              GpuStatus::ok) {
        (void)owned_.release();
        return;
      }
  // Only now: a bound variant is in use until the GPU is idle.
  for (background::PipelineHandle variant : compute_variants_.take())
    reinterpret_cast<ID3D12PipelineState*>(variant)->Release();
}

}  // namespace gpuoverlap::d3d12
