// The thread accounting (core/thread_accounting.h) against threads made to wait in known ways:
// two threads pinned to one CPU, each runnable the whole time, must show the waiting in their
// run delay; a thread held on a condition variable is off the CPU, and that is not run delay.
// Bounds only, loose enough for a loaded machine: more load adds run delay, never removes it.
// Another thread's figures read by its id, and a group's between laps, are checked the same way.
#include "core/thread_accounting.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/cpu_relax.h"

namespace gpuoverlap {
namespace {

constexpr std::int64_t kMs = 1'000'000;

void spin_until(std::int64_t end_ns) {
  while (monotonic_raw_ns() < end_ns) GPUOVERLAP_CPU_RELAX();
}

TEST(ThreadAccounting, TwoThreadsPinnedToOneCpuShowTheirWaitAsRunDelay) {
  const int cpu = usable_cpu_ids().front();
  constexpr std::int64_t kSpanNs = 300 * kMs;
  ThreadAccounting spent[2];
  bool pinned[2] = {false, false};
  const std::int64_t end_ns = monotonic_raw_ns() + kSpanNs;
  auto spinner = [&](int i) {
    pinned[i] = pin_current_thread(cpu);
    const ThreadAccounting before = read_thread_accounting();
    spin_until(end_ns);
    spent[i] = accounting_between(before, read_thread_accounting());
  };
  std::thread a(spinner, 0), b(spinner, 1);
  a.join();
  b.join();
  ASSERT_TRUE(pinned[0] && pinned[1]) << "pinning to CPU " << cpu;
  std::int64_t run_delay_ns = 0, involuntary = 0;
  for (const ThreadAccounting& s : spent) {
    ASSERT_TRUE(s.run_delay_ns && s.on_cpu_ns && s.involuntary_switches);
    EXPECT_EQ(s.cpu, cpu);
    run_delay_ns += *s.run_delay_ns;
    involuntary += *s.involuntary_switches;
  }
  // Both runnable for most of the span, one CPU between them: together they waited about one
  // span (each about half). Two thirds of it is the bound.
  EXPECT_GE(run_delay_ns, 2 * kSpanNs / 3) << "ns of run delay, both threads";
  EXPECT_GT(involuntary, 0) << "each preempted the other";
}

TEST(ThreadAccounting, AThreadHeldByAHookIsOffTheCpuNotWaitingForOne) {
  std::mutex mutex;
  std::condition_variable changed;
  bool waiting = false, released = false;
  ThreadAccounting spent;
  std::int64_t held_wall_ns = 0;
  std::thread held([&] {
    const std::int64_t start_ns = monotonic_raw_ns();
    const ThreadAccounting before = read_thread_accounting();
    {
      std::unique_lock lock(mutex);
      waiting = true;
      changed.notify_all();
      // The hook: blocked until the test releases it (a deadline so a bug cannot hang CI).
      changed.wait_for(lock, std::chrono::seconds(60), [&] { return released; });
    }
    spent = accounting_between(before, read_thread_accounting());
    held_wall_ns = monotonic_raw_ns() - start_ns;
  });
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(60), [&] { return waiting; }));
  }
  // Holds it while this thread works: a span the held thread can only spend off the CPU.
  constexpr std::int64_t kHoldNs = 300 * kMs;
  spin_until(monotonic_raw_ns() + kHoldNs);
  {
    std::lock_guard lock(mutex);
    released = true;
  }
  changed.notify_all();
  held.join();
  ASSERT_TRUE(spent.run_delay_ns && spent.on_cpu_ns && spent.voluntary_switches);
  const std::int64_t off_cpu_ns = held_wall_ns - *spent.on_cpu_ns - *spent.run_delay_ns;
  EXPECT_GE(off_cpu_ns, 2 * kHoldNs / 3) << "held " << held_wall_ns << " ns";
  // Run delay only after the release (waiting for a CPU once woken), never the hold itself.
  EXPECT_LE(*spent.run_delay_ns, held_wall_ns - 2 * kHoldNs / 3);
  EXPECT_GE(*spent.voluntary_switches, 1) << "it blocked";
}

TEST(ThreadAccounting, ADifferenceNeedsBothReadingsAndKeepsTheLaterCpu) {
  ThreadAccounting earlier, later;
  earlier.on_cpu_ns = 100, later.on_cpu_ns = 250;
  later.run_delay_ns = 40;  // the earlier reading lacks it
  earlier.voluntary_switches = 2, later.voluntary_switches = 5;
  earlier.cpu = 1, later.cpu = 3;
  const ThreadAccounting d = accounting_between(earlier, later);
  EXPECT_EQ(d.on_cpu_ns, 150);
  EXPECT_FALSE(d.run_delay_ns);
  EXPECT_EQ(d.voluntary_switches, 3);
  EXPECT_FALSE(d.involuntary_switches);
  EXPECT_EQ(d.cpu, 3);
}

// The frame loop reads the workers' figures from outside them: two threads pinned to one CPU,
// read by a third through their ids, show the same wait their own readings would.
TEST(ThreadAccounting, AGroupOfThreadsIsReadFromOutsideByTheirIds) {
  const int cpu = usable_cpu_ids().front();
  constexpr std::int64_t kSpanNs = 300 * kMs;
  std::mutex mutex;
  std::condition_variable changed;
  int ready = 0, done = 0;
  bool go = false, leave = false;
  std::int64_t ids[2] = {0, 0};
  bool pinned[2] = {false, false};
  std::int64_t end_ns = 0;
  auto spinner = [&](int i) {
    pinned[i] = pin_current_thread(cpu);
    std::unique_lock lock(mutex);
    ids[i] = current_thread_id();
    ++ready;
    changed.notify_all();
    changed.wait(lock, [&] { return go; });
    lock.unlock();
    spin_until(end_ns);
    lock.lock();
    ++done;
    changed.notify_all();
    // Alive until the reader has lapped: an exited thread has no figures.
    changed.wait(lock, [&] { return leave; });
  };
  std::thread a(spinner, 0), b(spinner, 1);
  GroupAccountingClock clock;
  std::optional<GroupAccounting> first, second, other_ids;
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return ready == 2; });
    first = clock.lap({ids[0], ids[1]});
    end_ns = monotonic_raw_ns() + kSpanNs;
    go = true;
    changed.notify_all();
    changed.wait(lock, [&] { return done == 2; });
    second = clock.lap({ids[0], ids[1]});
    // Both alive still: other ids start afresh, whatever their figures.
    other_ids = clock.lap({ids[0]});
    leave = true;
    changed.notify_all();
  }
  a.join();
  b.join();
  ASSERT_TRUE(pinned[0] && pinned[1]) << "pinning to CPU " << cpu;
  EXPECT_FALSE(first) << "the first lap has nothing to compare with";
  ASSERT_TRUE(second);
  EXPECT_GE(second->run_delay_ns, 2 * kSpanNs / 3) << "together they waited about one span";
  EXPECT_GE(second->run_delay_max_ns, second->run_delay_ns / 2) << "the worst of two";
  EXPECT_LE(second->run_delay_max_ns, second->run_delay_ns);
  EXPECT_GE(second->on_cpu_ns, kSpanNs / 2) << "one CPU, busy the whole span";
  EXPECT_FALSE(other_ids) << "other threads: a fresh start";
  EXPECT_FALSE(read_thread_accounting_of(0));
}

// A compile's record: its thread, and what touching fresh memory cost that thread in the
// kernel (page faults, each served by zeroing a page).
TEST(ThreadAccounting, APieceOfWorkCarriesItsThreadAndItsKernelTime) {
  const ThreadAccounting before = read_thread_accounting();
  constexpr std::size_t kBytes = 256u << 20;
  std::vector<unsigned char> fresh(kBytes);  // zero-initialised: every page written
  const ThreadSpan span = thread_span_since(before);
  EXPECT_EQ(fresh[kBytes / 2], 0);
  EXPECT_EQ(span.thread_id, current_thread_id());
  EXPECT_GE(span.cpu_start, 0);
  EXPECT_GE(span.cpu_end, 0);
  ASSERT_TRUE(span.used.minor_faults && span.used.system_ns && span.used.on_cpu_ns);
  EXPECT_GT(*span.used.minor_faults, 0) << "a huge page is one fault; small ones 65,536";
  EXPECT_GT(*span.used.system_ns, 0) << "zeroing 256 MiB is the kernel's work";
  EXPECT_LE(*span.used.system_ns, *span.used.on_cpu_ns + 10 * kMs) << "part of the CPU time";
}

}  // namespace
}  // namespace gpuoverlap
