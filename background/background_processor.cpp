#include "background/background_processor.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#include <sched.h>
#endif

#include <algorithm>
#include <chrono>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/thread_policy.h"
#include "core/wake_signal.h"

namespace gpuoverlap::background {

std::string_view to_string(ProcessingMode mode) { return name_of(kProcessingModeNames, mode); }

std::string_view to_string(MeasurementsAction action) {
  return name_of(kMeasurementsActionNames, action);
}

std::optional<ProcessingMode> parse_processing_mode(std::string_view text) {
  return value_of(kProcessingModeNames, text);
}

std::optional<MeasurementsAction> parse_measurements_action(std::string_view text) {
  return value_of(kMeasurementsActionNames, text);
}

void CompletionEvent::signal() {
  const std::int64_t now_ns = monotonic_raw_ns();
  {
    std::lock_guard lock(mutex_);
    if (!signalled_) signalled_ns_ = now_ns;
    signalled_ = true;
  }
  signalled_cv_.notify_all();
}

std::optional<std::int64_t> CompletionEvent::signalled_ns() const {
  std::lock_guard lock(mutex_);
  if (!signalled_) return std::nullopt;
  return signalled_ns_;
}

bool CompletionEvent::is_signalled() const {
  std::lock_guard lock(mutex_);
  return signalled_;
}

bool CompletionEvent::wait_for_ms(std::uint32_t timeout_ms) const {
  std::unique_lock lock(mutex_);
  return signalled_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                [this] { return signalled_; });
}

namespace {

bool disabled(ProcessingMode mode) {
  return mode == ProcessingMode::disable_background_work ||
         mode == ProcessingMode::disable_profiling_by_system;
}

#if defined(_WIN32)
// THREAD_PRIORITY_IDLE: Windows' lowest, the nearest to SCHED_IDLE.
bool this_thread_is_idle() { return GetThreadPriority(GetCurrentThread()) == THREAD_PRIORITY_IDLE; }
#else
bool this_thread_is_idle() {
  int policy = 0;
  sched_param param{};
  return pthread_getschedparam(pthread_self(), &policy, &param) == 0 && policy == SCHED_IDLE;
}
#endif

}  // namespace

BackgroundProcessor::BackgroundProcessor(ProcessorSettings settings, TaskSource* source)
    : settings_([&] {
        settings.max_concurrent = std::max<std::size_t>(1, settings.max_concurrent);
        if (settings.high_priority_threads == 0)
          settings.high_priority_threads =
              std::max<std::size_t>(2, std::thread::hardware_concurrency());
        return settings;
      }()),
      source_(source) {
  // Threads are created by this (normal-priority) thread: the boost threads keep its priority,
  // the idle ones lower themselves before taking work.
  for (std::size_t i = 0; i < settings_.max_concurrent; ++i)
    threads_.emplace_back([this, i] { worker(i, false); });
  for (std::size_t i = 0; i < settings_.high_priority_threads; ++i)
    threads_.emplace_back([this, i] { worker(settings_.max_concurrent + i, true); });
}

BackgroundProcessor::~BackgroundProcessor() { shut_down(); }

std::optional<std::string> BackgroundProcessor::policy_refused() const {
  std::lock_guard lock(mutex_);
  return policy_refused_;
}

void BackgroundProcessor::shut_down() {
  std::deque<Queued> cancelled;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    cancelled.swap(queue_);
  }
  work_cv_.notify_all();
  boost_cv_.notify_all();
  hold_bits_.fetch_or(kStopping, std::memory_order_seq_cst);
  wake_all(hold_bits_);
  for (Queued& q : cancelled) {
    if (q.item.cancel) q.item.cancel();
    std::lock_guard lock(mutex_);
    records_[q.id - 1].finish_ns = monotonic_raw_ns();
    finished_locked(q.id);
  }
  for (std::thread& t : threads_) t.join();  // in-flight items finish first
  threads_.clear();
  // Every commit set is now empty, so every event has been signalled by finished_locked.
}

std::uint64_t BackgroundProcessor::queue(WorkItem item) {
  std::unique_lock lock(mutex_);
  const std::uint64_t id = next_id_++;
  TaskRecord record;
  record.id = id;
  record.label = item.label;
  record.queued_ns = monotonic_raw_ns();
  records_.push_back(record);
  if (stopping_ || (disabled(mode_) && !accepting_commit_work_)) {
    // Cancelled on the caller's thread before returning, outside the lock: the cancel may
    // call back into the processor (queue more, read records).
    unfinished_.insert(id);
    lock.unlock();
    if (item.cancel) item.cancel();
    lock.lock();
    records_[id - 1].finish_ns = monotonic_raw_ns();
    finished_locked(id);
    return id;
  }
  unfinished_.insert(id);
  queue_.push_back({id, std::move(item)});
  lock.unlock();
  wake_workers();
  return id;
}

Result<bool> BackgroundProcessor::set_mode(ProcessingMode mode, MeasurementsAction action,
                                           std::shared_ptr<CompletionEvent> completion) {
  const bool restricted =
      disabled(mode) || action == MeasurementsAction::commit_results_high_priority;
  if (restricted && !settings_.developer_mode)
    return make_error(std::string("background mode ") + std::string(to_string(mode)) + " with " +
                      std::string(to_string(action)) +
                      " needs developer mode (DISABLE_BACKGROUND_WORK, "
                      "DISABLE_PROFILING_BY_SYSTEM and COMMIT_RESULTS_HIGH_PRIORITY are "
                      "restricted to developer mode)");
  if (completion && !is_commit(action))
    return make_error("a completion event was given with " + std::string(to_string(action)) +
                      "; it must be null unless COMMIT_RESULTS or COMMIT_RESULTS_HIGH_PRIORITY "
                      "is requested");

  std::lock_guard serial(set_mode_mutex_);
  {
    std::lock_guard lock(mutex_);
    accepting_commit_work_ = is_commit(action);
    // Work the source generates for a high-priority commit is boosted from the moment it is
    // queued: idle threads must not take it before the commit is registered below.
    boost_pending_ = action == MeasurementsAction::commit_results_high_priority;
    boost_wanted_.store(boost_active_locked(), std::memory_order_release);
  }
  // The driver hears of the change first; work it queues now belongs to the commit.
  const bool further = source_ ? source_->on_mode_change(mode, action) : false;
  {
    std::lock_guard lock(mutex_);
    accepting_commit_work_ = false;
    boost_pending_ = false;
    if (is_commit(action)) {
      Commit commit;
      commit.unfinished = unfinished_;
      commit.event = completion;
      commit.high_priority = action == MeasurementsAction::commit_results_high_priority;
      if (commit.unfinished.empty()) {
        if (commit.event) commit.event->signal();
      } else {
        commits_.push_back(std::move(commit));
      }
    }
    mode_ = mode;
    boost_wanted_.store(boost_active_locked(), std::memory_order_release);
  }
  wake_workers();
  return further;
}

ProcessingMode BackgroundProcessor::mode() const {
  std::lock_guard lock(mutex_);
  return mode_;
}

void BackgroundProcessor::hold(bool held) { set_hold_bit(kHeld, held); }

void BackgroundProcessor::hold_for_cpu_phase(bool held) { set_hold_bit(kHeldForCpuPhase, held); }

// seq_cst on both sides (a Dekker pair): a thread counts itself a sleeper, then reads the word;
// the frame loop clears its bit, then reads the sleepers. Either the thread sees the release or
// the frame loop sees the sleeper and wakes it; the futex sleeps only while the word is unchanged.
void BackgroundProcessor::set_hold_bit(std::uint32_t bit, bool on) {
  if (on) {
    hold_bits_.fetch_or(bit, std::memory_order_seq_cst);
    return;
  }
  const std::uint32_t before = hold_bits_.fetch_and(~bit, std::memory_order_seq_cst);
  if ((before & bit) && hold_sleepers_.load(std::memory_order_seq_cst) > 0) wake_all(hold_bits_);
}

void BackgroundProcessor::sleep_on_hold(std::uint32_t seen, std::int64_t timeout_ns) const {
  hold_sleepers_.fetch_add(1, std::memory_order_seq_cst);
  sleep_while_for(hold_bits_, seen, timeout_ns);
  hold_sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

bool BackgroundProcessor::wait_out_cpu_phase_ms(std::uint32_t timeout_ms) const {
  const std::int64_t deadline_ns = monotonic_raw_ns() + std::int64_t{timeout_ms} * 1'000'000;
  for (;;) {
    const std::uint32_t bits = hold_bits_.load(std::memory_order_seq_cst);
    if (!(bits & kHeldForCpuPhase) || (bits & kStopping)) return true;
    const std::int64_t left_ns = deadline_ns - monotonic_raw_ns();
    if (left_ns <= 0) return false;
    sleep_on_hold(bits, left_ns);
  }
}

std::size_t BackgroundProcessor::pending() const {
  std::lock_guard lock(mutex_);
  return unfinished_.size();
}

BackgroundProcessor::Activity BackgroundProcessor::activity() const {
  std::lock_guard lock(mutex_);
  return {running_idle_, running_boost_, queue_.size()};
}

bool BackgroundProcessor::wait_idle_ms(std::uint32_t timeout_ms) const {
  std::unique_lock lock(mutex_);
  return idle_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [this] { return unfinished_.empty(); });
}

std::vector<TaskRecord> BackgroundProcessor::records() const {
  std::lock_guard lock(mutex_);
  return {records_.begin(), records_.end()};
}

// The idle threads always; the boost threads only while a high-priority commit runs, so that
// outside one they sleep untouched (hardware_concurrency() normal-priority threads woken at
// every compile's end would each preempt a foreground thread for a moment). boost_wanted_ is
// updated under the mutex before each wake-up that follows a change, so none is lost.
void BackgroundProcessor::wake_workers() {
  work_cv_.notify_all();
  if (boost_wanted_.load(std::memory_order_acquire)) boost_cv_.notify_all();
}

bool BackgroundProcessor::boost_active_locked() const {
  if (boost_pending_) return true;
  for (const Commit& c : commits_)
    if (c.high_priority) return true;
  return false;
}

void BackgroundProcessor::finished_locked(std::uint64_t id) {
  unfinished_.erase(id);
  for (auto it = commits_.begin(); it != commits_.end();) {
    it->unfinished.erase(id);
    if (it->unfinished.empty()) {
      if (it->event) it->event->signal();
      it = commits_.erase(it);
    } else {
      ++it;
    }
  }
  boost_wanted_.store(boost_active_locked(), std::memory_order_release);
  idle_cv_.notify_all();
  wake_workers();  // a boost may have ended, a slot has freed
}

void BackgroundProcessor::worker(std::size_t index, bool boost) {
  name_this_thread(((boost ? "boost " : "compile ") +
                    std::to_string(boost ? index - settings_.max_concurrent : index))
                       .c_str());
  // Each setting on its own: a refused policy still leaves the thread on its CPUs and in its
  // cgroup, and every refusal is kept.
  std::vector<std::string> refused;
  if (!boost) {
    if (Status applied = apply_to_this_thread(settings_.policy); !applied)
      refused.push_back(applied.error().message);
    if (!settings_.cpus.empty() && !restrict_this_thread_to(settings_.cpus))
      refused.push_back("restricting the thread to CPUs " + describe_cpus(settings_.cpus) +
                        " failed");
    if (settings_.cgroup)
      if (Status joined = settings_.cgroup->join_this_thread(); !joined)
        refused.push_back("joining the idle cgroup: " + joined.error().message);
  }
  (boost ? boost_seen_ : idle_seen_).report(this_thread_scheduling());
  std::unique_lock lock(mutex_);
  for (const std::string& why : refused)
    if (!policy_refused_)
      policy_refused_ = why;
    else if (policy_refused_->find(why) == std::string::npos)
      *policy_refused_ += "; " + why;
  for (;;) {
    // Idle threads take work while no high-priority commit runs, boost threads only while one
    // does; either way the queue's front, so work starts in submission order.
    (boost ? boost_cv_ : work_cv_).wait(lock, [&] {
      if (stopping_ && queue_.empty()) return true;
      if (queue_.empty()) return false;
      return boost ? boost_active_locked()
                   : !boost_active_locked() && running_idle_ < settings_.max_concurrent;
    });
    if (queue_.empty()) return;  // stopping
    // The holds (set_hold_bit): the start is read before the hold, so an item that starts
    // began before any hold that follows; while one lasts, sleep on it (woken at its release,
    // at most 100 ms, then look again) and start over.
    const std::int64_t start_ns = monotonic_raw_ns();
    if (const std::uint32_t bits = hold_bits_.load(std::memory_order_seq_cst);
        bits & (kHeld | kHeldForCpuPhase)) {
      lock.unlock();
      sleep_on_hold(bits, 100'000'000);
      lock.lock();
      continue;
    }
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    (boost ? running_boost_ : running_idle_)++;
    TaskRecord& r = records_[q.id - 1];
    r.start_ns = start_ns;
    r.worker = static_cast<int>(index);
    r.boosted = boost;
    r.idle_priority = !boost && this_thread_is_idle();
    lock.unlock();
    const ThreadAccounting before = read_thread_accounting();
    q.item.callback();
    const ThreadSpan span = thread_span_since(before);
    lock.lock();
    (boost ? running_boost_ : running_idle_)--;
    records_[q.id - 1].finish_ns = monotonic_raw_ns();
    records_[q.id - 1].ran = true;
    records_[q.id - 1].thread = span;
    finished_locked(q.id);
  }
}

}  // namespace gpuoverlap::background
