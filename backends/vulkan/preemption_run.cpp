// The preemption loop on Vulkan (DESIGN.md section 6). One thread records and submits
// everything, so queues that share a device queue (lavapipe) need no lock; a SequencePoller
// thread times every stamp.
//
// Each submission starts by zeroing its own stamp counters behind a barrier on everything
// earlier on its queue: submissions of one queue therefore run one after the other (as a
// compositor's frames and a renderer's frames do), and a workload's single stamp slot is
// reused only once its previous use has finished.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "backends/vulkan/scenario_device.h"
#include "backends/vulkan/vk_check.h"
#include "backends/vulkan/vulkan_executor.h"
#include "core/clock.h"
#include "core/scope_exit.h"
#include "preemption/load_calibration.h"
#include "queues/sequence_poller.h"
#include "scenarios/scenario.h"
#include "timeline/clock_agreement.h"

namespace gpuoverlap::vk {

namespace {

using preemption::LoadSize;

constexpr std::uint32_t kLoadsInFlight = 2;  // the load queue never idles between loads
constexpr std::uint32_t kLoadRing = 4;
constexpr std::uint32_t kUrgentRing = 64;  // urgent submissions in flight at most
constexpr std::uint32_t kMaxLoadParts = 2;
// The load process keeps loading at most this long past the urgent phase it was started for,
// should its parent never tell it to stop.
constexpr std::int64_t kLoadProcessGraceNs = 30'000'000'000;

struct Submission {
  bool urgent = false;
  std::uint32_t sequence = 0;  // the stamp number (1-based, per kind)
  std::uint32_t ring = 0;      // command buffer and query entry
  bool measured = false;       // a baseline or contended load, or an urgent job
  bool baseline = false;
  std::int64_t submit_ns = 0, submit_return_ns = 0, deadline_ns = 0;
  bool done = false;
  RecordStatus status = RecordStatus::ok;
  std::optional<GpuCalibration> calibration;
  // Per part (urgent: one): timestamp ticks at start and end.
  std::optional<std::uint64_t> ts_ticks[kMaxLoadParts][2];
  std::int64_t wall_end_ns = 0;  // when the CPU saw it complete (calibration fallback)
};

}  // namespace

class PreemptionLoop {
 public:
  PreemptionLoop(ScenarioDevice& device, const ProgressCallback& progress,
                 const ScenarioDevice::PreemptionHooks& hooks)
      : d_(device), progress_(progress), hooks_(hooks), spec_(*device.scenario_.preemption) {}
  ~PreemptionLoop() { teardown(); }

  ScenarioTimeline run();

 private:
  Status setup();
  void teardown();
  Status record(VkCommandBuffer cmd, const Submission& s, std::optional<std::size_t> only_part);
  void record_part(VkCommandBuffer cmd, std::size_t w, std::uint32_t sequence, const LoadSize& size,
                   std::uint32_t query);
  void record_counter_reset(VkCommandBuffer cmd, const std::vector<std::size_t>& workloads,
                            std::uint32_t first_query, std::uint32_t queries);
  Result<std::size_t> submit(bool urgent, bool measured, bool baseline,
                             std::optional<std::size_t> only_part = std::nullopt);
  // Marks finished submissions done (reading their timestamps); with `block`, waits for the
  // oldest unfinished one. An error: a deadline passed or the device was lost.
  Status collect(bool block);
  Result<double> measure_part(std::size_t part, const LoadSize& size);
  Status calibrate();
  void build_timeline(ScenarioTimeline& timeline, const std::vector<SequenceEvent>& events);
  void fail_in_flight(RecordStatus status);
  std::size_t in_flight(bool urgent) const;
  double elapsed_ms(std::int64_t since_ns) const {
    return static_cast<double>(monotonic_raw_ns() - since_ns) / 1e6;
  }

  ScenarioDevice& d_;
  const ProgressCallback& progress_;
  const ScenarioDevice::PreemptionHooks& hooks_;
  const preemption::PreemptionSpec& spec_;

  std::vector<std::size_t> load_parts_;  // workload indices
  std::optional<std::size_t> urgent_;
  std::optional<std::size_t> load_queue_, urgent_queue_;
  std::vector<LoadSize> sizes_;  // per load part, as run
  preemption::PreemptionRunInfo info_;

  VkCommandPool load_pool_ = VK_NULL_HANDLE, urgent_pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> load_buffers_, urgent_buffers_;
  VkSemaphore load_done_ = VK_NULL_HANDLE, urgent_done_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  bool timestamps_ = false;
  double worst_deviation_ns_ = 0;
  std::uint32_t load_sequence_ = 0, urgent_sequence_ = 0;
  std::vector<Submission> submissions_;  // in submission order
  std::size_t first_unfinished_ = 0;
  std::optional<Error> failure_;
  std::uint32_t skipped_ticks_ = 0;
  SequencePoller poller_;
};

Status PreemptionLoop::setup() {
  const Scenario& s = d_.scenario_;
  for (std::size_t w = 0; w < s.workloads.size(); ++w) {
    if (s.workloads[w].name == preemption::kUrgentWorkload) {
      urgent_ = w;
      urgent_queue_ = s.workloads[w].queue;
    } else {
      load_parts_.push_back(w);
      load_queue_ = s.workloads[w].queue;
    }
  }
  if (load_parts_.size() > kMaxLoadParts) return make_error("a load has at most two parts");
  timestamps_ = d_.settings_.timestamp_queries;
  for (const QueueState& q : d_.queues_) timestamps_ = timestamps_ && q.timestamp_valid_bits > 0;

  auto make_pool = [&](std::size_t queue, VkCommandPool& pool, std::vector<VkCommandBuffer>& out,
                       std::uint32_t count) -> Status {
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = d_.queues_[queue].family;
    GPUOVERLAP_VK(vkCreateCommandPool(d_.device_, &pi, nullptr, &pool));
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = count;
    out.resize(count);
    GPUOVERLAP_VK(vkAllocateCommandBuffers(d_.device_, &ai, out.data()));
    return ok_status();
  };
  auto make_semaphore = [&](VkSemaphore& out) -> Status {
    VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                 VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
    GPUOVERLAP_VK(vkCreateSemaphore(d_.device_, &si, nullptr, &out));
    return ok_status();
  };
  if (load_queue_) {
    GPUOVERLAP_TRY(make_pool(*load_queue_, load_pool_, load_buffers_, kLoadRing));
    GPUOVERLAP_TRY(make_semaphore(load_done_));
  }
  if (urgent_queue_) {
    GPUOVERLAP_TRY(make_pool(*urgent_queue_, urgent_pool_, urgent_buffers_, kUrgentRing));
    GPUOVERLAP_TRY(make_semaphore(urgent_done_));
  }
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = kLoadRing * kMaxLoadParts * 2 + kUrgentRing * 2;
  GPUOVERLAP_VK(vkCreateQueryPool(d_.device_, &qi, nullptr, &queries_));
  return ok_status();
}

void PreemptionLoop::teardown() {
  if (d_.device_ == VK_NULL_HANDLE || d_.gpu_may_be_busy_) return;  // leak, see ScenarioDevice
  vkDeviceWaitIdle(d_.device_);
  if (load_pool_) vkDestroyCommandPool(d_.device_, load_pool_, nullptr);
  if (urgent_pool_) vkDestroyCommandPool(d_.device_, urgent_pool_, nullptr);
  if (load_done_) vkDestroySemaphore(d_.device_, load_done_, nullptr);
  if (urgent_done_) vkDestroySemaphore(d_.device_, urgent_done_, nullptr);
  if (queries_) vkDestroyQueryPool(d_.device_, queries_, nullptr);
  load_pool_ = urgent_pool_ = VK_NULL_HANDLE;
  load_done_ = urgent_done_ = VK_NULL_HANDLE;
  queries_ = VK_NULL_HANDLE;
}

// Queries first (outside any render pass), then the workloads' counters are zeroed once
// everything earlier on the queue is done with them, and made visible to the shaders.
void PreemptionLoop::record_counter_reset(VkCommandBuffer cmd,
                                          const std::vector<std::size_t>& workloads,
                                          std::uint32_t first_query, std::uint32_t queries) {
  if (timestamps_) vkCmdResetQueryPool(cmd, queries_, first_query, queries);
  VkMemoryBarrier2 before{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  before.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  before.srcAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
  before.dstStageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
  before.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
  VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep.memoryBarrierCount = 1;
  dep.pMemoryBarriers = &before;
  vkCmdPipelineBarrier2(cmd, &dep);
  for (std::size_t w : workloads)
    vkCmdFillBuffer(cmd, d_.counters_.buffer, w * d_.slot_stride_, kSlotBytes, 0);
  VkMemoryBarrier2 after{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  after.srcStageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
  after.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
  after.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  after.dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
  std::vector<VkImageMemoryBarrier2> images;
  for (std::size_t w : workloads) {
    const Image& target = d_.targets_[w];
    if (!target.image) continue;
    // The previous load's draws are done writing (the barrier above); its contents are not
    // needed, so the layout starts from UNDEFINED every time.
    images.push_back(to_color_attachment(target.image, VK_IMAGE_LAYOUT_UNDEFINED));
  }
  VkDependencyInfo dep_after{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep_after.memoryBarrierCount = 1;
  dep_after.pMemoryBarriers = &after;
  dep_after.imageMemoryBarrierCount = static_cast<std::uint32_t>(images.size());
  dep_after.pImageMemoryBarriers = images.data();
  vkCmdPipelineBarrier2(cmd, &dep_after);
}

// One part: a dispatch, or `size.draws` draws into its target, stamped with `sequence`, between
// two timestamps at `query` and `query + 1`.
void PreemptionLoop::record_part(VkCommandBuffer cmd, std::size_t w, std::uint32_t sequence,
                                 const LoadSize& size, std::uint32_t query) {
  if (timestamps_) vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, queries_, query);
  const bool graphics = size.draws > 0;
  const std::uint32_t threads =
      graphics ? kRenderTargetWidth * size.rows * size.draws : thread_count(size.groups);
  const PushConstants pc{
      sequence, static_cast<std::uint32_t>(w), threads, size.iterations, kRenderTargetWidth, 1u,
      0u};
  d_.record_perlin(cmd, w, pc, size.draws);
  if (timestamps_)
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, queries_, query + 1);
}

// A load submission (all its parts, or only one while calibrating) or an urgent job.
Status PreemptionLoop::record(VkCommandBuffer cmd, const Submission& s,
                              std::optional<std::size_t> only_part) {
  GPUOVERLAP_VK(vkResetCommandBuffer(cmd, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  GPUOVERLAP_VK(vkBeginCommandBuffer(cmd, &bi));
  if (s.urgent) {
    const std::size_t w = *urgent_;
    const std::uint32_t query = kLoadRing * kMaxLoadParts * 2 + s.ring * 2;
    record_counter_reset(cmd, {w}, query, 2);
    const WorkloadSpec& spec = d_.scenario_.workloads[w];
    record_part(cmd, w, s.sequence, {.groups = spec.groups, .iterations = spec.iterations}, query);
  } else {
    std::vector<std::size_t> parts, workloads;
    for (std::size_t p = 0; p < load_parts_.size(); ++p)
      if (!only_part || *only_part == p) {
        parts.push_back(p);
        workloads.push_back(load_parts_[p]);
      }
    const std::uint32_t first_query = s.ring * kMaxLoadParts * 2;
    record_counter_reset(cmd, workloads, first_query, kMaxLoadParts * 2);
    for (std::size_t p : parts)
      record_part(cmd, load_parts_[p], s.sequence, sizes_[p],
                  first_query + static_cast<std::uint32_t>(p) * 2);
  }
  GPUOVERLAP_VK(vkEndCommandBuffer(cmd));
  return ok_status();
}

std::size_t PreemptionLoop::in_flight(bool urgent) const {
  std::size_t n = 0;
  for (std::size_t i = first_unfinished_; i < submissions_.size(); ++i)
    if (!submissions_[i].done && submissions_[i].urgent == urgent) ++n;
  return n;
}

Result<std::size_t> PreemptionLoop::submit(bool urgent, bool measured, bool baseline,
                                           std::optional<std::size_t> only_part) {
  Submission s;
  s.urgent = urgent;
  s.measured = measured;
  s.baseline = baseline;
  s.sequence = urgent ? ++urgent_sequence_ : ++load_sequence_;
  s.ring = (s.sequence - 1) % (urgent ? kUrgentRing : kLoadRing);
  VkCommandBuffer cmd = urgent ? urgent_buffers_[s.ring] : load_buffers_[s.ring];
  GPUOVERLAP_TRY(record(cmd, s, only_part));
  const VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr,
                                     urgent ? urgent_done_ : load_done_,      s.sequence,
                                     VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,    0};
  const VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, cmd, 0};
  VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
  si.commandBufferInfoCount = 1;
  si.pCommandBufferInfos = &cb;
  si.signalSemaphoreInfoCount = 1;
  si.pSignalSemaphoreInfos = &signal;
  const VkQueue queue = d_.queues_[urgent ? *urgent_queue_ : *load_queue_].queue;
  s.submit_ns = monotonic_raw_ns();
  const VkResult result = vkQueueSubmit2(queue, 1, &si, VK_NULL_HANDLE);
  s.submit_return_ns = monotonic_raw_ns();
  s.deadline_ns = s.submit_ns + std::int64_t{d_.settings_.frame_timeout_ms} * 1'000'000;
  if (result != VK_SUCCESS) {
    d_.gpu_may_be_busy_ = true;
    return vk_error(result, urgent ? "submitting the urgent job" : "submitting the load");
  }
  submissions_.push_back(s);
  return submissions_.size() - 1;
}

Status PreemptionLoop::collect(bool block) {
  for (std::size_t i = first_unfinished_; i < submissions_.size(); ++i) {
    Submission& s = submissions_[i];
    if (s.done) continue;
    const VkSemaphore semaphore = s.urgent ? urgent_done_ : load_done_;
    std::uint64_t value = 0;
    VkResult result = vkGetSemaphoreCounterValue(d_.device_, semaphore, &value);
    if (result == VK_SUCCESS && value < s.sequence && block) {
      const std::int64_t remaining = std::max<std::int64_t>(s.deadline_ns - monotonic_raw_ns(), 0);
      const std::uint64_t wanted = s.sequence;
      VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
      wait.semaphoreCount = 1;
      wait.pSemaphores = &semaphore;
      wait.pValues = &wanted;
      result = vkWaitSemaphores(d_.device_, &wait, static_cast<std::uint64_t>(remaining));
      if (result == VK_SUCCESS) value = wanted;
      block = false;  // one blocking wait per call: for the oldest
    }
    if (result == VK_TIMEOUT ||
        (result == VK_SUCCESS && value < s.sequence && monotonic_raw_ns() > s.deadline_ns)) {
      d_.gpu_may_be_busy_ = true;
      fail_in_flight(RecordStatus::timeout);
      return Error{std::string(s.urgent ? "an urgent job" : "a load") + " did not finish within " +
                       std::to_string(d_.settings_.frame_timeout_ms) +
                       " ms of its submission (--timeout-ms); stopped",
                   VK_TIMEOUT, result_name(VK_TIMEOUT)};
    }
    if (result != VK_SUCCESS) {
      d_.gpu_may_be_busy_ = true;
      fail_in_flight(result == VK_ERROR_DEVICE_LOST ? RecordStatus::device_lost
                                                    : RecordStatus::gpu_error);
      return vk_error(result, "waiting for a submission");
    }
    if (value < s.sequence) continue;
    s.done = true;
    s.wall_end_ns = monotonic_raw_ns();
    if (timestamps_) {
      const std::size_t parts = s.urgent ? 1 : load_parts_.size();
      const std::uint32_t first =
          s.urgent ? kLoadRing * kMaxLoadParts * 2 + s.ring * 2 : s.ring * kMaxLoadParts * 2;
      std::uint64_t data[kMaxLoadParts * 2][2] = {};
      const VkResult qr =
          vkGetQueryPoolResults(d_.device_, queries_, first, static_cast<std::uint32_t>(parts * 2),
                                sizeof data, data, 2 * sizeof(std::uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
      if (qr == VK_SUCCESS || qr == VK_NOT_READY)
        for (std::size_t p = 0; p < parts; ++p)
          for (int e = 0; e < 2; ++e)
            if (data[p * 2 + e][1]) s.ts_ticks[p][e] = data[p * 2 + e][0];
    }
    // Also without timestamp queries: it places the shader clock (nullopt when neither clock
    // is on; setup_calibration decides).
    s.calibration = d_.calibrate();
    if (s.calibration)
      worst_deviation_ns_ =
          std::max(worst_deviation_ns_, static_cast<double>(s.calibration->max_deviation_ns));
  }
  while (first_unfinished_ < submissions_.size() && submissions_[first_unfinished_].done)
    ++first_unfinished_;
  return ok_status();
}

void PreemptionLoop::fail_in_flight(RecordStatus status) {
  for (std::size_t i = first_unfinished_; i < submissions_.size(); ++i)
    if (!submissions_[i].done) {
      submissions_[i].done = true;
      submissions_[i].status = status;
    }
  first_unfinished_ = submissions_.size();
}

Result<double> PreemptionLoop::measure_part(std::size_t part, const LoadSize& size) {
  if (d_.settings_.should_stop && d_.settings_.should_stop()) return make_error("interrupted");
  sizes_[part] = size;
  auto index = submit(false, false, false, part);
  if (!index) return index.error();
  GPUOVERLAP_TRY(collect(true));
  const Submission& s = submissions_[*index];
  if (!s.done) return make_error("the load did not complete");
  // The GPU's own duration where timestamps exist (no submission overhead), else the CPU's.
  if (s.ts_ticks[part][0] && s.ts_ticks[part][1] && *s.ts_ticks[part][1] > *s.ts_ticks[part][0])
    return static_cast<double>(*s.ts_ticks[part][1] - *s.ts_ticks[part][0]) *
           d_.info_.properties.limits.timestampPeriod / 1e6;
  return static_cast<double>(s.wall_end_ns - s.submit_ns) / 1e6;
}

Status PreemptionLoop::calibrate() {
  const auto& limits = d_.info_.properties.limits;
  const std::uint32_t max_groups = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(kMaxGroups, std::uint64_t{limits.maxComputeWorkGroupCount[0]} *
                                              kThreadsPerDispatchGroup / kThreadsPerGroupUnit));
  // The load process's parent may be an urgent-only device; sizes follow the scenario made for
  // the spec, so the parts' order here matches plan_parts.
  const std::vector<preemption::PartPlan> plans = preemption::plan_parts(spec_, max_groups);
  if (plans.size() != load_parts_.size()) return make_error("load parts do not match the spec");
  sizes_.resize(plans.size());
  for (std::size_t p = 0; p < plans.size(); ++p) sizes_[p] = plans[p].start;
  info_.calibrated = false;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    if (!plans[p].growth.empty()) info_.calibrated = true;
    auto part =
        preemption::calibrate_part(plans[p], preemption::part_target_ms(spec_),
                                   [&](const LoadSize& size) { return measure_part(p, size); });
    if (!part) return part.error();
    sizes_[p] = part->size;
    for (const auto& [size, ms] : part->probes)
      info_.calibration.push_back({.part = p, .size = size, .measured_ms = ms});
    if (!part->reached_target)
      info_.calibration_note += (info_.calibration_note.empty() ? "" : "; ") + part->note;
  }
  info_.load_sizes = sizes_;
  return ok_status();
}

ScenarioTimeline PreemptionLoop::run() {
  ScenarioTimeline timeline;
  info_.process = spec_.process;
  if (Status s = setup(); !s) {
    timeline.failure = s.error();
    return timeline;
  }
  // After setup, which finds the urgent queue.
  info_.priority_granted =
      urgent_queue_ ? d_.granted_priority_[*urgent_queue_] : QueuePriority::normal;
  // Every stamp word of the scenario's workloads, timed from here on.
  std::vector<SequencePoller::Word> words;
  const auto* stamp_words = static_cast<const std::uint32_t*>(d_.stamps_.mapped);
  const std::size_t stride = d_.slot_stride_ / sizeof(std::uint32_t);
  const bool clocks = d_.shader_clock_enabled_;
  for (std::size_t w = 0; w < d_.scenario_.workloads.size(); ++w) {
    const std::uint32_t* slot = stamp_words + w * stride;
    words.push_back({slot, clocks ? slot + kStampStartClockWord : nullptr});
    words.push_back({slot + 1, clocks ? slot + kStampEndClockWord : nullptr});
  }
  const double shortest_ms = std::max(0.05, std::min(spec_.period_ms, spec_.target_ms / 4));
  const std::size_t capacity =
      words.size() * (static_cast<std::size_t>(spec_.duration_ms / shortest_ms) + 4096);
  poller_.start(words, capacity);

  std::int64_t origin_ns = 0;
  auto fail = [&](const Error& e) {
    if (!timeline.failure) timeline.failure = e;
  };
  if (!load_parts_.empty()) {
    if (Status s = calibrate(); !s) {
      fail(s.error().with_context("load calibration: "));
    } else {
      for (std::uint32_t b = 0; b < spec_.baseline_loads && !timeline.failure; ++b) {
        if (d_.settings_.should_stop && d_.settings_.should_stop()) {
          fail(make_error("interrupted while measuring the load alone"));
          break;
        }
        auto index = submit(false, true, true);
        if (!index)
          fail(index.error());
        else if (Status c = collect(true); !c)
          fail(c.error());
      }
      info_.baseline_loads = spec_.baseline_loads;
    }
  }
  if (!timeline.failure) {
    const std::int64_t start_ns = monotonic_raw_ns();
    origin_ns = start_ns;
    const std::int64_t period_ns = static_cast<std::int64_t>(spec_.period_ms * 1e6);
    const std::int64_t duration_ns = static_cast<std::int64_t>(spec_.duration_ms * 1e6);
    const std::int64_t end_ns = start_ns + duration_ns;
    const std::int64_t load_only_deadline_ns = start_ns + duration_ns + kLoadProcessGraceNs;
    std::int64_t next_tick_ns = start_ns;
    std::int64_t next_progress_ns = start_ns;
    bool announced = false;
    for (;;) {
      const std::int64_t now = monotonic_raw_ns();
      if (d_.settings_.should_stop && d_.settings_.should_stop()) {
        fail(make_error(fmt::format("interrupted after {:.0f} of {:.0f} ms", elapsed_ms(start_ns),
                                    spec_.duration_ms)));
        break;
      }
      if (urgent_ && now >= end_ns) break;
      if (!urgent_) {
        if (hooks_.stop_loading && hooks_.stop_loading()) break;
        if (now >= load_only_deadline_ns) {
          fail(make_error("the load process was never told to stop; stopped at its own deadline"));
          break;
        }
      }
      if (Status c = collect(false); !c) {
        fail(c.error());
        break;
      }
      bool submit_failed = false;
      while (!load_parts_.empty() && in_flight(false) < kLoadsInFlight) {
        if (auto index = submit(false, true, false); !index) {
          fail(index.error());
          submit_failed = true;
          break;
        }
      }
      if (submit_failed) break;
      if (!announced && !urgent_) {
        announced = true;
        timeline.time_origin_ns = origin_ns;
        timeline.preemption = info_;
        if (hooks_.on_loading) hooks_.on_loading(timeline);
      }
      if (urgent_ && now >= next_tick_ns) {
        if (in_flight(true) < kUrgentRing) {
          if (auto index = submit(true, true, false); !index) {
            fail(index.error());
            break;
          }
        } else {
          ++skipped_ticks_;
        }
        next_tick_ns += period_ns;
        while (next_tick_ns <= now) {  // fell behind (a stalled CPU): keep the cadence
          next_tick_ns += period_ns;
          ++skipped_ticks_;
        }
      }
      if (progress_ && now >= next_progress_ns) {
        progress_(static_cast<std::uint32_t>(elapsed_ms(start_ns)),
                  static_cast<std::uint32_t>(spec_.duration_ms));
        next_progress_ns = now + 100'000'000;
      }
      // At most 1 ms asleep, so finished loads are replaced promptly.
      const std::int64_t wake_ns = std::min(urgent_ ? next_tick_ns : INT64_MAX, now + 1'000'000);
      if (wake_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(wake_ns - now));
    }
    // Ticks due before the end that the loop woke too late for: skipped, so that submissions
    // plus skipped ticks are always ceil(duration / period) for a run that was not cut short.
    if (urgent_ && !timeline.failure)
      for (; next_tick_ns < end_ns; next_tick_ns += period_ns) ++skipped_ticks_;
  }
  // Drain: everything submitted finishes or meets its deadline.
  while (first_unfinished_ < submissions_.size()) {
    if (Status c = collect(true); !c) {
      fail(c.error());
      break;
    }
  }
  const std::vector<SequenceEvent> events = poller_.stop();
  timeline.time_origin_ns = origin_ns;
  info_.load_sizes = sizes_;
  build_timeline(timeline, events);
  nlohmann::json meta = d_.meta_;
  meta["preemption"] = preemption::to_json(info_);
  meta["preemption"]["spec"] = preemption::to_json(spec_);
  meta["preemption"]["skipped_ticks"] = skipped_ticks_;
  meta["preemption"]["poller_overflowed"] = poller_.overflowed();
  meta["preemption"]["poller_max_check_gap_us"] =
      static_cast<double>(poller_.max_check_gap_ns()) / 1000.0;
  meta["clocks"]["timestamp"]["max_calibration_deviation_ns"] = worst_deviation_ns_;
  if (d_.shader_clock_enabled_)
    meta["clocks"]["shader_clock"]["verification"] = verify_shader_clock_timebase(timeline);
  timeline.meta = meta;
  timeline.preemption = info_;
  return timeline;
}

void PreemptionLoop::build_timeline(ScenarioTimeline& timeline,
                                    const std::vector<SequenceEvent>& events) {
  // (word, number) -> first sighting.
  std::map<std::pair<std::uint32_t, std::uint32_t>, const SequenceEvent*> seen;
  for (const SequenceEvent& e : events) seen.try_emplace({e.word, e.value}, &e);
  const std::int64_t origin = timeline.time_origin_ns;
  std::uint32_t load_index = 0, urgent_index = 0;
  std::size_t missed = 0;
  for (const Submission& s : submissions_) {
    if (!s.measured) continue;
    const std::uint32_t index = s.urgent ? urgent_index++ : load_index++;
    std::vector<std::size_t> parts;
    if (s.urgent)
      parts.push_back(*urgent_);
    else
      parts = load_parts_;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const std::size_t w = parts[p];
      WorkloadFrameRecord r;
      r.frame = index;
      r.workload = w;
      r.frame_t0_us = ns_to_us_since(s.submit_ns, origin);
      r.status = s.status;
      const auto start = seen.find({static_cast<std::uint32_t>(2 * w), s.sequence});
      const auto end = seen.find({static_cast<std::uint32_t>(2 * w + 1), s.sequence});
      if (start != seen.end())
        r.poll_start_us = ns_to_us_since(start->second->seen_ns, s.submit_ns);
      if (end != seen.end()) r.poll_end_us = ns_to_us_since(end->second->seen_ns, s.submit_ns);
      // The first thread counts itself started, then stores its stamp; descheduled in between
      // (a CPU driver's thread can be), its stamp lands after the last thread's end stamp. The
      // work had started by the time any thread finished, so the end bounds the start.
      if (r.poll_start_us && r.poll_end_us && *r.poll_start_us > *r.poll_end_us)
        r.poll_start_us = r.poll_end_us;
      if (r.status == RecordStatus::ok && (!r.poll_start_us || !r.poll_end_us)) ++missed;
      if (s.calibration) {
        r.calibration_deviation_us = static_cast<double>(s.calibration->max_deviation_ns) / 1000.0;
        const std::size_t q = d_.scenario_.workloads[w].queue;
        GpuCalibration c = *s.calibration;
        c.valid_bits = d_.queues_[q].timestamp_valid_bits;
        if (s.ts_ticks[p][0] && s.ts_ticks[p][1]) {
          r.ts_start_us = ns_to_us_since(gpu_ticks_to_cpu_ns(c, *s.ts_ticks[p][0]), s.submit_ns);
          r.ts_end_us = ns_to_us_since(gpu_ticks_to_cpu_ns(c, *s.ts_ticks[p][1]), s.submit_ns);
        }
        if (d_.shader_clock_enabled_ && start != seen.end() && end != seen.end() &&
            start->second->clock_ticks && end->second->clock_ticks) {
          r.clk_start_ticks = start->second->clock_ticks;
          r.clk_end_ticks = end->second->clock_ticks;
          c.valid_bits = 64;  // tentatively as timestamp ticks; the verification decides
          r.clk_start_us = ns_to_us_since(gpu_ticks_to_cpu_ns(c, *r.clk_start_ticks), s.submit_ns);
          r.clk_end_us = ns_to_us_since(gpu_ticks_to_cpu_ns(c, *r.clk_end_ticks), s.submit_ns);
        }
      }
      timeline.records.push_back(r);
    }
    if (s.urgent) {
      FrameRecord f;
      f.frame = index;
      f.cpu_start_us = ns_to_us_since(s.submit_ns, origin);
      f.cpu_submit_us = ns_to_us_since(s.submit_return_ns, s.submit_ns);
      f.cpu_frame_us = f.cpu_submit_us;
      f.submit_to_start_us = timeline.records.back().poll_start_us;
      f.status = s.status;
      timeline.frames.push_back(f);
    }
  }
  d_.meta_["preemption_missed_stamps"] = missed;
}

ScenarioTimeline ScenarioDevice::run_preemption(const ProgressCallback& progress,
                                                const PreemptionHooks& hooks) {
  PreemptionLoop loop(*this, progress, hooks);
  return loop.run();
}

namespace {

// How long the parent waits for the load process to calibrate and start loading: every
// probe has --timeout-ms, so this only catches a child that hangs outside the GPU.
constexpr std::int64_t kLoadProcessReadyNs = 600'000'000'000;

}  // namespace

Result<ScenarioTimeline> VulkanExecutor::run_preemption(const Scenario& scenario,
                                                        const RunSettings& settings,
                                                        const ProgressCallback& progress) {
  const preemption::PreemptionSpec& spec = *scenario.preemption;
  const ValidationMark mark = validation_mark();
  if (spec.process == preemption::ProcessMode::same) {
    auto device = open_device(scenario, settings);
    if (!device) return device.error();
    ScenarioTimeline timeline = (*device)->run_preemption(progress, {});
    abandoned_device_ = abandoned_device_ || (*device)->gpu_may_be_busy();
    describe_run(timeline, mark);
    return timeline;
  }

  // The urgent job here, the load in a child with its own device on the same physical one.
  const Scenario urgent_only =
      preemption::make_scenario(spec, preemption::Role::urgent_only, scenario.name);
  auto opened = open_device(urgent_only, settings);
  if (!opened) return opened.error();
  ScenarioDevice& device = **opened;
  auto executable = preemption::current_executable();
  if (!executable) return executable.error();
  std::vector<std::string> arguments = {"load-process",
                                        "--spec",
                                        preemption::to_json(spec).dump(),
                                        "--device",
                                        std::to_string(device_index_),
                                        "--timeout-ms",
                                        std::to_string(settings.frame_timeout_ms),
                                        "--stamp-memory",
                                        std::string(to_string(settings.stamp_memory))};
  if (!settings.timestamp_queries) arguments.push_back("--no-timestamps");
  if (!settings.shader_clock) arguments.push_back("--no-shader-clock");
  auto child = preemption::LoadProcess::start(*executable, arguments);
  if (!child) return child.error().with_context("starting the load process: ");
  std::fprintf(stderr, "load process: pid %d\n", static_cast<int>((*child)->pid()));
  std::fflush(stderr);
  const std::int64_t settle_ns =
      2 * std::int64_t{settings.frame_timeout_ms} * 1'000'000 + 10'000'000'000;
  auto loading =
      (*child)->wait_for("loading", monotonic_raw_ns() + kLoadProcessReadyNs, settings.should_stop);
  if (!loading) {
    const std::string exit = (*child)->finish(monotonic_raw_ns() + settle_ns);
    return loading.error().with_context("load process (" + exit + "): ");
  }
  std::string sizes;
  for (const auto& size : loading->value("load_sizes", nlohmann::json::array()))
    if (size.is_string()) sizes += (sizes.empty() ? "" : "; ") + size.get<std::string>();
  std::fprintf(stderr, "load process: loading (%s)\n", sizes.c_str());
  std::fflush(stderr);
  ScenarioTimeline timeline = device.run_preemption(progress, {});
  abandoned_device_ = abandoned_device_ || device.gpu_may_be_busy();
  // Urgent records: workload 0 of the urgent-only scenario is the last of the full one.
  for (WorkloadFrameRecord& r : timeline.records) r.workload = scenario.workloads.size() - 1;
  (*child)->request_stop();
  auto result = (*child)->wait_for("result", monotonic_raw_ns() + settle_ns);
  timeline.preemption->load_process_id = (*child)->pid();
  timeline.preemption->load_process_exit = (*child)->finish(monotonic_raw_ns() + settle_ns);
  timeline.preemption->process = preemption::ProcessMode::separate;
  if (!result) {
    if (!timeline.failure)
      timeline.failure = result.error().with_context(
          "load process (" + timeline.preemption->load_process_exit + "): ");
  } else if (Status merged = preemption::merge_load_process(timeline, *result); !merged) {
    if (!timeline.failure) timeline.failure = merged.error();
  }
  // The run's facts now include the load process's; the loop's own keys stay.
  timeline.meta["preemption"].update(preemption::to_json(*timeline.preemption));
  describe_run(timeline, mark);
  return timeline;
}

Result<ScenarioTimeline> VulkanExecutor::run_load_process(const Scenario& load_only,
                                                          const RunSettings& settings,
                                                          preemption::ParentLink& parent) {
  const ValidationMark mark = validation_mark();
  auto opened = open_device(load_only, settings);
  if (!opened) return opened.error();
  ScenarioDevice& device = **opened;
  ScenarioDevice::PreemptionHooks hooks;
  hooks.on_loading = [](const ScenarioTimeline& so_far) {
    nlohmann::json sizes = nlohmann::json::array();
    if (so_far.preemption)
      for (const LoadSize& s : so_far.preemption->load_sizes)
        sizes.push_back(preemption::describe(s));
    preemption::ParentLink::send(
        "loading", {{"pid", static_cast<std::int64_t>(getpid())}, {"load_sizes", sizes}});
  };
  hooks.stop_loading = [&parent] { return parent.stop_requested(); };
  ScenarioTimeline timeline = device.run_preemption({}, hooks);
  abandoned_device_ = abandoned_device_ || device.gpu_may_be_busy();
  describe_run(timeline, mark);
  return timeline;
}

}  // namespace gpuoverlap::vk
