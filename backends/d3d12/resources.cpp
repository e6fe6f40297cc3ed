// The D3D12 memory of one scenario (stamps and counters in CUSTOM heaps, the input, outputs
// and render targets), its root signature, pipelines and descriptors.
#include <algorithm>
#include <cstring>
#include <random>

#include "backends/d3d12/hresult.h"
#include "backends/d3d12/scenario_device.h"
#include "core/clock.h"
#include "perlin_cs_main_dxbc.h"
#include "perlin_ps_depth_main_dxbc.h"
#include "perlin_ps_main_dxbc.h"
#include "perlin_vs_main_dxbc.h"
#include "scenarios/scenario.h"

namespace gpuoverlap::d3d12 {

namespace {

D3D12_RESOURCE_DESC buffer_desc(UINT64 bytes, D3D12_RESOURCE_FLAGS flags) {
  D3D12_RESOURCE_DESC desc{};
  desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
  desc.Width = bytes;
  desc.Height = 1;
  desc.DepthOrArraySize = 1;
  desc.MipLevels = 1;
  desc.Format = DXGI_FORMAT_UNKNOWN;
  desc.SampleDesc.Count = 1;
  desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
  desc.Flags = flags;
  return desc;
}

// The formats a declared texture is created and viewed in. A colour texture has one. A depth
// texture is created typeless: a depth-stencil view (D32_FLOAT, which a draw writes) and a
// shader-resource view (R32_FLOAT, which readers sample) may only both name a typeless
// resource.
struct TextureFormats {
  DXGI_FORMAT resource;  // the resource's own
  DXGI_FORMAT draw;      // a draw's: its RTV's, or its DSV's for a depth texture
  DXGI_FORMAT read;      // an SRV's (perlin.hlsl reads Texture2DArray<float>)
};

TextureFormats dxgi_formats(TextureFormat format) {
  switch (format) {
    case TextureFormat::rgba8:
      return {DXGI_FORMAT_R8G8B8A8_UNORM, DXGI_FORMAT_R8G8B8A8_UNORM, DXGI_FORMAT_R8G8B8A8_UNORM};
    case TextureFormat::rgba16f:
      return {DXGI_FORMAT_R16G16B16A16_FLOAT, DXGI_FORMAT_R16G16B16A16_FLOAT,
              DXGI_FORMAT_R16G16B16A16_FLOAT};
    case TextureFormat::d32:
      return {DXGI_FORMAT_R32_TYPELESS, DXGI_FORMAT_D32_FLOAT, DXGI_FORMAT_R32_FLOAT};
    case TextureFormat::r32f:
      break;
  }
  return {DXGI_FORMAT_R32_FLOAT, DXGI_FORMAT_R32_FLOAT, DXGI_FORMAT_R32_FLOAT};
}

}  // namespace

Status ScenarioDevice::create_buffer(ComPtr<ID3D12Resource>& out, UINT64 bytes,
                                     D3D12_HEAP_TYPE heap, D3D12_RESOURCE_FLAGS flags,
                                     D3D12_RESOURCE_STATES state, const char* what) {
  D3D12_HEAP_PROPERTIES properties{};
  properties.Type = heap;
  const D3D12_RESOURCE_DESC desc = buffer_desc(bytes, flags);
  GPUOVERLAP_HR(
      gpu_.device->CreateCommittedResource(&properties, D3D12_HEAP_FLAG_NONE, &desc, state, nullptr,
                                           __uuidof(ID3D12Resource), out.receive_void()),
      std::string("CreateCommittedResource (") + what + ")");
  return ok_status();
}

// System memory (MEMORY_POOL_L0) the GPU writes with atomics and the CPU reads while it runs:
// WRITE_COMBINE (uncached, the protocol's default) or WRITE_BACK (cached, --stamp-memory
// cached), mapped for as long as the resource lives.
Status ScenarioDevice::create_mapped_buffer(ComPtr<ID3D12Resource>& out, UINT64 bytes,
                                            D3D12_CPU_PAGE_PROPERTY page, void** mapped,
                                            const char* what) {
  D3D12_HEAP_PROPERTIES properties{};
  properties.Type = D3D12_HEAP_TYPE_CUSTOM;
  properties.CPUPageProperty = page;
  properties.MemoryPoolPreference = D3D12_MEMORY_POOL_L0;
  const D3D12_RESOURCE_DESC desc = buffer_desc(bytes, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS);
  GPUOVERLAP_HR(gpu_.device->CreateCommittedResource(&properties, D3D12_HEAP_FLAG_NONE, &desc,
                                                     D3D12_RESOURCE_STATE_COMMON, nullptr,
                                                     __uuidof(ID3D12Resource), out.receive_void()),
                std::string("CreateCommittedResource (") + what + ", CUSTOM heap)");
  if (!mapped) return ok_status();
  const D3D12_RANGE nothing_read{0, 0};
  GPUOVERLAP_HR(out->Map(0, &nothing_read, mapped), std::string("Map (") + what + ")");
  std::memset(*mapped, 0, bytes);
  return ok_status();
}

Status ScenarioDevice::create_target(ComPtr<ID3D12Resource>& out, UINT width, UINT height,
                                     D3D12_RESOURCE_STATES state, const char* what) {
  D3D12_HEAP_PROPERTIES properties{};
  properties.Type = D3D12_HEAP_TYPE_DEFAULT;
  D3D12_RESOURCE_DESC desc{};
  desc.Dimension = D3D12_RESOURCE_DIMENSION_TEXTURE2D;
  desc.Width = width;
  desc.Height = height;
  desc.DepthOrArraySize = 1;
  desc.MipLevels = 1;
  desc.Format = DXGI_FORMAT_R32_FLOAT;
  desc.SampleDesc.Count = 1;
  desc.Flags = state == D3D12_RESOURCE_STATE_RENDER_TARGET ? D3D12_RESOURCE_FLAG_ALLOW_RENDER_TARGET
                                                           : D3D12_RESOURCE_FLAG_NONE;
  GPUOVERLAP_HR(
      gpu_.device->CreateCommittedResource(&properties, D3D12_HEAP_FLAG_NONE, &desc, state, nullptr,
                                           __uuidof(ID3D12Resource), out.receive_void()),
      std::string("CreateCommittedResource (") + what + ")");
  return ok_status();
}

ScenarioDevice::DrawTarget ScenarioDevice::draw_target(std::size_t w) const {
  const WorkloadSpec& spec = scenario_.workloads[w];
  const D3D12_CPU_DESCRIPTOR_HANDLE rtv_start = cpu_start(gpu_.rtv_heap.get());
  if (!spec.target) {
    const D3D12_RESOURCE_DESC desc = desc_of(gpu_.targets[w].get());
    return {.resource = gpu_.targets[w].get(),
            .view = {rtv_start.ptr + w * rtv_increment_},
            .width = static_cast<UINT>(desc.Width),
            .height = desc.Height};
  }
  const std::size_t t = spec.target->texture;
  const TextureSpec& texture = scenario_.textures[t];
  const UINT view = texture_view_first_[t] +
                    subresource_index(spec.target->mip, spec.target->slice, texture.mips);
  const bool depth = is_depth(texture.format);
  return {.resource = gpu_.textures[t].get(),
          .view = {depth ? cpu_start(gpu_.dsv_heap.get()).ptr + view * dsv_increment_
                         : rtv_start.ptr + view * rtv_increment_},
          .width = mip_size(texture.width, spec.target->mip),
          .height = mip_size(texture.height, spec.target->mip),
          .format = dxgi_formats(texture.format).draw,
          .depth = depth};
}

ID3D12PipelineState* ScenarioDevice::graphics_pipeline_for(DXGI_FORMAT format) const {
  for (const auto& [other, pipeline] : gpu_.format_pipelines)
    if (other == format) return pipeline.get();
  return gpu_.graphics_pipeline.get();
}

Status ScenarioDevice::create_resources() {
  const std::size_t slots = scenario_.workloads.size();
  const D3D12_CPU_PAGE_PROPERTY page = settings_.stamp_memory == StampMemory::cached
                                           ? D3D12_CPU_PAGE_PROPERTY_WRITE_BACK
                                           : D3D12_CPU_PAGE_PROPERTY_WRITE_COMBINE;
  GPUOVERLAP_TRY(create_mapped_buffer(gpu_.stamps, slots * kSlotStrideBytes, page, &stamps_mapped_,
                                      "stamp buffer"));
  GPUOVERLAP_TRY(create_mapped_buffer(gpu_.counters, slots * kSlotStrideBytes, page, nullptr,
                                      "counter buffer"));
  // What a counter reset copies: zeros in upload memory (GENERIC_READ, as UPLOAD requires).
  GPUOVERLAP_TRY(create_buffer(gpu_.zeros, kSlotBytes, D3D12_HEAP_TYPE_UPLOAD,
                               D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_GENERIC_READ,
                               "zero buffer"));
  void* zeros = nullptr;
  GPUOVERLAP_HR(gpu_.zeros->Map(0, nullptr, &zeros), "Map (zero buffer)");
  std::memset(zeros, 0, kSlotBytes);
  gpu_.zeros->Unmap(0, nullptr);

  // Buffers start in COMMON (D3D12 ignores another initial state for buffers) and are promoted
  // to the state of their first use in each ExecuteCommandLists.
  GPUOVERLAP_TRY(create_buffer(gpu_.input, UINT64{kInputElements} * 16, D3D12_HEAP_TYPE_DEFAULT,
                               D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_COMMON,
                               "input buffer"));
  GPUOVERLAP_TRY(create_buffer(gpu_.dummy_output, 4096, D3D12_HEAP_TYPE_DEFAULT,
                               D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                               D3D12_RESOURCE_STATE_COMMON, "placeholder buffer"));
  // Bound where a consumer reads fewer render targets than it could; never written.
  GPUOVERLAP_TRY(create_target(
      gpu_.dummy_target, 1024, 1,
      D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE | D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE,
      "placeholder render target"));
  gpu_.outputs.resize(slots);
  gpu_.targets.resize(slots);
  target_states_.assign(slots, D3D12_RESOURCE_STATE_RENDER_TARGET);
  for (std::size_t w = 0; w < slots; ++w) {
    const WorkloadSpec& spec = scenario_.workloads[w];
    if (spec.kind == WorkloadKind::copy) continue;  // create_copy_resources
    if (spec.kind == WorkloadKind::compute)
      GPUOVERLAP_TRY(
          create_buffer(gpu_.outputs[w], UINT64{workload_shape(scenario_, w).threads} * 4,
                        D3D12_HEAP_TYPE_DEFAULT, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                        D3D12_RESOURCE_STATE_COMMON, "output buffer"));
    else if (!spec.target)
      GPUOVERLAP_TRY(create_target(gpu_.targets[w], kRenderTargetWidth, spec.groups,
                                   D3D12_RESOURCE_STATE_RENDER_TARGET, "render target"));
  }
  // Declared textures start where the plan starts every frame: RENDER_TARGET (DEPTH_WRITE for
  // a depth texture), UNORDERED_ACCESS where only dispatches write them, or COPY_DEST where
  // only copies do.
  gpu_.textures.resize(scenario_.textures.size());
  texture_states_.clear();
  texture_layouts_.clear();
  // A texture in a heap is placed at its offset 0 (they alias): one heap per name, as large and
  // aligned as its largest texture needs. The texture that holds it when a frame starts is
  // created where the frame leaves it (the first hand-over takes the heap from there).
  std::vector<D3D12_RESOURCE_DESC> descs;
  for (std::size_t t = 0; t < scenario_.textures.size(); ++t) {
    const TextureSpec& spec = scenario_.textures[t];
    D3D12_RESOURCE_DESC desc{};
    desc.Dimension = D3D12_RESOURCE_DIMENSION_TEXTURE2D;
    desc.Width = spec.width;
    desc.Height = spec.height;
    desc.DepthOrArraySize = static_cast<UINT16>(spec.slices);
    desc.MipLevels = static_cast<UINT16>(spec.mips);
    desc.Format = dxgi_formats(spec.format).resource;
    desc.SampleDesc.Count = 1;
    // D3D12 refuses ALLOW_DEPTH_STENCIL beside ALLOW_RENDER_TARGET or ALLOW_UNORDERED_ACCESS:
    // only draws write a depth texture (the parser's rule), so it needs neither.
    if (is_depth(spec.format)) {
      desc.Flags = D3D12_RESOURCE_FLAG_ALLOW_DEPTH_STENCIL;
    } else {
      desc.Flags = D3D12_RESOURCE_FLAG_ALLOW_RENDER_TARGET;
      if (plan_.barriers.texture_unordered_access[t])
        desc.Flags |= D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS;
    }
    descs.push_back(desc);
  }
  gpu_.heaps.clear();
  const std::vector<std::string> heap_names = gpuoverlap::heap_names(scenario_.textures);
  for (const std::string& name : heap_names) {
    D3D12_HEAP_DESC heap{};
    heap.Properties.Type = D3D12_HEAP_TYPE_DEFAULT;
    heap.Alignment = D3D12_DEFAULT_RESOURCE_PLACEMENT_ALIGNMENT;
    heap.Flags = D3D12_HEAP_FLAG_ALLOW_ONLY_RT_DS_TEXTURES;
    for (std::size_t t = 0; t < scenario_.textures.size(); ++t) {
      if (scenario_.textures[t].heap != name) continue;
      const D3D12_RESOURCE_ALLOCATION_INFO info = allocation_info(gpu_.device.get(), descs[t]);
      heap.SizeInBytes = std::max(heap.SizeInBytes, info.SizeInBytes);
      heap.Alignment = std::max(heap.Alignment, info.Alignment);
    }
    GPUOVERLAP_HR(gpu_.device->CreateHeap(&heap, __uuidof(ID3D12Heap),
                                          gpu_.heaps.emplace_back().receive_void()),
                  "CreateHeap (heap '" + name + "')");
  }
  // No optimized clear value, depth or colour: nothing clears them (every draw writes each
  // pixel of its subresource).
  for (std::size_t t = 0; t < scenario_.textures.size(); ++t) {
    const TextureSpec& spec = scenario_.textures[t];
    const D3D12_RESOURCE_STATES start = plan_.barriers.texture_holds_heap_at_start[t]
                                            ? plan_.barriers.texture_final_states[t].front()
                                            : plan_.barriers.texture_start_states[t];
    if (!spec.heap.empty()) {
      const auto heap = std::find(heap_names.begin(), heap_names.end(), spec.heap);
      GPUOVERLAP_HR(
          gpu_.device->CreatePlacedResource(
              gpu_.heaps[static_cast<std::size_t>(heap - heap_names.begin())].get(), 0, &descs[t],
              start, nullptr, __uuidof(ID3D12Resource), gpu_.textures[t].receive_void()),
          "CreatePlacedResource (texture '" + spec.name + "' in heap '" + spec.heap + "')");
    } else {
      D3D12_HEAP_PROPERTIES properties{};
      properties.Type = D3D12_HEAP_TYPE_DEFAULT;
      GPUOVERLAP_HR(gpu_.device->CreateCommittedResource(
                        &properties, D3D12_HEAP_FLAG_NONE, &descs[t], start, nullptr,
                        __uuidof(ID3D12Resource), gpu_.textures[t].receive_void()),
                    "CreateCommittedResource (texture '" + spec.name + "')");
    }
    texture_states_.emplace_back(spec.subresources(), start);
    texture_layouts_.emplace_back(spec.subresources(),
                                  plan_.barriers.texture_holds_heap_at_start[t]
                                      ? plan_.barriers.texture_final_layouts[t].front()
                                      : plan_.barriers.texture_start_layouts[t]);
  }
  return create_copy_resources(page);
}

// A copy's memory, as on Vulkan: an upload copy reads an UPLOAD heap's buffer (zeros, written
// once here) into a DEFAULT heap's buffer or a declared texture's subresource; a readback
// writes its source's bytes into a READBACK heap's buffer. A texture's texels lie in the
// buffer in rows D3D12_TEXTURE_DATA_PITCH_ALIGNMENT apart (GetCopyableFootprints), so such a
// buffer may be larger than the copy's `bytes`, which count tightly packed rows.
Status ScenarioDevice::create_copy_resources(D3D12_CPU_PAGE_PROPERTY page) {
  const std::size_t slots = scenario_.workloads.size();
  gpu_.uploads.resize(slots);
  texture_copies_.assign(slots, std::nullopt);
  if (!uses_copies_) return ok_status();
  // COMMON, promoted to COPY_DEST by each ExecuteCommandLists's first WriteBufferImmediate.
  if (settings_.stamping)
    GPUOVERLAP_TRY(create_mapped_buffer(gpu_.copy_stamps, slots * kSlotStrideBytes, page,
                                        &copy_stamps_mapped_, "copy stamp buffer"));
  for (std::size_t w = 0; w < slots; ++w) {
    const WorkloadSpec& spec = scenario_.workloads[w];
    if (spec.kind != WorkloadKind::copy) continue;
    // The texture subresource it copies to or from, if any.
    ID3D12Resource* texture = nullptr;
    UINT subresource = 0;
    if (is_readback(spec)) {
      const std::size_t source = spec.depends_on.front().producer;
      const WorkloadSpec& producer = scenario_.workloads[source];
      if (const auto& target = producer.target) {
        texture = gpu_.textures[target->texture].get();
        subresource =
            subresource_index(target->mip, target->slice, scenario_.textures[target->texture].mips);
      } else if (producer.kind == WorkloadKind::graphics) {
        texture = gpu_.targets[source].get();
      }
    } else if (const auto& target = spec.target) {
      texture = gpu_.textures[target->texture].get();
      subresource =
          subresource_index(target->mip, target->slice, scenario_.textures[target->texture].mips);
    }
    UINT64 buffer_bytes = spec.bytes;
    if (texture) {
      TextureCopy copy{.texture = texture, .subresource = subresource};
      const D3D12_RESOURCE_DESC desc = desc_of(texture);
      gpu_.device->GetCopyableFootprints(&desc, subresource, 1, 0, &copy.footprint, nullptr,
                                         nullptr, &buffer_bytes);
      texture_copies_[w] = copy;
    }
    if (is_readback(spec)) {
      GPUOVERLAP_TRY(create_buffer(gpu_.outputs[w], buffer_bytes, D3D12_HEAP_TYPE_READBACK,
                                   D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_COPY_DEST,
                                   "readback buffer"));
      continue;
    }
    GPUOVERLAP_TRY(create_buffer(gpu_.uploads[w], buffer_bytes, D3D12_HEAP_TYPE_UPLOAD,
                                 D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_GENERIC_READ,
                                 "copy upload buffer"));
    void* mapped = nullptr;
    GPUOVERLAP_HR(gpu_.uploads[w]->Map(0, nullptr, &mapped), "Map (copy upload buffer)");
    std::memset(mapped, 0, buffer_bytes);
    gpu_.uploads[w]->Unmap(0, nullptr);
    if (!texture)
      GPUOVERLAP_TRY(create_buffer(gpu_.outputs[w], spec.bytes, D3D12_HEAP_TYPE_DEFAULT,
                                   D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_COMMON,
                                   "copy destination buffer"));
  }
  return ok_status();
}

Status ScenarioDevice::upload_input() {
  ComPtr<ID3D12Resource> staging;
  const UINT64 bytes = UINT64{kInputElements} * 16;
  GPUOVERLAP_TRY(create_buffer(staging, bytes, D3D12_HEAP_TYPE_UPLOAD, D3D12_RESOURCE_FLAG_NONE,
                               D3D12_RESOURCE_STATE_GENERIC_READ, "input staging buffer"));
  void* mapped = nullptr;
  GPUOVERLAP_HR(staging->Map(0, nullptr, &mapped), "Map (input staging buffer)");
  std::mt19937 random(12345);  // fixed seed: identical input every run, as on Vulkan
  std::uniform_real_distribution<float> coordinate(-64.0f, 64.0f);
  auto* values = static_cast<float*>(mapped);
  for (UINT64 i = 0; i < bytes / sizeof(float); ++i) values[i] = coordinate(random);
  staging->Unmap(0, nullptr);

  QueueState& queue = gpu_.queues.front();
  ComPtr<ID3D12GraphicsCommandList> list;
  GPUOVERLAP_HR(
      gpu_.device->CreateCommandList(0, queue.type, queue.allocator.get(), nullptr,
                                     __uuidof(ID3D12GraphicsCommandList), list.receive_void()),
      "CreateCommandList (upload)");
  list->CopyBufferRegion(gpu_.input.get(), 0, staging.get(), 0, bytes);
  GPUOVERLAP_HR(list->Close(), "ID3D12GraphicsCommandList::Close (upload)");
  ID3D12CommandList* lists[] = {list.get()};
  queue.queue->ExecuteCommandLists(1, lists);
  ComPtr<ID3D12Fence> uploaded;
  GPUOVERLAP_HR(gpu_.device->CreateFence(0, D3D12_FENCE_FLAG_NONE, __uuidof(ID3D12Fence),
                                         uploaded.receive_void()),
                "CreateFence (upload)");
  GPUOVERLAP_HR(queue.queue->Signal(uploaded.get(), 1), "ID3D12CommandQueue::Signal (upload)");
  const GpuOutcome waited = wait_fence(uploaded.get(), 1, monotonic_raw_ns() + kSetupTimeoutNs,
                                       "uploading the input buffer");
  if (waited.status != GpuStatus::ok) {
    gpu_may_be_busy_ = true;  // the copy may still read the staging buffer
    (void)staging.release();
    (void)list.release();
    return failure_of(waited, "uploading the input buffer");
  }
  return ok_status();
}

Status ScenarioDevice::create_pipelines() {
  D3D12_DESCRIPTOR_RANGE target_range{};
  target_range.RangeType = D3D12_DESCRIPTOR_RANGE_TYPE_SRV;
  target_range.NumDescriptors = kMaxProducerBindings;
  target_range.BaseShaderRegister = 5;
  target_range.OffsetInDescriptorsFromTableStart = 0;
  D3D12_DESCRIPTOR_RANGE output_texture_range{};
  output_texture_range.RangeType = D3D12_DESCRIPTOR_RANGE_TYPE_UAV;
  output_texture_range.NumDescriptors = 1;
  output_texture_range.BaseShaderRegister = 3;
  output_texture_range.OffsetInDescriptorsFromTableStart = kMaxProducerBindings;
  const D3D12_DESCRIPTOR_RANGE table_ranges[] = {target_range, output_texture_range};
  D3D12_ROOT_PARAMETER parameters[kRootParameterCount]{};
  for (D3D12_ROOT_PARAMETER& p : parameters) p.ShaderVisibility = D3D12_SHADER_VISIBILITY_ALL;
  parameters[kRootConstants].ParameterType = D3D12_ROOT_PARAMETER_TYPE_32BIT_CONSTANTS;
  parameters[kRootConstants].Constants.Num32BitValues = sizeof(RootConstants) / 4;
  parameters[kRootInput].ParameterType = D3D12_ROOT_PARAMETER_TYPE_SRV;
  parameters[kRootOutput].ParameterType = D3D12_ROOT_PARAMETER_TYPE_UAV;
  parameters[kRootCounters].ParameterType = D3D12_ROOT_PARAMETER_TYPE_UAV;
  parameters[kRootCounters].Descriptor.ShaderRegister = 1;
  parameters[kRootStamps].ParameterType = D3D12_ROOT_PARAMETER_TYPE_UAV;
  parameters[kRootStamps].Descriptor.ShaderRegister = 2;
  for (UINT b = 0; b < kMaxProducerBindings; ++b) {
    parameters[kRootProducerBuffers + b].ParameterType = D3D12_ROOT_PARAMETER_TYPE_SRV;
    parameters[kRootProducerBuffers + b].Descriptor.ShaderRegister = 1 + b;
  }
  parameters[kRootProducerTargets].ParameterType = D3D12_ROOT_PARAMETER_TYPE_DESCRIPTOR_TABLE;
  parameters[kRootProducerTargets].DescriptorTable.NumDescriptorRanges = 2;
  parameters[kRootProducerTargets].DescriptorTable.pDescriptorRanges = table_ranges;
  D3D12_ROOT_SIGNATURE_DESC desc{kRootParameterCount, parameters, 0, nullptr,
                                 D3D12_ROOT_SIGNATURE_FLAG_NONE};
  ComPtr<ID3DBlob> blob, errors;
  if (const HRESULT result = D3D12SerializeRootSignature(&desc, D3D_ROOT_SIGNATURE_VERSION_1,
                                                         blob.receive(), errors.receive());
      FAILED(result)) {
    std::string detail;
    if (errors)
      detail.assign(static_cast<const char*>(errors->GetBufferPointer()), errors->GetBufferSize());
    return Error{"D3D12SerializeRootSignature failed: " + hresult_name(result) +
                     (detail.empty() ? "" : ": " + detail),
                 static_cast<std::int64_t>(result), hresult_name(result)};
  }
  GPUOVERLAP_HR(gpu_.device->CreateRootSignature(0, blob->GetBufferPointer(), blob->GetBufferSize(),
                                                 __uuidof(ID3D12RootSignature),
                                                 gpu_.root_signature.receive_void()),
                "CreateRootSignature");

  D3D12_COMPUTE_PIPELINE_STATE_DESC compute{};
  compute.pRootSignature = gpu_.root_signature.get();
  compute.CS = {kPerlinComputeDxbc, sizeof kPerlinComputeDxbc};
  GPUOVERLAP_HR(gpu_.device->CreateComputePipelineState(&compute, __uuidof(ID3D12PipelineState),
                                                        gpu_.compute_pipeline.receive_void()),
                "CreateComputePipelineState (perlin cs_main)");

  const bool has_graphics =
      std::any_of(scenario_.workloads.begin(), scenario_.workloads.end(),
                  [](const WorkloadSpec& w) { return w.kind == WorkloadKind::graphics; });
  if (!has_graphics) return ok_status();
  D3D12_GRAPHICS_PIPELINE_STATE_DESC graphics{};
  graphics.pRootSignature = gpu_.root_signature.get();
  graphics.VS = {kPerlinVertexDxbc, sizeof kPerlinVertexDxbc};
  graphics.PS = {kPerlinPixelDxbc, sizeof kPerlinPixelDxbc};
  D3D12_RENDER_TARGET_BLEND_DESC& blend = graphics.BlendState.RenderTarget[0];
  blend.SrcBlend = blend.SrcBlendAlpha = D3D12_BLEND_ONE;
  blend.DestBlend = blend.DestBlendAlpha = D3D12_BLEND_ZERO;
  blend.BlendOp = blend.BlendOpAlpha = D3D12_BLEND_OP_ADD;
  blend.LogicOp = D3D12_LOGIC_OP_NOOP;
  blend.RenderTargetWriteMask = D3D12_COLOR_WRITE_ENABLE_ALL;
  graphics.SampleMask = 0xFFFFFFFFu;
  graphics.RasterizerState.FillMode = D3D12_FILL_MODE_SOLID;
  graphics.RasterizerState.CullMode = D3D12_CULL_MODE_NONE;
  graphics.RasterizerState.DepthClipEnable = TRUE;
  graphics.PrimitiveTopologyType = D3D12_PRIMITIVE_TOPOLOGY_TYPE_TRIANGLE;
  graphics.NumRenderTargets = 1;
  graphics.RTVFormats[0] = DXGI_FORMAT_R32_FLOAT;
  graphics.SampleDesc.Count = 1;
  GPUOVERLAP_HR(gpu_.device->CreateGraphicsPipelineState(&graphics, __uuidof(ID3D12PipelineState),
                                                         gpu_.graphics_pipeline.receive_void()),
                "CreateGraphicsPipelineState (perlin vs_main + ps_main)");
  // The same pipeline for each other format a draw renders into. A depth texture's draws
  // have no render target: ps_depth_main writes each pixel's depth, which a depth test that
  // always passes stores (without the test, D3D12 writes no depth). Keyed by the DSV format.
  for (std::size_t t = 0; t < scenario_.textures.size(); ++t) {
    const TextureSpec& texture = scenario_.textures[t];
    const DXGI_FORMAT format = dxgi_formats(texture.format).draw;
    if (format == DXGI_FORMAT_R32_FLOAT ||
        graphics_pipeline_for(format) != gpu_.graphics_pipeline.get())
      continue;
    D3D12_GRAPHICS_PIPELINE_STATE_DESC desc = graphics;
    if (is_depth(texture.format)) {
      const bool drawn = std::any_of(
          scenario_.workloads.begin(), scenario_.workloads.end(), [&](const WorkloadSpec& w) {
            return w.kind == WorkloadKind::graphics && w.target && w.target->texture == t;
          });
      if (!drawn) continue;
      desc.PS = {kPerlinDepthPixelDxbc, sizeof kPerlinDepthPixelDxbc};
      desc.NumRenderTargets = 0;
      desc.RTVFormats[0] = DXGI_FORMAT_UNKNOWN;
      desc.DSVFormat = format;
      desc.DepthStencilState.DepthEnable = TRUE;
      desc.DepthStencilState.DepthWriteMask = D3D12_DEPTH_WRITE_MASK_ALL;
      desc.DepthStencilState.DepthFunc = D3D12_COMPARISON_FUNC_ALWAYS;
      desc.DepthStencilState.StencilEnable = FALSE;
      // Valid values even with the stencil off (zero is no D3D12_STENCIL_OP or comparison).
      desc.DepthStencilState.StencilReadMask = D3D12_DEFAULT_STENCIL_READ_MASK;
      desc.DepthStencilState.StencilWriteMask = D3D12_DEFAULT_STENCIL_WRITE_MASK;
      const D3D12_DEPTH_STENCILOP_DESC keep{D3D12_STENCIL_OP_KEEP, D3D12_STENCIL_OP_KEEP,
                                            D3D12_STENCIL_OP_KEEP, D3D12_COMPARISON_FUNC_ALWAYS};
      desc.DepthStencilState.FrontFace = keep;
      desc.DepthStencilState.BackFace = keep;
    } else {
      desc.RTVFormats[0] = format;
    }
    ComPtr<ID3D12PipelineState> pipeline;
    GPUOVERLAP_HR(
        gpu_.device->CreateGraphicsPipelineState(&desc, __uuidof(ID3D12PipelineState),
                                                 pipeline.receive_void()),
        "CreateGraphicsPipelineState (perlin, " + std::string(to_string(texture.format)) + ")");
    gpu_.format_pipelines.emplace_back(format, std::move(pipeline));
  }
  return ok_status();
}

// Per workload: its render target's view, the producers it reads (root SRVs for buffers, 4
// SRVs in the shader-visible heap for render targets; placeholders where it reads fewer), and
// after them in the heap its output texture's UAV (null where it writes none).
Status ScenarioDevice::create_descriptors() {
  const std::size_t count = scenario_.workloads.size();
  D3D12_DESCRIPTOR_HEAP_DESC srv_desc{D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV,
                                      static_cast<UINT>(count * kDescriptorsPerWorkload),
                                      D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 0};
  GPUOVERLAP_HR(gpu_.device->CreateDescriptorHeap(&srv_desc, __uuidof(ID3D12DescriptorHeap),
                                                  gpu_.srv_heap.receive_void()),
                "CreateDescriptorHeap (SRV)");
  // An RTV per workload's own render target, then one per subresource of each colour texture;
  // a DSV per subresource of each depth texture, in a heap of their own (none without one).
  texture_view_first_.clear();
  UINT rtvs = static_cast<UINT>(count), dsvs = 0;
  for (const TextureSpec& texture : scenario_.textures) {
    UINT& views = is_depth(texture.format) ? dsvs : rtvs;
    texture_view_first_.push_back(views);
    views += texture.subresources();
  }
  D3D12_DESCRIPTOR_HEAP_DESC rtv_desc{D3D12_DESCRIPTOR_HEAP_TYPE_RTV, rtvs,
                                      D3D12_DESCRIPTOR_HEAP_FLAG_NONE, 0};
  GPUOVERLAP_HR(gpu_.device->CreateDescriptorHeap(&rtv_desc, __uuidof(ID3D12DescriptorHeap),
                                                  gpu_.rtv_heap.receive_void()),
                "CreateDescriptorHeap (RTV)");
  if (dsvs > 0) {
    D3D12_DESCRIPTOR_HEAP_DESC dsv_desc{D3D12_DESCRIPTOR_HEAP_TYPE_DSV, dsvs,
                                        D3D12_DESCRIPTOR_HEAP_FLAG_NONE, 0};
    GPUOVERLAP_HR(gpu_.device->CreateDescriptorHeap(&dsv_desc, __uuidof(ID3D12DescriptorHeap),
                                                    gpu_.dsv_heap.receive_void()),
                  "CreateDescriptorHeap (DSV)");
  }
  const D3D12_CPU_DESCRIPTOR_HANDLE srv_start = cpu_start(gpu_.srv_heap.get());
  const D3D12_CPU_DESCRIPTOR_HANDLE rtv_start = cpu_start(gpu_.rtv_heap.get());
  D3D12_SHADER_RESOURCE_VIEW_DESC view{};
  // perlin.hlsl reads Texture2DArray<float> on D3D12: one slice of one mip, whichever the
  // texture (a render target of its own is an array of one).
  view.Format = DXGI_FORMAT_R32_FLOAT;
  view.ViewDimension = D3D12_SRV_DIMENSION_TEXTURE2DARRAY;
  view.Shader4ComponentMapping = D3D12_DEFAULT_SHADER_4_COMPONENT_MAPPING;
  view.Texture2DArray.MipLevels = 1;
  view.Texture2DArray.ArraySize = 1;

  for (std::size_t t = 0; t < scenario_.textures.size(); ++t) {
    const TextureSpec& texture = scenario_.textures[t];
    const DXGI_FORMAT format = dxgi_formats(texture.format).draw;
    for (UINT slice = 0; slice < texture.slices; ++slice)
      for (UINT mip = 0; mip < texture.mips; ++mip) {
        const UINT index = texture_view_first_[t] + subresource_index(mip, slice, texture.mips);
        if (is_depth(texture.format)) {
          D3D12_DEPTH_STENCIL_VIEW_DESC dsv{};
          dsv.Format = format;
          dsv.ViewDimension = D3D12_DSV_DIMENSION_TEXTURE2DARRAY;
          dsv.Flags = D3D12_DSV_FLAG_NONE;
          dsv.Texture2DArray.MipSlice = mip;
          dsv.Texture2DArray.FirstArraySlice = slice;
          dsv.Texture2DArray.ArraySize = 1;
          gpu_.device->CreateDepthStencilView(
              gpu_.textures[t].get(), &dsv,
              {cpu_start(gpu_.dsv_heap.get()).ptr + index * dsv_increment_});
          continue;
        }
        D3D12_RENDER_TARGET_VIEW_DESC rtv{};
        rtv.Format = format;
        rtv.ViewDimension = D3D12_RTV_DIMENSION_TEXTURE2DARRAY;
        rtv.Texture2DArray.MipSlice = mip;
        rtv.Texture2DArray.FirstArraySlice = slice;
        rtv.Texture2DArray.ArraySize = 1;
        gpu_.device->CreateRenderTargetView(gpu_.textures[t].get(), &rtv,
                                            {rtv_start.ptr + index * rtv_increment_});
      }
  }
  producers_.assign(count, 0);
  producer_buffers_.assign(count, {});
  for (std::size_t w = 0; w < count; ++w) {
    if (gpu_.targets[w])
      gpu_.device->CreateRenderTargetView(gpu_.targets[w].get(), nullptr,
                                          {rtv_start.ptr + w * rtv_increment_});
    if (scenario_.workloads[w].kind == WorkloadKind::copy) continue;  // binds nothing
    std::uint32_t buffers = 0, targets = 0;
    const auto& deps = scenario_.workloads[w].depends_on;
    for (std::size_t i = 0; i < deps.size(); ++i) {
      const DependencyPlan& d = plan_.dependency(w, i);
      if (!d.reads_output) continue;
      const D3D12_CPU_DESCRIPTOR_HANDLE slot{
          srv_start.ptr + (w * kDescriptorsPerWorkload + targets) * srv_increment_};
      const auto& target = scenario_.workloads[d.producer].target;
      if (d.resource == ResourceKind::buffer) {
        producer_buffers_[w][buffers++] = gpu_.outputs[d.producer]->GetGPUVirtualAddress();
      } else if (target) {
        // The subresource the producer wrote.
        D3D12_SHADER_RESOURCE_VIEW_DESC mip_view = view;
        mip_view.Format = dxgi_formats(scenario_.textures[target->texture].format).read;
        mip_view.Texture2DArray.MostDetailedMip = target->mip;
        mip_view.Texture2DArray.FirstArraySlice = target->slice;
        gpu_.device->CreateShaderResourceView(gpu_.textures[target->texture].get(), &mip_view,
                                              slot);
        ++targets;
      } else {
        gpu_.device->CreateShaderResourceView(gpu_.targets[d.producer].get(), &view, slot);
        ++targets;
      }
    }
    const WorkloadSpec& spec = scenario_.workloads[w];
    const bool writes_texture = spec.kind == WorkloadKind::compute && spec.target;
    producers_[w] = buffers | (targets << 4) | (writes_texture ? kWritesTexture : 0);
    for (std::uint32_t b = buffers; b < kMaxProducerBindings; ++b)
      producer_buffers_[w][b] = gpu_.dummy_output->GetGPUVirtualAddress();
    for (std::uint32_t t = targets; t < kMaxProducerBindings; ++t)
      gpu_.device->CreateShaderResourceView(
          gpu_.dummy_target.get(), &view,
          {srv_start.ptr + (w * kDescriptorsPerWorkload + t) * srv_increment_});
    // RWTexture2DArray<float>: a view of the one slice of the mip the dispatch writes, or a
    // null descriptor of that shape.
    D3D12_UNORDERED_ACCESS_VIEW_DESC uav{};
    uav.Format = DXGI_FORMAT_R32_FLOAT;
    uav.ViewDimension = D3D12_UAV_DIMENSION_TEXTURE2DARRAY;
    uav.Texture2DArray.MipSlice = writes_texture ? spec.target->mip : 0;
    uav.Texture2DArray.FirstArraySlice = writes_texture ? spec.target->slice : 0;
    uav.Texture2DArray.ArraySize = 1;
    gpu_.device->CreateUnorderedAccessView(
        writes_texture ? gpu_.textures[spec.target->texture].get() : nullptr, nullptr, &uav,
        {srv_start.ptr + (w * kDescriptorsPerWorkload + kMaxProducerBindings) * srv_increment_});
  }
  return ok_status();
}

}  // namespace gpuoverlap::d3d12
