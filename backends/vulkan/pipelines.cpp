// The Perlin pipelines (workloads/perlin.hlsl as SPIR-V), their descriptors, and the
// background session's compute variants.
#include <string>
#include <vector>

#include "backends/vulkan/scenario_device.h"
#include "backends/vulkan/vk_check.h"
#include "background/background_session.h"
#include "background/shader_variants.h"
#include "core/scope_exit.h"
#include "scenarios/scenario.h"
#include "workload_spirv.h"

namespace gpuoverlap::vk {

namespace {

constexpr std::uint32_t kOutputTextureBinding = 4 + 2 * kMaxProducerBindings;
constexpr std::uint32_t kBindings = kOutputTextureBinding + 1;

VkDescriptorType descriptor_type(std::uint32_t binding) {
  if (binding < 4 + kMaxProducerBindings) return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  if (binding < kOutputTextureBinding) return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
  return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
}

}  // namespace

VkResult ScenarioDevice::create_shader_module(const std::uint32_t* code, std::size_t bytes,
                                              VkShaderModule* out) const {
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = bytes;
  mi.pCode = code;
  return vkCreateShaderModule(device_, &mi, nullptr, out);
}

VkResult ScenarioDevice::create_compute_pipeline(VkShaderModule module, const char* entry,
                                                 VkPipelineLayout layout, VkPipeline* out) const {
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              nullptr,
              0,
              VK_SHADER_STAGE_COMPUTE_BIT,
              module,
              entry,
              nullptr};
  ci.layout = layout;
  return vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, out);
}

Status ScenarioDevice::create_pipelines() {
  auto module = [&](const std::uint32_t* code, std::size_t bytes,
                    OwnedShaderModule& out) -> Status {
    GPUOVERLAP_VK(create_shader_module(code, bytes, out.receive(device_)));
    return ok_status();
  };
  if (facts_.shader_clock.recorded) {
    GPUOVERLAP_TRY(
        module(kPerlinComputeClockSpirv, sizeof(kPerlinComputeClockSpirv), compute_module_));
    GPUOVERLAP_TRY(
        module(kPerlinFragmentClockSpirv, sizeof(kPerlinFragmentClockSpirv), fragment_module_));
    GPUOVERLAP_TRY(module(kPerlinDepthFragmentClockSpirv, sizeof(kPerlinDepthFragmentClockSpirv),
                          depth_fragment_module_));
  } else {
    GPUOVERLAP_TRY(module(kPerlinComputeSpirv, sizeof(kPerlinComputeSpirv), compute_module_));
    GPUOVERLAP_TRY(module(kPerlinFragmentSpirv, sizeof(kPerlinFragmentSpirv), fragment_module_));
    GPUOVERLAP_TRY(module(kPerlinDepthFragmentSpirv, sizeof(kPerlinDepthFragmentSpirv),
                          depth_fragment_module_));
  }
  GPUOVERLAP_TRY(module(kPerlinVertexSpirv, sizeof(kPerlinVertexSpirv), vertex_module_));

  // perlin.hlsl: 0 input, 1 output, 2 counters, 3 stamps, 4-7 producer buffers (storage
  // buffers), 8-11 producer render targets (sampled images), 12 a dispatch's output texture
  // (a storage image).
  std::array<VkDescriptorSetLayoutBinding, kBindings> bindings{};
  for (std::uint32_t b = 0; b < bindings.size(); ++b)
    bindings[b] = {b, descriptor_type(b), 1,
                   VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = bindings.size();
  li.pBindings = bindings.data();
  GPUOVERLAP_VK(vkCreateDescriptorSetLayout(device_, &li, nullptr, set_layout_.receive(device_)));
  VkPushConstantRange range{
      VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_VERTEX_BIT, 0,
      sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = set_layout_.address();
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  GPUOVERLAP_VK(vkCreatePipelineLayout(device_, &pli, nullptr, pipeline_layout_.receive(device_)));

  GPUOVERLAP_VK(create_compute_pipeline(compute_module_, "cs_main", pipeline_layout_,
                                        compute_pipeline_.receive(device_)));

  bool any_graphics = false;
  for (const auto& w : scenario_.workloads)
    any_graphics = any_graphics || w.kind == WorkloadKind::graphics;
  if (!any_graphics) return ok_status();
  VkPipelineShaderStageCreateInfo stages[2] = {
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_VERTEX_BIT,
       vertex_module_, "vs_main", nullptr},
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0,
       VK_SHADER_STAGE_FRAGMENT_BIT, fragment_module_, "ps_main", nullptr}};
  VkPipelineVertexInputStateCreateInfo vertex_input{
      VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo assembly{
      VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo viewport{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  viewport.viewportCount = 1;
  viewport.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo raster{
      VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;
  raster.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo multisample{
      VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineColorBlendAttachmentState attachment{};
  attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT;
  VkPipelineColorBlendStateCreateInfo blend{
      VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  blend.attachmentCount = 1;
  blend.pAttachments = &attachment;
  const VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dynamic.dynamicStateCount = 2;
  dynamic.pDynamicStates = dynamic_states;
  VkFormat format = VK_FORMAT_R32_SFLOAT;
  VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachmentFormats = &format;
  VkGraphicsPipelineCreateInfo gi{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, &rendering};
  gi.stageCount = 2;
  gi.pStages = stages;
  gi.pVertexInputState = &vertex_input;
  gi.pInputAssemblyState = &assembly;
  gi.pViewportState = &viewport;
  gi.pRasterizationState = &raster;
  gi.pMultisampleState = &multisample;
  gi.pColorBlendState = &blend;
  gi.pDynamicState = &dynamic;
  gi.layout = pipeline_layout_;
  GPUOVERLAP_VK(vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &gi, nullptr,
                                          graphics_pipeline_.receive(device_)));
  // The same pipeline for each other format a draw renders into (dynamic rendering names the
  // attachment's format in the pipeline). Only the red channel is written in every format.
  // A depth format has no colour attachment: ps_depth_main writes the depth, which a depth
  // test that always passes stores for every pixel.
  VkPipelineDepthStencilStateCreateInfo depth{
      VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  depth.depthTestEnable = VK_TRUE;  // without it nothing is written
  depth.depthWriteEnable = VK_TRUE;
  depth.depthCompareOp = VK_COMPARE_OP_ALWAYS;
  for (const TextureImage& texture : textures_) {
    if (texture.format == VK_FORMAT_R32_SFLOAT ||
        graphics_pipeline_for(texture.format) != graphics_pipeline_)
      continue;
    format = texture.format;
    if (aspect_of(texture.format) == VK_IMAGE_ASPECT_DEPTH_BIT) {
      stages[1].module = depth_fragment_module_;
      stages[1].pName = "ps_depth_main";
      rendering.colorAttachmentCount = 0;
      rendering.pColorAttachmentFormats = nullptr;
      rendering.depthAttachmentFormat = texture.format;
      gi.pColorBlendState = nullptr;
      gi.pDepthStencilState = &depth;
    }
    OwnedPipeline pipeline;
    GPUOVERLAP_VK(vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &gi, nullptr,
                                            pipeline.receive(device_)));
    format_pipelines_.emplace_back(texture.format, std::move(pipeline));
    stages[1].module = fragment_module_;
    stages[1].pName = "ps_main";
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachmentFormats = &format;
    rendering.depthAttachmentFormat = VK_FORMAT_UNDEFINED;
    gi.pColorBlendState = &blend;
    gi.pDepthStencilState = nullptr;
  }
  return ok_status();
}

VkPipeline ScenarioDevice::graphics_pipeline_for(VkFormat format) const {
  for (const auto& [other, pipeline] : format_pipelines_)
    if (other == format) return pipeline;
  return graphics_pipeline_;
}

Status ScenarioDevice::create_descriptors() {
  const std::uint32_t count = static_cast<std::uint32_t>(scenario_.workloads.size());
  const VkDescriptorPoolSize sizes[3] = {
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (4 + kMaxProducerBindings) * count},
      {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, kMaxProducerBindings * count},
      {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, count}};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = count;
  pi.poolSizeCount = 3;
  pi.pPoolSizes = sizes;
  GPUOVERLAP_VK(vkCreateDescriptorPool(device_, &pi, nullptr, descriptor_pool_.receive(device_)));
  std::vector<VkDescriptorSetLayout> layouts(count, set_layout_);
  sets_.resize(count);
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = descriptor_pool_;
  ai.descriptorSetCount = count;
  ai.pSetLayouts = layouts.data();
  GPUOVERLAP_VK(vkAllocateDescriptorSets(device_, &ai, sets_.data()));
  for (std::uint32_t w = 0; w < count; ++w) {
    // A copy runs no shader: its set is never bound (and a readback's output is no storage
    // buffer, its source no sampled image in the layout a copy reads it in).
    if (scenario_.workloads[w].kind == WorkloadKind::copy) continue;
    const Buffer& output = outputs_[w].buffer ? outputs_[w] : dummy_output_;
    std::array<VkDescriptorBufferInfo, 4 + kMaxProducerBindings> buffers{};
    buffers[0] = {input_.buffer, 0, VK_WHOLE_SIZE};
    buffers[1] = {output.buffer, 0, VK_WHOLE_SIZE};
    buffers[2] = {counters_.buffer, w * slot_stride_, kSlotBytes};
    buffers[3] = {stamps_.buffer, w * slot_stride_, kSlotBytes};
    std::array<VkDescriptorImageInfo, kMaxProducerBindings> images{};
    std::uint32_t producer_buffers = 0, producer_targets = 0;
    const auto& deps = scenario_.workloads[w].depends_on;
    for (std::size_t i = 0; i < deps.size(); ++i) {
      const DependencyPlan& d = plan_.dependency(w, i);
      if (!d.reads_output) continue;
      if (d.resource == ResourceKind::buffer)
        buffers[4 + producer_buffers++] = {outputs_[d.producer].buffer, 0, VK_WHOLE_SIZE};
      else
        images[producer_targets++] = {VK_NULL_HANDLE, draw_target(d.producer).view,
                                      layout_for_barrier_layout(d.layout_at_consumer)};
    }
    const WorkloadSpec& spec = scenario_.workloads[w];
    const bool writes_texture = spec.kind == WorkloadKind::compute && spec.target;
    producers_[w] =
        producer_buffers | (producer_targets << 4) | (writes_texture ? kWritesTexture : 0);
    for (std::uint32_t b = producer_buffers; b < kMaxProducerBindings; ++b)
      buffers[4 + b] = {dummy_output_.buffer, 0, VK_WHOLE_SIZE};
    for (std::uint32_t t = producer_targets; t < kMaxProducerBindings; ++t)
      images[t] = {VK_NULL_HANDLE, dummy_target_.view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    // Its subresource is in GENERAL (UNORDERED_ACCESS) whenever the dispatch runs.
    const VkDescriptorImageInfo output_texture{
        VK_NULL_HANDLE,
        writes_texture ? draw_target(w).view
                       : static_cast<VkImageView>(placeholder_storage_.views[w]),
        VK_IMAGE_LAYOUT_GENERAL};
    std::array<VkWriteDescriptorSet, kBindings> writes{};
    for (std::uint32_t b = 0; b < writes.size(); ++b) {
      const VkDescriptorType type = descriptor_type(b);
      const VkDescriptorImageInfo* image =
          type == VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE   ? &images[b - buffers.size()]
          : type == VK_DESCRIPTOR_TYPE_STORAGE_IMAGE ? &output_texture
                                                     : nullptr;
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, sets_[w], b, 0, 1, type, image,
                   image ? nullptr : &buffers[b],          nullptr};
    }
    vkUpdateDescriptorSets(device_, static_cast<std::uint32_t>(writes.size()), writes.data(), 0,
                           nullptr);
  }
  return ok_status();
}

// The driver's compiler work for one background compile: the variant's SPIR-V becomes a
// compute pipeline on this device (same layout as the foreground's; never bound). Runs on
// background threads; vkCreateShaderModule/vkCreateComputePipelines need no external
// synchronisation of the device.
Result<background::PipelineHandle> ScenarioDevice::build_variant(
    const std::vector<std::uint32_t>& spirv) {
  // Raw handles, destroyed here: the OwnedDevice's busy flag belongs to the loop's thread.
  VkShaderModule module = VK_NULL_HANDLE;
  if (VkResult r =
          create_shader_module(spirv.data(), spirv.size() * sizeof(std::uint32_t), &module);
      r != VK_SUCCESS)
    return vk_error(r, "vkCreateShaderModule (background variant)");
  const ScopeExit module_guard([&] { vkDestroyShaderModule(device_, module, nullptr); });
  VkPipeline pipeline = VK_NULL_HANDLE;
  if (VkResult r = create_compute_pipeline(module, "cs_main", pipeline_layout_, &pipeline);
      r != VK_SUCCESS)
    return vk_error(r, "vkCreateComputePipelines (background variant)");
  return reinterpret_cast<background::PipelineHandle>(pipeline);
}

Status ScenarioDevice::create_background(const std::optional<background::BackgroundSpec>& spec) {
  bound_variants_.assign(scenario_.workloads.size(), 0);
  if (!spec) return ok_status();
  if (background::variant_bytecode() != background::VariantBytecode::spirv)
    return make_error(
        "background work: unsupported by this build (its shader variants are compiled to SPIR-V "
        "by shaderc, which this build lacks; --api d3d12 runs it with D3DCompile)",
        ErrorCategory::unsupported);
  background::PipelineBuilder builder;
  builder.build = [this](const std::vector<std::uint32_t>& spirv) { return build_variant(spirv); };
  builder.dispose = [this](background::PipelineHandle handle) {
    vkDestroyPipeline(device_, reinterpret_cast<VkPipeline>(handle), nullptr);
  };
  auto session = background::BackgroundSession::open(*spec, std::move(builder));
  if (!session) return session.error().with_context("background: ");
  background_ = std::move(*session);
  // The driver sees every workload's use of the compute shader with its iteration count.
  for (const WorkloadSpec& w : scenario_.workloads)
    background_->watch(w.name, w.iterations, compute_variants_.back_pointer(),
                       w.kind != WorkloadKind::copy);
  return ok_status();
}

Status ScenarioDevice::replace_background(const Scenario& scenario) {
  // No compile may deliver into the slot once its variants are destroyed.
  if (background_) background_->stop();
  background_.reset();
  // Every frame of the last run completed (the contract), so no command buffer that binds a
  // variant is pending, and the next record_frame records new ones.
  for (background::PipelineHandle variant : compute_variants_.take())
    vkDestroyPipeline(device_, reinterpret_cast<VkPipeline>(variant), nullptr);
  return create_background(scenario.background);
}

}  // namespace gpuoverlap::vk
