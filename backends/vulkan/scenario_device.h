// The Vulkan objects of one scenario on one device, shared by the frame loop
// (engine/frame_loop.cpp) and the preemption loop
// (engine/preemption_loop.cpp) as their ScenarioBackend. Internal to the Vulkan backend.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/barrier_translation.h"
#include "backends/vulkan/device_objects.h"
#include "backends/vulkan/device_pool.h"
#include "backends/vulkan/vulkan_instance.h"
#include "background/background_session.h"
#include "background/variant_slot.h"
#include "engine/executor.h"
#include "engine/scenario_backend.h"
#include "queues/queue_mapping.h"
#include "scenarios/frame_plan.h"
#include "timeline/clock_conversion.h"

namespace gpuoverlap::vk {

// Stamp and counter slots are at least 64 bytes apart so workloads never share a cache line;
// the stride is rounded up to the device's storage-buffer offset alignment, because each
// workload's descriptors bind exactly its own slot.
// (kSlotBytes, kMaxProducerBindings and kInputElements are perlin.hlsl's: workloads/workload.h.)
constexpr std::uint32_t kCalibrationSamples = 8;
// Deadline of one-time setup work on the device (the input upload): not a frame, so not
// --timeout-ms, which may be set far below what setup needs.
constexpr std::uint64_t kSetupTimeoutNs = 30'000'000'000;

// The ping-pong mailbox (pingpong.comp): ping at word 0, pong at word 1.
constexpr std::uint32_t kPingPongCancel = 0xFFFFFFFFu;
constexpr std::uint32_t kPingPongGaveUp = 0xFFFFFFFEu;
// The GPU's last-resort bound on its spin (reads of the mailbox over all rounds): about 30 s
// at the ~1 µs of a read across PCIe. A CPU driver's "GPU" threads die with the process, so
// there it may spin far longer (a descheduled poster must not make the probe fail).
constexpr std::uint32_t kPingPongMaxSpinsGpu = 1u << 25;
constexpr std::uint32_t kPingPongMaxSpinsCpu = 0xFFFFFFF0u;

using PushConstants = PerlinParams;  // workloads/workload.h

// "DEVICE_LOCAL|HOST_VISIBLE|...": a memory type's flags, for meta.json and messages.
std::string memory_flags_text(VkMemoryPropertyFlags flags);

// One scenario queue as it lives on the device.
struct QueueState {
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  std::uint32_t timestamp_valid_bits = 0;
  OwnedCommandPool pool;
  VkCommandBuffer prepare = VK_NULL_HANDLE;  // resets counters/queries/events, before the gate
  OwnedSemaphore done;                       // timeline: frame f complete when value >= f
  std::vector<std::size_t> workloads;        // in recording order
};

// One command buffer of a queue for one-time setup work (the input's upload, the ping-pong
// probe), submitted with a fence of its own. Freed when it goes out of scope, unless the GPU
// may still use it.
class OneTimeCommands {
 public:
  OneTimeCommands(const OwnedDevice& device, const QueueState& queue)
      : device_(device), queue_(queue) {}
  OneTimeCommands(const OneTimeCommands&) = delete;
  OneTimeCommands& operator=(const OneTimeCommands&) = delete;
  ~OneTimeCommands();

  // Allocates the command buffer and begins recording into cmd().
  Status begin();
  VkCommandBuffer cmd() const { return cmd_; }
  // Ends the recording and submits it with the fence.
  VkResult submit();
  VkResult wait(std::uint64_t timeout_ns) const;

 private:
  const OwnedDevice& device_;
  const QueueState& queue_;
  OwnedFence fence_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
};

// One subresource from `old_layout` to where a frame starts it, after any earlier write to it
// and before what writes it next: COLOR_ATTACHMENT_OPTIMAL for draws (the depth attachment
// layout for a draw into a depth texture), GENERAL for a dispatch's storage writes,
// TRANSFER_DST_OPTIMAL for a copy's; any other layout (where a heap's holder
// waits for the frame's first hand-over) before everything after it.
VkImageMemoryBarrier2 to_start_layout(VkImage image, VkImageAspectFlags aspect,
                                      VkImageLayout old_layout, VkImageLayout new_layout,
                                      std::uint32_t mip, std::uint32_t layer);

// The aspect every barrier, view and copy of an image of `format` names: gpuoverlap's formats
// are colour formats and one depth format without stencil.
inline VkImageAspectFlags aspect_of(VkFormat format) {
  return format == VK_FORMAT_D32_SFLOAT ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT;
}

// One vkCmdPipelineBarrier2 of a global memory barrier from `src` to `dst` (an execution
// barrier where both accesses are 0), with `images` beside it in the same dependency.
void record_global_barrier(VkCommandBuffer cmd, const SyncScope& src, const SyncScope& dst,
                           const std::vector<VkImageMemoryBarrier2>& images = {});

// Every Vulkan object of one scenario, each an owning handle (device_objects.h) made from
// device_, which is declared first and so destroyed last. When the GPU may still be running
// (a timed-out frame), nothing is destroyed: freeing memory the GPU still uses is worse than
// leaking it in a process that is about to report and exit.
//
// Its methods live in one file per concern: scenario_device.cpp (device, features, queues,
// clocks, a frame's submission and wait), resources.cpp (memory), pipelines.cpp (pipelines,
// descriptors, background variants), recording.cpp (a frame's commands), streams.cpp (the
// preemption streams), ping_pong.cpp (the self-test's probe).
class ScenarioDevice final : public ScenarioBackend {
 public:
  // With a `pool`, the device is taken from its idle ones where one was created with the same
  // queues, priorities and features (device_key), and given back to it when this is destroyed
  // idle; without, it is created here and destroyed with this.
  ScenarioDevice(const Instance& instance, const PhysicalDeviceInfo& info, const Scenario& s,
                 const RunSettings& settings, std::shared_ptr<DevicePool> pool = nullptr)
      : instance_(instance),
        info_(info),
        scenario_(s),
        settings_(settings),
        pool_(std::move(pool)),
        plan_(frame_plan_of(s)) {}
  ~ScenarioDevice();
  ScenarioDevice(const ScenarioDevice&) = delete;
  ScenarioDevice& operator=(const ScenarioDevice&) = delete;

  Status create();
  Result<PingPongResult> ping_pong(std::uint32_t rounds, std::uint32_t timeout_ms);
  // The round trip through a host-signalled timeline semaphore: every round is submitted at
  // once, each waiting for its value; the CPU signals round r and spins until a fill the wait
  // released has written r into the stamp memory.
  Result<PingPongResult> semaphore_round_trip(std::uint32_t rounds, std::uint32_t timeout_ms);
  bool gpu_may_be_busy() const { return device_.gpu_may_be_busy; }
  void set_gpu_may_be_busy() override { device_.gpu_may_be_busy = true; }
  void discard_device() override { device_.release = nullptr; }

 private:
  Status check_features();
  // What creating the device depends on beyond the physical device: its queues (names, types
  // and priorities: the priority notes name the queues), --priority-fallback, and the features
  // asked for. After check_features.
  std::string device_key() const;
  Status create_device();
  // After create_device: arms device_ to give the device back to the pool when this is
  // destroyed idle (nothing without a pool).
  void arm_return_to_pool();
  // Memory for `requirements`: of the types with all of `required`, the one with most of
  // `wanted` and fewest of `unwanted` (ties: the first, as the driver orders them).
  Status allocate_memory(OwnedMemory& out, std::uint32_t& memory_type,
                         const VkMemoryRequirements& requirements, VkMemoryPropertyFlags required,
                         VkMemoryPropertyFlags wanted, VkMemoryPropertyFlags unwanted,
                         const char* what);
  Status create_buffer(Buffer& out, VkDeviceSize size, VkBufferUsageFlags usage,
                       VkMemoryPropertyFlags required, VkMemoryPropertyFlags wanted,
                       VkMemoryPropertyFlags unwanted, const char* what);
  // A 2-D image (a colour or depth attachment by its format, sampled, and `extra_usage`) in
  // device-local memory, shared by the queue families in use; a view of one subresource of it.
  // `memory` null: the image is left unbound (a texture placed in a heap, bound by bind_heaps).
  Status create_2d_image(OwnedImage& image, OwnedMemory* memory, VkFormat format,
                         std::uint32_t width, std::uint32_t height, std::uint32_t mips,
                         std::uint32_t slices, VkImageUsageFlags extra_usage, const char* what);
  Status create_subresource_view(OwnedImageView& out, VkImage image, VkFormat format,
                                 std::uint32_t mip, std::uint32_t slice);
  // An R32F image of one subresource (a transfer source too where a readback copies it:
  // `extra_usage`).
  Status create_image(Image& out, std::uint32_t width, std::uint32_t height,
                      VkImageUsageFlags extra_usage = 0);
  // A storage image too where `unordered_access` (a dispatch writes it), a transfer
  // destination where `copy_destination` (a copy writes it), a transfer source where
  // `copy_source` (a readback copies from it).
  Status create_texture(TextureImage& out, const TextureSpec& spec, bool unordered_access,
                        bool copy_destination, bool copy_source = false);
  Status create_texture_views(TextureImage& out, const TextureSpec& spec);
  // One allocation per heap, every texture placed in it bound at its offset 0 (they alias),
  // then their views.
  Status bind_heaps();
  // What workload `w`'s draw renders into: its own render target, or the subresource of a
  // declared texture it targets (that mip's size), which a dispatch writes as a storage image.
  struct DrawTarget {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    std::uint32_t width = 0, height = 0;
    VkFormat format = VK_FORMAT_R32_SFLOAT;
  };
  DrawTarget draw_target(std::size_t w) const;
  VkPipeline graphics_pipeline_for(VkFormat format) const;
  Status create_stamp_buffer(Buffer& out, VkDeviceSize size, const char* what);
  Status upload_input();
  // Shared by the foreground pipelines, the probe and the background variants (called from
  // background threads: they read only the device).
  VkResult create_shader_module(const std::uint32_t* code, std::size_t bytes,
                                VkShaderModule* out) const;
  VkResult create_compute_pipeline(VkShaderModule module, const char* entry,
                                   VkPipelineLayout layout, VkPipeline* out) const;
  Status create_pipelines();
  Status create_descriptors();
  Status create_queue_objects();
  void record_memory_and_queue_facts();
  Status setup_calibration();

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

  // The preemption streams' recording (backends/vulkan/streams.cpp).
  std::uint32_t first_stream_query(Stream stream, std::uint32_t ring) const;
  void record_counter_reset(VkCommandBuffer cmd, const std::vector<std::size_t>& workloads,
                            std::uint32_t first_query, std::uint32_t queries);
  void record_stream_part(VkCommandBuffer cmd, std::size_t w, std::uint32_t sequence,
                          const preemption::LoadSize& size, std::uint32_t query);

  GpuOutcome outcome_of(VkResult result, const char* call) const;
  void record_workload(VkCommandBuffer cmd, std::size_t w, std::uint32_t frame, bool timestamps);
  // Workload w's Perlin work with push constants `pc`: a dispatch of pc.thread_count threads
  // (compute), or `draws` full-target draws inside a render pass of its own (graphics; the
  // target must be in COLOR_ATTACHMENT_OPTIMAL, a depth texture in
  // DEPTH_STENCIL_ATTACHMENT_OPTIMAL). Called outside a render pass.
  void record_perlin(VkCommandBuffer cmd, std::size_t w, const PushConstants& pc,
                     std::uint32_t draws) const;
  // Copy workload w (kind copy): its upload buffer into its output buffer or texture, or a
  // readback's source into its readback buffer, between its two stamp writes
  // (vkCmdFillBuffer), each ordered against the copy by an execution barrier; the timestamps,
  // when `timestamps`, right before and after the copy (the start one is not ordered after the
  // start stamp's fill).
  void record_copy(VkCommandBuffer cmd, std::size_t w, std::uint32_t frame, bool timestamps) const;
  void record_barriers(VkCommandBuffer cmd, const std::vector<BarrierDesc>& descs,
                       std::size_t producer) const;
  void record_event(VkCommandBuffer cmd, VkEvent event, const std::vector<BarrierDesc>& descs,
                    std::size_t producer, bool set) const;
  Status submit_frame_commands(std::uint32_t frame);
  // `spec`'s background session over this device's compute pipeline (none without one).
  Status create_background(const std::optional<background::BackgroundSpec>& spec);
  Result<background::PipelineHandle> build_variant(const std::vector<std::uint32_t>& spirv);

  const Instance& instance_;
  const PhysicalDeviceInfo& info_;
  const Scenario& scenario_;
  const RunSettings& settings_;
  // Declared before device_, so both outlive the device's release into the pool.
  std::shared_ptr<DevicePool> pool_;  // null: the device is this scenario's alone
  PooledDevice pooled_;               // what the pool is given back (with a pool)

  OwnedDevice device_;  // first: destroyed after every object made from it
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  std::vector<QueueState> queues_;
  std::vector<MappedQueue> mapping_;
  std::vector<QueuePriority> granted_priority_;
  ScenarioDeviceFacts facts_;  // filled while create() runs, unchanged after

  Buffer stamps_, counters_, input_, dummy_output_;
  std::vector<Buffer> outputs_;         // per workload; empty buffer for graphics
  std::vector<Buffer> uploads_;         // per workload; a copy's source, empty for the others
  std::vector<Image> targets_;          // per workload; empty image for compute or a texture's draw
  std::vector<OwnedMemory> heaps_;      // per heap of aliased textures; outlives textures_
  std::vector<TextureImage> textures_;  // per declared texture
  std::vector<std::vector<VkImageLayout>> texture_layouts_;  // per texture, per subresource
  OwnedQueryPool queries_;
  OwnedSemaphore gate_;
  const FramePlan& plan_;           // barriers, fences and submissions of a frame
  std::vector<DependencyOps> ops_;  // per plan_.barriers.dependencies entry
  // Per workload: its target transitions (a draw after a read of its subresource, an aliasing
  // hand-over), each on its texture, recorded one barrier call each in order (a hand-over's
  // barriers touch two images of one memory; the activation's own first scope orders it after
  // the holder's last use, see translate(TargetTransition)).
  struct TargetOp {
    BarrierDesc desc;
    std::size_t texture = 0;
  };
  std::vector<std::vector<TargetOp>> target_ops_;
  std::vector<OwnedEvent> events_;      // per plan dependency; split barriers (event policy)
  std::vector<OwnedSemaphore> fences_;  // per workload; timeline, only where another queue waits
  std::vector<VkCommandBuffer> segment_buffers_;  // per plan_.segments entry
  std::vector<VkImageLayout> target_layouts_;     // per workload: where its target is now
  std::vector<std::uint32_t> families_in_use_;    // resources are CONCURRENT across these
  VkDeviceSize slot_stride_ = kSlotBytes;
  Image dummy_target_;  // bound where a consumer reads fewer render targets than it could
  // output_texture of a dispatch that writes no texture: a layer each (in GENERAL), since
  // synchronization validation takes the binding as written by every dispatch.
  TextureImage placeholder_storage_;
  std::vector<std::uint32_t> producers_;      // per workload: PushConstants::producers
  std::vector<VkSemaphore> done_semaphores_;  // per queue: what a frame's wait waits for
  std::vector<std::uint64_t> done_values_;    // per queue: the frame waited for
  std::vector<std::uint64_t> query_data_;     // per workload: start, available, end, available

  OwnedSetLayout set_layout_;
  OwnedPipelineLayout pipeline_layout_;
  // depth_fragment_module_: ps_depth_main, for draws into a depth texture.
  OwnedShaderModule compute_module_, vertex_module_, fragment_module_, depth_fragment_module_;
  OwnedPipeline compute_pipeline_, graphics_pipeline_;
  // Draws into declared textures of other formats than R32_SFLOAT: one pipeline per format.
  std::vector<std::pair<VkFormat, OwnedPipeline>> format_pipelines_;
  OwnedDescriptorPool descriptor_pool_;
  std::vector<VkDescriptorSet> sets_;

  PFN_vkGetCalibratedTimestampsEXT get_calibrated_timestamps_ = nullptr;
  VkTimeDomainEXT host_domain_ = VK_TIME_DOMAIN_CLOCK_MONOTONIC_RAW_EXT;
  std::int64_t monotonic_to_raw_ns_ = 0;

  // Background work ([background]): compiled variants of the compute pipeline land in the
  // slot (the spec's lifetime pattern); the session is stopped before anything it uses is
  // destroyed.
  background::VariantSlot<background::PipelineHandle> compute_variants_;
  // Per workload, the committed variant bound in place of the build-time compute pipeline
  // (a handle from compute_variants_; 0: none). Declared after the slot, so destroyed first.
  std::vector<background::PipelineHandle> bound_variants_;
  std::unique_ptr<background::BackgroundSession> background_;
  std::uint32_t last_frame_ = 0;  // the highest frame submitted (last_frame)

  // A preemption scenario's two streams (prepare_streams).
  struct StreamState {
    std::size_t queue = 0;  // scenario queue
    OwnedCommandPool pool;
    std::vector<VkCommandBuffer> buffers;  // the ring
    OwnedSemaphore done;                   // timeline: the sequence completed
  };
  StreamLayout streams_;
  StreamState load_stream_, urgent_stream_;
  OwnedQueryPool stream_queries_;
};

}  // namespace gpuoverlap::vk
