// The background-processing runtime (background/background_processor.h): one test per rule of
// the D3D12 spec, then a randomised stress test from several threads (run under TSan in CI).
#include "background/background_processor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "core/clock.h"
#include "core/cpu_affinity.h"

namespace gpuoverlap::background {
namespace {

using namespace std::chrono_literals;

// A gate the test opens; items block on it, with a deadline so a bug cannot hang the test.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 10s, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

struct Outcome {
  std::atomic<int> ran{0}, cancelled{0};
};

WorkItem item(Outcome& o, std::function<void()> body = {}) {
  return {"t",
          [&o, body] {
            if (body) body();
            o.ran++;
          },
          [&o] { o.cancelled++; }};
}

ProcessorSettings developer(std::size_t max_concurrent = 2) {
  ProcessorSettings s;
  s.max_concurrent = max_concurrent;
  s.high_priority_threads = 4;
  s.developer_mode = true;
  return s;
}

TEST(BackgroundProcessor, RunsEveryItemOnceInSubmissionOrderAtIdlePriority) {
  BackgroundProcessor p(developer(1));
  std::vector<int> order;
  std::mutex m;
  Outcome o[20];
  for (int i = 0; i < 20; ++i)
    p.queue(item(o[i], [&, i] {
      std::lock_guard lock(m);
      order.push_back(i);
    }));
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  for (auto& x : o) {
    EXPECT_EQ(x.ran, 1);
    EXPECT_EQ(x.cancelled, 0);
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
  for (const TaskRecord& r : p.records()) {
    EXPECT_TRUE(r.ran);
    EXPECT_TRUE(r.idle_priority) << "SCHED_IDLE";
    EXPECT_FALSE(r.boosted);
    EXPECT_LE(r.queued_ns, r.start_ns);
    EXPECT_LE(r.start_ns, r.finish_ns);
    EXPECT_GE(r.worker, 0);
  }
  // What meta.json records: the idle threads read SCHED_IDLE back, the boost threads the
  // policy of the thread that made them (this one's).
  const auto idle = p.idle_thread_scheduling();
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->first.policy, "SCHED_IDLE");
  EXPECT_EQ(idle->differing, 0u);
  EXPECT_EQ(idle->threads, 1u) << "max_concurrent 1";
  // Each boost thread reports when it first runs; on a loaded machine some may not have run
  // yet (they had no work): wait for them, with a deadline.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto boost = p.boost_thread_scheduling();
  while ((!boost || boost->threads < p.settings().high_priority_threads) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
    boost = p.boost_thread_scheduling();
  }
  ASSERT_TRUE(boost.has_value());
  EXPECT_EQ(boost->first, this_thread_scheduling());
  EXPECT_EQ(boost->threads, p.settings().high_priority_threads);
}

// The compile threads run under the policy asked for (here Mesa's and Fossilize's), read back
// from the OS; their records then say they were not SCHED_IDLE.
TEST(BackgroundProcessor, TheCompileThreadsRunUnderThePolicyAskedFor) {
#if defined(_WIN32)
  const ThreadPolicy policy = ThreadPolicy::idle;
  const char* expected = "THREAD_PRIORITY_IDLE";
#else
  const ThreadPolicy policy = ThreadPolicy::batch_nice19;
  const char* expected = "SCHED_BATCH";
#endif
  ProcessorSettings settings = developer(2);
  settings.policy = policy;
  BackgroundProcessor p(settings);
  Outcome o[4];
  for (Outcome& x : o) p.queue(item(x));
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  const auto seen = p.idle_thread_scheduling();
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->first.policy, expected);
#if !defined(_WIN32)
  EXPECT_EQ(seen->first.level, 19) << "nice 19";
  for (const TaskRecord& r : p.records()) EXPECT_FALSE(r.idle_priority) << r.id;
#endif
  EXPECT_EQ(seen->differing, 0u);
  EXPECT_FALSE(p.policy_refused().has_value()) << *p.policy_refused();
}

TEST(BackgroundProcessor, AtMostTheLimitRunAtOnceAndStartsFollowSubmission) {
  for (std::size_t limit : {1u, 2u, 3u}) {
    BackgroundProcessor p(developer(limit));
    std::atomic<int> running{0}, most{0};
    Outcome o[12];
    for (auto& x : o)
      p.queue(item(x, [&] {
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        // Hold until `limit` items have run at once (SCHED_IDLE threads on a loaded machine
        // may start late), so reaching the limit does not depend on timing; the deadline
        // turns a processor that never allows it into a failure below, not a hang.
        for (int i = 0; i < 10'000 && most.load() < static_cast<int>(limit); ++i)
          std::this_thread::sleep_for(1ms);
        --running;
      }));
    ASSERT_TRUE(p.wait_idle_ms(10'000));
    EXPECT_LE(most.load(), static_cast<int>(limit));
    EXPECT_EQ(most.load(), static_cast<int>(limit)) << "the limit is also used";
    const auto records = p.records();
    for (std::size_t i = 1; i < records.size(); ++i)
      EXPECT_LE(records[i - 1].start_ns, records[i].start_ns);
  }
}

TEST(BackgroundProcessor, DisableLetsQueuedWorkRunAndCancelsNewWorkOnTheCallersThread) {
  BackgroundProcessor p(developer());
  Gate gate;
  Outcome before, after;
  p.queue(item(before, [&] { gate.wait(); }));
  ASSERT_TRUE(
      p.set_mode(ProcessingMode::disable_background_work, MeasurementsAction::keep_all).ok());
  std::thread::id cancelled_on;
  p.queue({"late", [&] { after.ran++; },
           [&] {
             cancelled_on = std::this_thread::get_id();
             after.cancelled++;
           }});
  EXPECT_EQ(after.cancelled, 1) << "cancelled before queue() returned";
  EXPECT_EQ(cancelled_on, std::this_thread::get_id());
  gate.open();
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  EXPECT_EQ(before.ran, 1);
  EXPECT_EQ(after.ran, 0);
  // DISABLE_PROFILING_BY_SYSTEM is a superset: it cancels too.
  ASSERT_TRUE(
      p.set_mode(ProcessingMode::disable_profiling_by_system, MeasurementsAction::keep_all).ok());
  Outcome more;
  p.queue(item(more));
  EXPECT_EQ(more.cancelled, 1);
  ASSERT_TRUE(p.set_mode(ProcessingMode::allowed, MeasurementsAction::keep_all).ok());
  Outcome again;
  p.queue(item(again));
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  EXPECT_EQ(again.ran, 1);
}

// The measurement's hold (BackgroundSpec::alternate_frames; not the spec's): a running item
// finishes, a queued one waits until the release. Deterministic: a worker that finishes an
// item takes the next in the same critical section, so once the first item's finish is
// recorded, the second has started unless the processor is held.
TEST(BackgroundProcessor, HoldLetsRunningWorkFinishAndStartsNothingUntilReleased) {
  BackgroundProcessor p(developer(1));
  Gate gate;
  Outcome first, second;
  p.queue(item(first, [&] { gate.wait(); }));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (p.activity().running_idle == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  ASSERT_EQ(p.activity().running_idle, 1u) << "the first item started";
  p.hold(true);
  p.queue(item(second));
  gate.open();
  while (p.records()[0].finish_ns == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  ASSERT_NE(p.records()[0].finish_ns, 0) << "a running item finishes while held";
  EXPECT_EQ(first.ran, 1);
  EXPECT_EQ(p.records()[1].start_ns, 0) << "nothing starts while held";
  EXPECT_EQ(p.activity().queued, 1u);
  EXPECT_FALSE(p.wait_idle_ms(0));
  const std::int64_t released_ns = monotonic_raw_ns();
  p.hold(false);
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  EXPECT_EQ(second.ran, 1);
  EXPECT_GE(p.records()[1].start_ns, released_ns);
}

// dispatch = "gaps": the frame's CPU phase holds the starts by a hold of its own, which the
// alternation's release does not lift; a running item can wait out the phase between stages.
TEST(BackgroundProcessor, TheCpuPhaseHoldStartsNothingAndOutlastsTheBlockHoldsRelease) {
  BackgroundProcessor p(developer(1));
  p.hold_for_cpu_phase(true);
  EXPECT_FALSE(p.wait_out_cpu_phase_ms(1)) << "held: the wait times out";
  Outcome o;
  p.queue(item(o));
  p.hold(true);
  p.hold(false);
  EXPECT_FALSE(p.wait_idle_ms(20)) << "the block's release leaves the CPU phase's hold";
  EXPECT_EQ(p.records()[0].start_ns, 0);
  const std::int64_t released_ns = monotonic_raw_ns();
  p.hold_for_cpu_phase(false);
  EXPECT_TRUE(p.wait_out_cpu_phase_ms(0));
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  EXPECT_EQ(o.ran, 1);
  EXPECT_GE(p.records()[0].start_ns, released_ns);
}

// The compile threads restrict themselves to the CPUs asked for, read back from the OS.
TEST(BackgroundProcessor, TheCompileThreadsRunOnTheCpusAskedFor) {
  const std::vector<int> usable = usable_cpu_ids();
  ASSERT_FALSE(usable.empty());
  ProcessorSettings settings = developer(2);
  settings.policy = ThreadPolicy::normal;
  settings.cpus = {usable.back()};
  BackgroundProcessor p(settings);
  Outcome o[2];
  for (Outcome& x : o) p.queue(item(x));
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  const auto seen = p.idle_thread_scheduling();
  ASSERT_TRUE(seen.has_value());
  ASSERT_TRUE(seen->first.cpus.has_value());
  EXPECT_EQ(*seen->first.cpus, std::vector<int>{usable.back()});
  EXPECT_FALSE(p.policy_refused().has_value()) << *p.policy_refused();
}

// Held work is still cancelled by a shut-down, which must not wait for a release.
TEST(BackgroundProcessor, AHeldProcessorShutsDownAndCancelsWhatWaits) {
  BackgroundProcessor p(developer(1));
  p.hold(true);
  Outcome waiting;
  p.queue(item(waiting));
  p.shut_down();
  EXPECT_EQ(waiting.ran, 0);
  EXPECT_EQ(waiting.cancelled, 1);
}

TEST(BackgroundProcessor, RestrictedModesNeedDeveloperMode) {
  ProcessorSettings retail;
  retail.developer_mode = false;
  BackgroundProcessor p(retail);
  for (auto [mode, action] :
       {std::pair{ProcessingMode::disable_background_work, MeasurementsAction::keep_all},
        std::pair{ProcessingMode::disable_profiling_by_system, MeasurementsAction::keep_all},
        std::pair{ProcessingMode::allowed, MeasurementsAction::commit_results_high_priority}}) {
    const auto r = p.set_mode(mode, action);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("developer mode"), std::string::npos);
    EXPECT_EQ(p.mode(), ProcessingMode::allowed) << "a refused change changes nothing";
  }
  // The retail hints are allowed.
  EXPECT_TRUE(
      p.set_mode(ProcessingMode::allow_intrusive_measurements, MeasurementsAction::commit_results)
          .ok());
  EXPECT_TRUE(p.set_mode(ProcessingMode::allowed, MeasurementsAction::discard_previous).ok());
  EXPECT_EQ(p.mode(), ProcessingMode::allowed);
}

TEST(BackgroundProcessor, TheEventMustBeNullUnlessACommitIsRequested) {
  BackgroundProcessor p(developer());
  auto event = std::make_shared<CompletionEvent>();
  for (auto action : {MeasurementsAction::keep_all, MeasurementsAction::discard_previous}) {
    const auto r = p.set_mode(ProcessingMode::allowed, action, event);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("must be null"), std::string::npos);
  }
  EXPECT_TRUE(p.set_mode(ProcessingMode::allowed, MeasurementsAction::commit_results, event).ok());
  EXPECT_TRUE(event->wait_for_ms(1000)) << "nothing pending: signalled at once";
}

TEST(BackgroundProcessor, CommitSignalsOnceEveryItemQueuedBeforeItHasRun) {
  BackgroundProcessor p(developer(1));
  Gate first, later;
  Outcome a, b, c;
  p.queue(item(a, [&] { first.wait(); }));
  p.queue(item(b));
  auto event = std::make_shared<CompletionEvent>();
  ASSERT_TRUE(p.set_mode(ProcessingMode::allowed, MeasurementsAction::commit_results, event).ok());
  p.queue(item(c, [&] { later.wait(); }));  // after the commit: not part of it
  EXPECT_FALSE(event->wait_for_ms(50));
  first.open();
  ASSERT_TRUE(event->wait_for_ms(10'000));
  EXPECT_EQ(a.ran, 1);
  EXPECT_EQ(b.ran, 1);
  later.open();
  ASSERT_TRUE(p.wait_idle_ms(10'000));
}

// A driver that answers FurtherMeasurementsDesired and queues a compile when asked to commit.
class CountingSource : public TaskSource {
 public:
  BackgroundProcessor* processor = nullptr;
  Outcome generated;
  std::vector<std::pair<ProcessingMode, MeasurementsAction>> seen;
  int answers_left = 2;
  bool on_mode_change(ProcessingMode mode, MeasurementsAction action) override {
    seen.emplace_back(mode, action);
    if (action == MeasurementsAction::commit_results ||
        action == MeasurementsAction::commit_results_high_priority)
      processor->queue(item(generated, [] { std::this_thread::sleep_for(5ms); }));
    return answers_left-- > 0;
  }
};

TEST(BackgroundProcessor, WorkTheCommitGeneratesRunsBeforeASimultaneousDisable) {
  CountingSource source;
  BackgroundProcessor p(developer(), &source);
  source.processor = &p;
  auto event = std::make_shared<CompletionEvent>();
  const auto further = p.set_mode(ProcessingMode::disable_background_work,
                                  MeasurementsAction::commit_results, event);
  ASSERT_TRUE(further.ok());
  EXPECT_TRUE(*further);
  ASSERT_TRUE(event->wait_for_ms(10'000)) << "the commit's own work is part of the commit";
  EXPECT_EQ(source.generated.ran, 1);
  EXPECT_EQ(source.generated.cancelled, 0);
  Outcome after;
  p.queue(item(after));
  EXPECT_EQ(after.cancelled, 1) << "the disable took effect when set_mode returned";
  ASSERT_EQ(source.seen.size(), 1u);
  EXPECT_EQ(source.seen[0].first, ProcessingMode::disable_background_work);
}

TEST(BackgroundProcessor, FurtherMeasurementsDesiredComesFromTheSource) {
  CountingSource source;
  BackgroundProcessor p(developer(), &source);
  source.processor = &p;
  EXPECT_TRUE(*p.set_mode(ProcessingMode::allow_intrusive_measurements,
                          MeasurementsAction::discard_previous));
  EXPECT_TRUE(
      *p.set_mode(ProcessingMode::allow_intrusive_measurements, MeasurementsAction::keep_all));
  EXPECT_FALSE(*p.set_mode(ProcessingMode::allowed, MeasurementsAction::keep_all));
  EXPECT_EQ(source.seen[0].second, MeasurementsAction::discard_previous);
  BackgroundProcessor without(developer());
  EXPECT_FALSE(*without.set_mode(ProcessingMode::allowed, MeasurementsAction::keep_all));
}

TEST(BackgroundProcessor, HighPriorityCommitRunsManyAtOnceAboveIdleUntilItsSetIsDone) {
  BackgroundProcessor p(developer(1));  // normally one at a time
  Gate gate;
  std::atomic<int> running{0}, most{0};
  Outcome o[4];
  Gate hold_first;
  Outcome first;
  std::atomic<bool> first_started{false};
  p.queue(item(first, [&] {  // occupies the only idle thread
    first_started = true;
    hold_first.wait();
  }));
  for (auto& x : o)
    p.queue(item(x, [&] {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      gate.wait();
      --running;
    }));
  // A SCHED_IDLE thread on a loaded machine may start late: commit only once it runs item 1.
  for (int i = 0; i < 10'000 && !first_started; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(first_started);
  auto event = std::make_shared<CompletionEvent>();
  ASSERT_TRUE(
      p.set_mode(ProcessingMode::allowed, MeasurementsAction::commit_results_high_priority, event)
          .ok());
  // The 4 queued items start together on the boost threads.
  for (int i = 0; i < 1000 && running.load() < 4; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(running.load(), 4);
  gate.open();
  hold_first.open();
  ASSERT_TRUE(event->wait_for_ms(10'000));
  for (const TaskRecord& r : p.records()) {
    if (r.id == 1) {
      EXPECT_FALSE(r.boosted);  // was already running on the idle thread
      continue;
    }
    EXPECT_TRUE(r.boosted) << r.id;
    EXPECT_FALSE(r.idle_priority) << r.id;
  }
  // After the commit set is done, work is back on the idle thread.
  Outcome after;
  p.queue(item(after));
  ASSERT_TRUE(p.wait_idle_ms(10'000));
  const TaskRecord last = p.records().back();
  EXPECT_FALSE(last.boosted);
  EXPECT_TRUE(last.idle_priority);
}

TEST(BackgroundProcessor, DestructionFinishesInFlightWorkAndCancelsQueuedWork) {
  Outcome running, queued[5];
  Gate gate;
  std::atomic<bool> started{false};
  auto event = std::make_shared<CompletionEvent>();
  std::thread opener;  // opens the gate while the processor is being destroyed
  {
    BackgroundProcessor p(developer(1));
    p.queue(item(running, [&] {
      started = true;
      gate.wait();
    }));
    for (auto& q : queued) p.queue(item(q));
    ASSERT_TRUE(
        p.set_mode(ProcessingMode::allowed, MeasurementsAction::commit_results, event).ok());
    for (int i = 0; i < 10'000 && !started; ++i) std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(started);
    opener = std::thread([&] {
      std::this_thread::sleep_for(20ms);
      gate.open();
    });
  }  // waits for the running item
  opener.join();
  EXPECT_EQ(running.ran, 1);
  for (auto& q : queued) {
    EXPECT_EQ(q.ran, 0);
    EXPECT_EQ(q.cancelled, 1);
  }
  EXPECT_TRUE(event->is_signalled()) << "its set ended: ran or cancelled";
}

// Thousands of queue / mode change / commit / destroy operations from several threads, while a
// thread standing for the frame loop takes and releases the holds (which take no lock).
// Checks: every queued item gets exactly one of callback or cancel; every commit event is
// signalled, and only after every item its caller queued before the commit has finished.
TEST(BackgroundProcessorStress, ExactlyOnceAndCommitEventsUnderRandomOperations) {
  constexpr int kThreads = 4;
  constexpr int kOperationsPerThread = 1500;
  constexpr int kRounds = 4;  // the processor is destroyed and rebuilt between rounds
  std::atomic<int> total_items{0};
  std::atomic<int> commits_checked{0};
  for (int round = 0; round < kRounds; ++round) {
    struct Slot {
      std::atomic<bool> queued{false};
      std::atomic<int> ran{0}, cancelled{0};
    };
    std::vector<std::unique_ptr<Slot>> slots(kThreads * kOperationsPerThread);
    for (auto& s : slots) s = std::make_unique<Slot>();
    std::vector<std::shared_ptr<CompletionEvent>> outstanding_events;
    std::mutex events_mutex;
    {
      BackgroundProcessor p(developer(2));
      std::atomic<bool> operations_done{false};
      std::thread frame_loop([&] {
        std::mt19937 random(77 + round);
        while (!operations_done.load()) {
          const bool cpu_phase = random() % 2 == 0;
          cpu_phase ? p.hold_for_cpu_phase(true) : p.hold(true);
          std::this_thread::sleep_for(50us);
          cpu_phase ? p.hold_for_cpu_phase(false) : p.hold(false);
          std::this_thread::sleep_for(50us);
        }
      });
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          std::mt19937 random(1234 + 97 * round + t);
          std::vector<int> mine;
          for (int i = 0; i < kOperationsPerThread; ++i) {
            const int roll = static_cast<int>(random() % 100);
            if (roll < 85) {
              Slot* slot = slots[t * kOperationsPerThread + i].get();
              mine.push_back(t * kOperationsPerThread + i);
              slot->queued = true;
              p.queue({"s", [slot] { slot->ran++; }, [slot] { slot->cancelled++; }});
              ++total_items;
            } else if (roll < 95) {
              const ProcessingMode modes[] = {ProcessingMode::allowed,
                                              ProcessingMode::allow_intrusive_measurements,
                                              ProcessingMode::disable_background_work,
                                              ProcessingMode::disable_profiling_by_system};
              const MeasurementsAction actions[] = {MeasurementsAction::keep_all,
                                                    MeasurementsAction::discard_previous};
              ASSERT_TRUE(p.set_mode(modes[random() % 4], actions[random() % 2]).ok());
            } else {
              auto event = std::make_shared<CompletionEvent>();
              const MeasurementsAction action =
                  random() % 2 ? MeasurementsAction::commit_results
                               : MeasurementsAction::commit_results_high_priority;
              ASSERT_TRUE(p.set_mode(ProcessingMode::allowed, action, event).ok());
              if (random() % 2) {
                // Wait for it now: everything this thread queued before must have finished.
                ASSERT_TRUE(event->wait_for_ms(20'000)) << "commit event never signalled";
                for (int id : mine)
                  ASSERT_EQ(slots[id]->ran + slots[id]->cancelled, 1) << "item " << id;
                ++commits_checked;
              } else {
                std::lock_guard lock(events_mutex);
                outstanding_events.push_back(event);  // checked after destruction
              }
            }
          }
        });
      for (auto& th : threads) th.join();
      operations_done = true;
      frame_loop.join();
    }  // destroy: in-flight finish, queued cancelled
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const int ran = slots[i]->ran, cancelled = slots[i]->cancelled;
      ASSERT_EQ(ran + cancelled, slots[i]->queued ? 1 : 0)
          << "slot " << i << " ran " << ran << " cancelled " << cancelled;
    }
    for (const auto& e : outstanding_events) EXPECT_TRUE(e->is_signalled());
  }
  EXPECT_GT(total_items.load(), kRounds * kThreads * kOperationsPerThread / 2);
  EXPECT_GT(commits_checked.load(), 0);
}

}  // namespace
}  // namespace gpuoverlap::background
