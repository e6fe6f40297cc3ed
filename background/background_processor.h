// The background-processing runtime of the D3D12 Background Processing specification: the
// runtime owns the threads; a task source (the "driver", UMD) queues work items, each with a
// callback and a cancel; the application sets a processing mode and a measurements action.
//
// Contracts (each has a unit test in tests/unit/background_processor_test.cpp):
// - Exactly one of callback or cancel runs for every queued item, and each runs once.
// - Work starts in submission order. At most `max_concurrent` items (default 2) run at once,
//   on threads at idle priority (SCHED_IDLE on Linux).
// - DISABLE_BACKGROUND_WORK / DISABLE_PROFILING_BY_SYSTEM: items queued before the change still
//   run; an item queued while disabled is cancelled on the caller's thread before queue()
//   returns.
// - COMMIT_RESULTS: the task source is told first and may queue more work; when set_mode()
//   returns, every item not yet finished belongs to the commit, and the completion event is
//   signalled once all of them have run (or been cancelled). A disable requested together
//   with a commit takes effect after the source's new items are queued, so they still run.
// - COMMIT_RESULTS_HIGH_PRIORITY: as COMMIT_RESULTS, and until the commit set is done, items
//   run on `high_priority_threads` threads above idle priority instead of the idle ones
//   (including the items the source queues during the call: they never start idle).
// - The completion event must be null unless a commit is requested; DISABLE_* and
//   COMMIT_RESULTS_HIGH_PRIORITY need developer mode. Breaking either is an error and changes
//   nothing.
// - FurtherMeasurementsDesired is the task source's answer.
// - Destruction (or shut_down): items in flight finish, queued ones are cancelled (on the
// destroying thread),
//   then the threads are joined. Outstanding commit events are signalled (their sets are done).
// - Every item's queueing, start and finish (thread, priority) is recorded.
// Thread safety: every public member may be called from any thread, concurrently, except that
// callbacks must not destroy the processor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/cgroup_idle.h"
#include "core/enum_names.h"
#include "core/host_info.h"
#include "core/result.h"
#include "core/thread_accounting.h"
#include "core/thread_policy.h"

namespace gpuoverlap::background {

enum class ProcessingMode {
  allowed,
  allow_intrusive_measurements,
  disable_background_work,
  disable_profiling_by_system
};
enum class MeasurementsAction {
  keep_all,
  commit_results,
  commit_results_high_priority,
  discard_previous
};

// The spec's D3D12_BACKGROUND_PROCESSING_MODE and D3D12_MEASUREMENTS_ACTION, by the names of
// scenario files.
inline constexpr EnumNames<ProcessingMode, 4> kProcessingModeNames{
    {{ProcessingMode::allowed, "allowed"},
     {ProcessingMode::allow_intrusive_measurements, "allow_intrusive_measurements"},
     {ProcessingMode::disable_background_work, "disable_background_work"},
     {ProcessingMode::disable_profiling_by_system, "disable_profiling_by_system"}}};
inline constexpr EnumNames<MeasurementsAction, 4> kMeasurementsActionNames{
    {{MeasurementsAction::keep_all, "keep_all"},
     {MeasurementsAction::commit_results, "commit_results"},
     {MeasurementsAction::commit_results_high_priority, "commit_results_high_priority"},
     {MeasurementsAction::discard_previous, "discard_previous"}}};

// The actions that commit what the work measured (with or without a priority boost).
constexpr bool is_commit(MeasurementsAction action) {
  return action == MeasurementsAction::commit_results ||
         action == MeasurementsAction::commit_results_high_priority;
}

std::string_view to_string(ProcessingMode mode);
std::string_view to_string(MeasurementsAction action);
std::optional<ProcessingMode> parse_processing_mode(std::string_view text);
std::optional<MeasurementsAction> parse_measurements_action(std::string_view text);

// A manual-reset waitable event (the spec's hEventToSignalUponCompletion).
class CompletionEvent {
 public:
  void signal();
  bool is_signalled() const;
  // When it was first signalled (CLOCK_MONOTONIC_RAW); none while it is not.
  std::optional<std::int64_t> signalled_ns() const;
  // True when signalled before the deadline. Every wait has a deadline.
  bool wait_for_ms(std::uint32_t timeout_ms) const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable signalled_cv_;
  bool signalled_ = false;
  std::int64_t signalled_ns_ = 0;
};

// The driver side: told of every mode change before it takes effect, may queue work from
// inside the call (that work joins a commit), answers FurtherMeasurementsDesired.
class TaskSource {
 public:
  virtual ~TaskSource() = default;
  virtual bool on_mode_change(ProcessingMode mode, MeasurementsAction action) = 0;
};

struct WorkItem {
  std::string label;               // shown on the timeline
  std::function<void()> callback;  // runs on a processor thread
  std::function<void()> cancel;    // runs instead, on whichever thread cancels; may be empty
};

struct TaskRecord {
  std::uint64_t id = 0;  // queue order, from 1
  std::string label;
  std::int64_t queued_ns = 0;  // CLOCK_MONOTONIC_RAW
  std::int64_t start_ns = 0;   // callback start (0 when cancelled)
  std::int64_t finish_ns = 0;  // callback or cancel end
  bool ran = false;            // callback ran (else cancel)
  bool boosted = false;        // ran on a high-priority commit thread
  bool idle_priority = false;  // its thread was SCHED_IDLE while it ran
  int worker = -1;    // thread index (idle threads first, then boost threads); -1 cancelled
  ThreadSpan thread;  // the thread that ran the callback and what it cost it (when it ran)
};

struct ProcessorSettings {
  std::size_t max_concurrent = 2;         // the spec's "at most two" (the DDI page says one)
  std::size_t high_priority_threads = 0;  // 0: one per hardware thread
  bool developer_mode = false;            // gates the restricted modes
  // What the normal (not boost) threads ask of the OS before taking work: the spec's idle
  // priority by default (core/thread_policy.h).
  ThreadPolicy policy = ThreadPolicy::idle;
  // ... then restrict themselves to these CPUs (empty: anywhere) and join this cgroup (none:
  // stay in the process's). A refusal is kept like the policy's (policy_refused).
  std::vector<int> cpus;
  std::shared_ptr<IdleCgroup> cgroup;
};

class BackgroundProcessor {
 public:
  explicit BackgroundProcessor(ProcessorSettings settings, TaskSource* source = nullptr);
  ~BackgroundProcessor();
  // What the destructor does, earlier: stop taking work, cancel what waits, let running items
  // finish, join the threads. Afterwards every queue() is cancelled at once, and records()
  // still answers. Idempotent.
  void shut_down();
  BackgroundProcessor(const BackgroundProcessor&) = delete;
  BackgroundProcessor& operator=(const BackgroundProcessor&) = delete;

  // QueueProcessingWorkCb. Returns the item's id; when background work is disabled the cancel
  // has already run when this returns.
  std::uint64_t queue(WorkItem item);

  // SetBackgroundProcessingMode: FurtherMeasurementsDesired, or an error naming the broken rule.
  Result<bool> set_mode(ProcessingMode mode, MeasurementsAction action,
                        std::shared_ptr<CompletionEvent> completion = nullptr);

  ProcessingMode mode() const;
  // Not the spec's: the measurement's own switch (BackgroundSpec::alternate_frames). While held,
  // no thread starts an item (idle or boost); items already running finish, queued ones wait,
  // and queue() still accepts work as the mode says. Releasing starts them again in order. A
  // held processor still shuts down: queued items are then cancelled.
  // Both holds are called by the frame loop between frames, so they take no lock the compile
  // threads hold (an idle thread holding one while the game's workers keep every CPU would
  // keep the frame loop waiting: a priority inversion). They set a word the threads read
  // before each item, and wake its sleepers (a futex wake) only at a release that has any. An
  // item seen to start began before the hold that follows (its start is read before the hold).
  void hold(bool held);
  // The same for the frame's CPU phase (BackgroundSpec::dispatch = gaps), a hold of its own so
  // that it and the alternation's never release each other: no item starts while either holds.
  void hold_for_cpu_phase(bool held);
  // Blocks a running item between its stages while the CPU phase's hold lasts, or until the
  // deadline; true when not held (or no longer).
  bool wait_out_cpu_phase_ms(std::uint32_t timeout_ms) const;
  // Items queued and not yet finished (running or waiting).
  std::size_t pending() const;
  struct Activity {
    std::size_t running_idle = 0;   // callbacks running on the idle-priority threads
    std::size_t running_boost = 0;  // callbacks running on high-priority commit threads
    std::size_t queued = 0;         // waiting to start
  };
  Activity activity() const;
  // Blocks until nothing is pending or the deadline passes; true when idle.
  bool wait_idle_ms(std::uint32_t timeout_ms) const;
  std::vector<TaskRecord> records() const;
  const ProcessorSettings& settings() const { return settings_; }
  // The scheduling the processor's threads ran under, as each reported it on starting (after
  // an idle thread lowered itself): the idle-priority threads and the boost threads.
  std::optional<SchedulingSeen::Seen> idle_thread_scheduling() const { return idle_seen_.get(); }
  // Why the OS refused a normal thread its policy, CPUs or cgroup (the first refusal); none when
  // every thread got all of them. A refused thread runs on at what it had, and the run says so.
  std::optional<std::string> policy_refused() const;
  std::optional<SchedulingSeen::Seen> boost_thread_scheduling() const { return boost_seen_.get(); }

 private:
  struct Queued {
    std::uint64_t id;
    WorkItem item;
  };
  struct Commit {
    std::set<std::uint64_t> unfinished;
    std::shared_ptr<CompletionEvent> event;
    bool high_priority = false;
  };

  void worker(std::size_t index, bool boost);
  bool boost_active_locked() const;
  void wake_workers();
  void finished_locked(std::uint64_t id);  // commit bookkeeping; signals done commits

  const ProcessorSettings settings_;
  TaskSource* const source_;
  std::mutex set_mode_mutex_;  // serialises set_mode (the source is called outside mutex_)
  SchedulingSeen idle_seen_, boost_seen_;
  std::optional<std::string> policy_refused_;  // guarded by mutex_
  mutable std::mutex mutex_;
  mutable std::condition_variable work_cv_;   // the idle threads': queue, boost or stop changed
  mutable std::condition_variable boost_cv_;  // the boost threads': woken by wake_workers
  std::atomic<bool> boost_wanted_{false};     // boost_active_locked(), kept for wake_workers
  mutable std::condition_variable idle_cv_;   // something finished
  std::deque<Queued> queue_;
  std::set<std::uint64_t> unfinished_;  // queued or running
  // Index id - 1. A deque: it grows in small blocks, never moved and unmapped as a vector past
  // the mmap threshold is (an munmap interrupts every CPU running a thread of the process).
  std::deque<TaskRecord> records_;
  std::vector<Commit> commits_;
  ProcessingMode mode_ = ProcessingMode::allowed;
  bool accepting_commit_work_ = false;  // set_mode is calling the source: queue even if disabled
  bool boost_pending_ = false;          // ... for a high-priority commit
  bool stopping_ = false;
  // hold() and hold_for_cpu_phase() (kHeld, kHeldForCpuPhase), and kStopping from shut_down,
  // read without mutex_; threads sleep on it (core/wake_signal.h) while a hold lasts, counted
  // in hold_sleepers_ so that a release wakes only when someone sleeps.
  static constexpr std::uint32_t kHeld = 1, kHeldForCpuPhase = 2, kStopping = 4;
  mutable std::atomic<std::uint32_t> hold_bits_{0};
  mutable std::atomic<std::uint32_t> hold_sleepers_{0};
  void set_hold_bit(std::uint32_t bit, bool on);
  // Sleeps while hold_bits_ still reads `seen`, at most `timeout_ns`.
  void sleep_on_hold(std::uint32_t seen, std::int64_t timeout_ns) const;
  std::size_t running_idle_ = 0, running_boost_ = 0;
  std::uint64_t next_id_ = 1;
  std::vector<std::thread> threads_;
};

}  // namespace gpuoverlap::background
