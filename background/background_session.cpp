#include "background/background_session.h"

#include <algorithm>

#include "background/shader_variants.h"
#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/thread_policy.h"

namespace gpuoverlap::background {

namespace {

bool allows_work(ProcessingMode mode) {
  return mode == ProcessingMode::allowed || mode == ProcessingMode::allow_intrusive_measurements;
}

double ms_since(std::int64_t start_ns) {
  return static_cast<double>(monotonic_raw_ns() - start_ns) / 1e6;
}

}  // namespace

// The driver's side of SetBackgroundProcessingMode.
class BackgroundSession::Source final : public TaskSource {
 public:
  explicit Source(BackgroundSession& session) : session_(session) {}
  bool on_mode_change(ProcessingMode mode, MeasurementsAction action) override {
    std::size_t to_queue = 0;
    bool further = false;
    {
      std::lock_guard lock(session_.mutex_);
      session_.mode_ = mode;
      if (action == MeasurementsAction::discard_previous) {
        session_.passes_ = 0;
        ++session_.discards_;
        session_.delivered_.assign(session_.delivered_.size(), std::nullopt);
        session_.committed_.assign(session_.committed_.size(), std::nullopt);
      }
      // A commit acts on what was seen so far: one more pass of variants, until the model's
      // steady state. Work queued here joins the commit even when a disable comes with it.
      if (is_commit(action) && session_.passes_ < session_.spec_.converge_after_passes &&
          session_.compilable_locked()) {
        ++session_.passes_;
        to_queue = session_.spec_.tasks;
      }
      further = session_.passes_ < session_.spec_.converge_after_passes;
    }
    session_.queue_compiles(to_queue);
    return further;
  }

 private:
  BackgroundSession& session_;
};

Result<HostPlacement> place_on_host(const BackgroundSpec& spec) {
  HostPlacement placement;
  if (spec.cpus.kind != CpuPlacementKind::any) {
    const auto mine = this_thread_cpus();
    if (!mine) return make_error("cpus: " + thread_cpus_unavailable_reason());
    auto resolved = resolve_placement(spec.cpus, *mine, smt_groups(*mine));
    if (!resolved) return resolved.error();
    placement.cpus = std::move(*resolved);
  }
  if (spec.cgroup_idle) {
    auto group = IdleCgroup::create();
    if (!group) return group.error().with_context("cgroup_idle: ");
    placement.cgroup = std::move(*group);
  }
  if (spec.allocator == Allocator::keep) {
    auto kept = KeptMemory::hold();
    if (!kept) return kept.error();
    placement.kept_memory = std::move(*kept);
  }
  return placement;
}

Result<std::unique_ptr<BackgroundSession>> BackgroundSession::open(const BackgroundSpec& spec,
                                                                   PipelineBuilder builder) {
  auto placement = place_on_host(spec);
  if (!placement) return placement.error();
  return std::make_unique<BackgroundSession>(spec, std::move(builder), true, std::move(*placement));
}

BackgroundSession::BackgroundSession(const BackgroundSpec& spec, PipelineBuilder builder,
                                     bool apply_policy, HostPlacement placement)
    : spec_(spec),
      builder_(std::move(builder)),
      placement_(std::move(placement)),
      source_(std::make_unique<Source>(*this)) {
  ProcessorSettings settings;
  settings.max_concurrent = spec_.max_concurrent;
  settings.developer_mode = spec_.developer_mode;
  settings.policy = apply_policy ? spec_.policy : ThreadPolicy::normal;
  settings.cpus = placement_.cpus.background_cpus;
  settings.cgroup = placement_.cgroup;
  processor_ = std::make_unique<BackgroundProcessor>(settings, source_.get());
}

BackgroundSession::~BackgroundSession() { stop(); }

std::optional<std::string> BackgroundSession::policy_refused() const {
  return processor_->policy_refused();
}

const ProcessorSettings& BackgroundSession::processor_settings() const {
  return processor_->settings();
}

std::vector<std::pair<std::string, SchedulingSeen::Seen>> BackgroundSession::thread_scheduling()
    const {
  std::vector<std::pair<std::string, SchedulingSeen::Seen>> kinds;
  if (auto s = processor_->idle_thread_scheduling()) kinds.emplace_back("idle", *s);
  if (auto s = processor_->boost_thread_scheduling()) kinds.emplace_back("boost", *s);
  if (auto s = unmanaged_seen_.get()) kinds.emplace_back("unmanaged", *s);
  if (spinners_)
    if (auto s = spinners_->scheduling()) kinds.emplace_back("idle_spinners", *s);
  return kinds;
}

void BackgroundSession::watch(const std::string& name, std::uint32_t iterations,
                              std::shared_ptr<BackPointer<PipelineHandle>> back, bool has_shader) {
  std::lock_guard lock(mutex_);
  watched_.push_back({name, iterations, std::move(back), has_shader});
  delivered_.resize(watched_.size());
  committed_.resize(watched_.size());
}

void BackgroundSession::start() {
  {
    std::lock_guard lock(mutex_);
    if (started_) return;
    started_ = true;
  }
  if (spec_.idle_spinners) {
    // On every CPU the foreground may use: started from the frame loop's thread, whose
    // affinity is the foreground's.
    spinners_ = std::make_unique<IdleSpinners>(this_thread_cpus().value_or(std::vector<int>{}));
    return;
  }
  if (spec_.outside_processor()) {
    for (std::uint32_t i = 0; i < spec_.unmanaged_threads; ++i)
      unmanaged_threads_.emplace_back([this, i] {
        name_this_thread(("control " + std::to_string(i)).c_str());
        unmanaged_loop(static_cast<int>(i));
      });
    return;
  }
  bool allowed = false;
  {
    std::lock_guard lock(mutex_);
    allowed = allows_work(mode_);
  }
  if (allowed) queue_compiles(spec_.tasks);  // first sight of the foreground's pipelines
}

bool BackgroundSession::compilable_locked() const {
  return std::any_of(watched_.begin(), watched_.end(),
                     [](const Watched& w) { return w.has_shader; });
}

// Round-robin over the watched pipelines, skipping workloads without a shader.
// Contract: compilable_locked().
BackgroundSession::Compile BackgroundSession::next_compile_locked() {
  const std::uint64_t number = next_compile_++;
  std::size_t index = next_target_ % watched_.size();
  while (!watched_[index].has_shader) index = (index + 1) % watched_.size();
  next_target_ = index + 1;
  return {number, watched_[index], index, discards_};
}

std::string BackgroundSession::label_of(const Compile& compile) const {
  return "compile #" + std::to_string(compile.number) + " " + compile.target.name +
         (spec_.fold_iterations ? " (iterations " + std::to_string(compile.target.iterations) + ")"
                                : " (iterations not folded)");
}

void BackgroundSession::queue_compiles(std::size_t count) {
  for (std::size_t i = 0; i < count && !stopping_.load(); ++i) {
    Compile compile;
    {
      std::lock_guard lock(mutex_);
      if (!compilable_locked()) return;
      compile = next_compile_locked();
    }
    const std::string label = label_of(compile);
    WorkItem item;
    item.label = label;
    item.callback = [this, compile, label] {
      CompileResult result = run_compile(compile);
      bool refill = false;
      {
        std::lock_guard lock(mutex_);
        managed_results_[label] = std::move(result);
        refill = spec_.continuous && allows_work(mode_);
      }
      if (refill && !stopping_.load()) queue_compiles(1);
    };
    item.cancel = [this, label] {
      std::lock_guard lock(mutex_);
      managed_results_[label] = {"cancelled"};
    };
    processor_->queue(std::move(item));
  }
}

BackgroundSession::CompileResult BackgroundSession::run_compile(const Compile& compile) {
  CompileResult result;
  if (stopping_.load()) return {"skipped (stopping)"};
  const std::int64_t compile_start_ns = monotonic_raw_ns();
  // The salt keeps every compile's SPIR-V distinct: the same module twice could come from a
  // shader cache.
  auto spirv = compile_variant({.iterations = spec_.fold_iterations ? compile.target.iterations : 0,
                                .optimize = true,
                                .salt = static_cast<std::uint32_t>(compile.number)});
  result.compile_ms = ms_since(compile_start_ns);
  if (!spirv) {
    result.outcome = "failed: " + spirv.error().message;
    return result;
  }
  if (!spec_.create_pipelines) {
    result.outcome = "compiled (no pipeline)";
    return result;
  }
  if (stopping_.load()) {  // the run is ending: the pipeline would only delay it
    result.outcome = "compiled; pipeline skipped (stopping)";
    return result;
  }
  // The task system's gap: the second stage starts outside the frame's CPU phase too.
  if (spec_.dispatch == Dispatch::gaps) {
    processor_->wait_out_cpu_phase_ms(1000);
    if (stopping_.load()) {
      result.outcome = "compiled; pipeline skipped (stopping)";
      return result;
    }
  }
  const std::int64_t build_start_ns = monotonic_raw_ns();
  auto pipeline = builder_.build(*spirv);
  result.build_ms = ms_since(build_start_ns);
  if (!pipeline) {
    result.outcome = "failed: " + pipeline.error().message;
    return result;
  }
  // The spec's lifetime pattern: the result goes to the pipeline if it still exists.
  if (auto orphan = compile.target.back->deliver(*pipeline)) {
    builder_.dispose(*orphan);
    result.outcome = "dropped (pipeline destroyed)";
  } else {
    result.outcome = "delivered";
    std::lock_guard lock(mutex_);
    std::optional<CommittedVariant>& newest = delivered_[compile.target_index];
    if (compile.epoch == discards_ && (!newest || newest->compile < compile.number))
      newest = CommittedVariant{*pipeline, compile.number};
  }
  return result;
}

void BackgroundSession::request_stop() {
  {
    std::lock_guard lock(hold_mutex_);
    stopping_.store(true);
  }
  hold_cv_.notify_all();
}

void BackgroundSession::hold(bool held) {
  processor_->hold(held);
  {
    std::lock_guard lock(hold_mutex_);
    held_ = held;
  }
  hold_cv_.notify_all();
}

Status BackgroundSession::request_commit(std::optional<std::uint32_t> before_measured_frame) {
  if (!spec_.commit_at_frame || commit_wait_ || spec_.outside_processor()) return ok_status();
  CommitWait wait;
  wait.requested_before_frame = before_measured_frame;
  wait.pending_at_request = processor_->pending();
  auto event = std::make_shared<CompletionEvent>();
  wait.requested_ns = monotonic_raw_ns();
  auto further = set_mode(processor_->mode(), MeasurementsAction::commit_results, event);
  if (!further) return further.error().with_context("commit_at_frame: ");
  commit_wait_ = wait;
  commit_wait_event_ = std::move(event);
  return ok_status();
}

Result<std::optional<CommitWait>> BackgroundSession::finish_commit_wait() {
  if (!spec_.commit_at_frame || spec_.outside_processor()) return std::optional<CommitWait>{};
  if (!commit_wait_)
    if (Status asked = request_commit(std::nullopt); !asked) return asked.error();
  bool in_time = true;
  if (!commit_wait_event_->is_signalled()) {
    const std::int64_t blocked_from_ns = monotonic_raw_ns();
    in_time = commit_wait_event_->wait_for_ms(spec_.commit_timeout_ms);
    // Until the frame loop's thread ran again: the wake-up after the signal counts too.
    commit_wait_->blocked_ms = ms_since(blocked_from_ns);
  }
  // An event signalled after the deadline, before this read, came too late all the same.
  if (in_time) commit_wait_->signalled_ns = commit_wait_event_->signalled_ns();
  return std::optional<CommitWait>(commit_wait_);
}

void BackgroundSession::cpu_phase(bool running) {
  if (spec_.dispatch == Dispatch::gaps) processor_->hold_for_cpu_phase(running);
}

void BackgroundSession::unmanaged_loop(int worker) {
  unmanaged_seen_.report(this_thread_scheduling());
  std::uint64_t local = 0;
  while (!stopping_.load()) {
    std::int64_t start_ns = 0;
    {
      std::unique_lock lock(hold_mutex_);
      hold_cv_.wait(lock, [this] { return !held_ || stopping_.load(); });
      // Read under the hold's lock: a compile that starts is recorded as starting before any
      // hold() that follows, so no start falls inside a held block.
      start_ns = monotonic_raw_ns();
    }
    if (stopping_.load()) return;
    Compile compile;
    {
      std::lock_guard lock(mutex_);
      if (!compilable_locked()) return;
      compile = next_compile_locked();
    }
    BackgroundTaskRecord record;
    record.managed = false;
    record.id = ++local;
    record.worker = worker;
    record.label = "unmanaged " + label_of(compile);
    record.queued_ns = record.start_ns = start_ns;
    unmanaged_running_.fetch_add(1);
    const ThreadAccounting before = read_thread_accounting();
    CompileResult result = run_compile(compile);
    record.thread = thread_span_since(before);
    unmanaged_running_.fetch_sub(1);
    record.finish_ns = monotonic_raw_ns();
    record.outcome = std::move(result.outcome);
    record.compile_ms = result.compile_ms;
    record.build_ms = result.build_ms;
    std::lock_guard lock(mutex_);
    unmanaged_records_.push_back(std::move(record));
  }
}

void BackgroundSession::mark_committed() {
  std::lock_guard lock(mutex_);
  committed_ = delivered_;
  fresh_commit_.store(true, std::memory_order_release);
}

std::optional<std::vector<std::optional<CommittedVariant>>> BackgroundSession::take_committed() {
  if (!spec_.bind_committed || !fresh_commit_.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard lock(mutex_);
  if (!fresh_commit_.load(std::memory_order_relaxed)) return std::nullopt;
  fresh_commit_.store(false, std::memory_order_relaxed);
  return committed_;
}

Result<bool> BackgroundSession::apply_measurement_mode() {
  if (spec_.outside_processor()) return false;
  ProcessingMode mode = spec_.mode;
  MeasurementsAction action = spec_.action;
  switch (spec_.workflow) {
    case Workflow::none:
      break;
    case Workflow::benchmark_priming:  // leave further dynamic optimisation enabled
      mode = ProcessingMode::allowed, action = MeasurementsAction::keep_all;
      break;
    case Workflow::single_frame_analysis:  // lock everything down for the A/B measurement
      mode = ProcessingMode::disable_profiling_by_system, action = MeasurementsAction::keep_all;
      break;
  }
  if (!spec_.bind_committed || !is_commit(action)) return set_mode(mode, action);
  // Binding what it commits, the application waits for the commit as a benchmark does before
  // it measures: the frames after it all run the committed variants.
  auto event = std::make_shared<CompletionEvent>();
  auto further = set_mode(mode, action, event);
  if (!further) return further;
  if (!event->wait_for_ms(spec_.commit_timeout_ms))
    return make_error("the commit for bind_committed was not done within " +
                      std::to_string(spec_.commit_timeout_ms) + " ms (commit_timeout_ms)");
  mark_committed();
  return further;
}

Result<bool> BackgroundSession::set_mode(ProcessingMode mode, MeasurementsAction action,
                                         std::shared_ptr<CompletionEvent> event) {
  auto further = processor_->set_mode(mode, action, std::move(event));
  if (builder_.driver_mode) {
    const DriverModeResult driver = builder_.driver_mode(mode, action);
    driver_calls_.api = builder_.driver_mode_api;
    ++driver_calls_.calls;
    ++driver_calls_.results[driver.result];
    if (driver.further_measurements_desired)
      driver_calls_.last_further_measurements_desired = driver.further_measurements_desired;
  }
  return further;
}

Status BackgroundSession::begin_workflow() {
  if (spec_.workflow == Workflow::none || spec_.outside_processor()) return ok_status();
  workflow_ = WorkflowOutcome{};
  frames_in_pass_ = 0;
  workflow_active_ = true;
  auto further =
      set_mode(ProcessingMode::allow_intrusive_measurements, MeasurementsAction::discard_previous);
  if (!further) return further.error();
  return ok_status();
}

Result<bool> BackgroundSession::workflow_frame_rendered() {
  if (!workflow_active_) return false;
  ++workflow_.frames_rendered;
  if (++frames_in_pass_ < spec_.training_frames) return true;
  frames_in_pass_ = 0;
  const bool pix = spec_.workflow == Workflow::single_frame_analysis;
  auto event = std::make_shared<CompletionEvent>();
  const std::int64_t commit_ns = monotonic_raw_ns();
  auto further = set_mode(
      pix ? ProcessingMode::allow_intrusive_measurements : ProcessingMode::allowed,
      pix ? MeasurementsAction::commit_results_high_priority : MeasurementsAction::commit_results,
      event);
  if (!further) return further.error();
  ++workflow_.passes;
  if (!event->wait_for_ms(spec_.commit_timeout_ms))
    return make_error("background workflow " + std::string(to_string(spec_.workflow)) +
                      ": commit pass " + std::to_string(workflow_.passes) + " not done within " +
                      std::to_string(spec_.commit_timeout_ms) + " ms (commit_timeout_ms)");
  workflow_.commit_wait_ms.push_back(ms_since(commit_ns));
  if (spec_.bind_committed) mark_committed();
  workflow_.converged = !*further;
  workflow_active_ = *further && workflow_.passes < spec_.max_passes;
  return workflow_active_;
}

BackgroundActivity BackgroundSession::activity() const {
  const BackgroundProcessor::Activity a = processor_->activity();
  return {static_cast<std::uint32_t>(a.running_idle + a.running_boost),
          static_cast<std::uint32_t>(a.running_boost), static_cast<std::uint32_t>(a.queued),
          unmanaged_running_.load()};
}

void BackgroundSession::stop() {
  request_stop();
  if (stopped_) return;
  stopped_ = true;
  for (std::thread& t : unmanaged_threads_) t.join();
  unmanaged_threads_.clear();
  if (spinners_) spinners_->stop();
  processor_->shut_down();  // in-flight compiles finish, queued ones are cancelled
}

std::vector<BackgroundTaskRecord> BackgroundSession::records() const {
  std::vector<BackgroundTaskRecord> out;
  const std::vector<TaskRecord> managed = processor_->records();
  std::lock_guard lock(mutex_);
  for (const TaskRecord& t : managed) {
    BackgroundTaskRecord r;
    r.id = t.id;
    r.label = t.label;
    r.queued_ns = t.queued_ns;
    r.start_ns = t.start_ns;
    r.finish_ns = t.finish_ns;
    r.worker = t.worker;
    r.boosted = t.boosted;
    r.idle_priority = t.idle_priority;
    r.thread = t.thread;
    if (auto it = managed_results_.find(t.label); it != managed_results_.end()) {
      r.outcome = it->second.outcome;
      r.compile_ms = it->second.compile_ms;
      r.build_ms = it->second.build_ms;
    } else {
      r.outcome = t.finish_ns ? "cancelled" : "pending";
    }
    out.push_back(std::move(r));
  }
  out.insert(out.end(), unmanaged_records_.begin(), unmanaged_records_.end());
  return out;
}

}  // namespace gpuoverlap::background
