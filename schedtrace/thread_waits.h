// Every wait of a thread, explained by the kernel's record (sched_record.h): for each stretch a
// thread was off its CPU, whether it was runnable (preempted, yielded) or blocked (asleep, on a
// lock or a condition), who ran on its CPU, how it lost the CPU, what gave the CPU back, and
// for a blocked thread who woke it and how long that waker had itself waited for a CPU, so that
// a priority inversion (a normal thread blocked on one an idle-priority thread holds) is named.
//
// The runnable part of a stretch is what the kernel counts as the thread's run delay
// (/proc/<tid>/schedstat): a preempted or yielded thread is runnable from its switch out, a
// blocked one from its wake-up, until its switch in. Attributions over an interval clip to it.
//
// Contract: the record is the only source. Where a CPU lost events during a stretch, the
// stretch says so (lost_events) rather than being guessed over.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/enum_names.h"
#include "schedtrace/sched_record.h"

namespace gpuoverlap {

// Whose a thread is, as the record names it.
enum class ThreadKind : std::uint8_t {
  background,     // one of the tool's background threads: compile, boost, control, spinner
  frame_thread,   // another thread of the measured process: the frame loop, a worker, the
                  // poller, the driver's threads
  other_process,  // a thread of another process
  kernel,         // a kernel thread (kworker, ksoftirqd, rcu, migration, ...)
  idle,           // the CPU's idle task: nobody held it
};

// How a runnable thread lost its CPU.
enum class LostBy : std::uint8_t {
  yielded,       // it called sched_yield: it goes behind the queue's eligible threads
  tick,          // the timer interrupt ended its slice
  woken_thread,  // a thread woken onto its CPU preempted it (a reschedule IPI, a wake-up by
                 // another CPU whose IPI is still on its way, or a wake-up it made itself)
  interrupt,     // a device's interrupt, after which the kernel rescheduled
  own_call,      // none of those: a system call of its own that rescheduled
  blocked,       // not runnable: it slept or blocked, and was later woken
};

// What gave the CPU back to a runnable thread.
enum class GivenBackBy : std::uint8_t {
  tick,             // the holder was switched out at a timer interrupt
  wakeup_ipi,       // a reschedule or function-call IPI on the holder's CPU
  holder_blocked,   // the holder slept or blocked
  holder_ended,     // the holder's thread ended
  holder_yielded,   // the holder called sched_yield
  idle_cpu,         // the CPU was idle: the wait was the wake-up's own latency
  other,            // a switch none of those explain (the holder's own system call)
  woke_preempting,  // its own wake-up preempted the holder, with no interrupt after it (a
                    // wake-up made on that CPU, in an interrupt or by a thread there)
};

inline constexpr EnumNames<ThreadKind, 5> kThreadKindNames{{
    {ThreadKind::background, "background"},
    {ThreadKind::frame_thread, "frame's thread"},
    {ThreadKind::other_process, "another process"},
    {ThreadKind::kernel, "kernel"},
    {ThreadKind::idle, "idle"},
}};
inline constexpr EnumNames<LostBy, 6> kLostByNames{{
    {LostBy::yielded, "yielded"},
    {LostBy::tick, "tick"},
    {LostBy::woken_thread, "woken thread"},
    {LostBy::interrupt, "interrupt"},
    {LostBy::own_call, "own call"},
    {LostBy::blocked, "blocked"},
}};
inline constexpr EnumNames<GivenBackBy, 8> kGivenBackByNames{{
    {GivenBackBy::tick, "tick"},
    {GivenBackBy::wakeup_ipi, "wake-up IPI"},
    {GivenBackBy::holder_blocked, "holder blocked"},
    {GivenBackBy::holder_ended, "holder ended"},
    {GivenBackBy::holder_yielded, "holder yielded"},
    {GivenBackBy::idle_cpu, "idle CPU"},
    {GivenBackBy::other, "other"},
    {GivenBackBy::woke_preempting, "its wake-up"},
}};

struct ThreadWait {
  std::int32_t tid = -1;
  std::int64_t off_ns = 0;                 // switched out
  std::int64_t on_ns = 0;                  // switched back in
  std::int64_t runnable_from_ns = 0;       // off_ns, or its wake-up when it blocked
  std::int32_t cpu_out = -1, cpu_in = -1;  // differ where it came back on another CPU
  LostBy lost_by = LostBy::own_call;
  // Who ran on its CPU while it was runnable: the thread that took the CPU at the switch out,
  // or, after a wake-up, the thread then running on the CPU it was woken onto.
  std::int32_t holder_tid = -1;
  std::string holder;  // "compile 0-6094"; "idle"
  ThreadKind holder_kind = ThreadKind::idle;
  std::int32_t holder_prio = -1;  // the kernel's prio (120 = nice 0; SCHED_IDLE shows its nice's)
  GivenBackBy given_back_by = GivenBackBy::other;
  // A blocked wait's waker; tid -1 when an interrupt woke it (a timer's expiry, a device).
  std::int32_t waker_tid = -1;
  std::string waker;  // "worker 1-105", "an interrupt"
  ThreadKind waker_kind = ThreadKind::idle;
  // How long the waker had itself been runnable without a CPU just before it woke this
  // thread; -1 when not known. A normal thread woken late by a background thread that
  // waited: the priority inversion.
  std::int64_t waker_waited_ns = -1;
  bool lost_events = false;  // a CPU it used lost events: the stretch may be incomplete
  // The kernel wrote no switch onto its CPU: it ended at the thread's first line there (on_ns
  // is then an upper bound).
  bool switch_unrecorded = false;

  std::int64_t runnable_ns() const { return on_ns - runnable_from_ns; }
  // The runnable part that falls in [from_ns, to_ns).
  std::int64_t runnable_ns_in(std::int64_t from_ns, std::int64_t to_ns) const;
  // A normal thread woken by a background thread: the wait it had depended on that thread.
  bool priority_inversion() const {
    return lost_by == LostBy::blocked && waker_kind == ThreadKind::background;
  }
};

struct WaitOptions {
  std::int32_t process_tgid = -1;  // the measured process: its threads are frame or background
  // Whether a thread of another process is a kernel thread; by default by its name. The
  // recorder passes one that reads /proc/<tid>/cmdline (a kernel thread's is empty).
  std::function<bool(std::int32_t tid, const std::string& comm)> is_kernel_thread;
};

// The names the tool gives its background threads (core/thread_policy.h, background/).
bool is_background_thread_name(std::string_view comm);
bool is_kernel_thread_name(std::string_view comm);

// Every off-CPU stretch of the threads `tids` that ends in [from_ns, to_ns], in time order.
std::vector<ThreadWait> thread_waits(const SchedRecord& record, const std::set<std::int32_t>& tids,
                                     std::int64_t from_ns, std::int64_t to_ns,
                                     const WaitOptions& options);

// The runnable time of `waits` in [from_ns, to_ns), in all and by the holder's kind, and the
// longest single runnable part: what one frame interval's line in frames.csv says.
struct WaitTotals {
  std::int64_t runnable_ns = 0;
  std::int64_t to_background_ns = 0;
  std::int64_t to_frame_threads_ns = 0;
  std::int64_t to_other_processes_ns = 0;
  std::int64_t to_kernel_ns = 0;
  std::int64_t wake_latency_ns = 0;           // woken onto an idle CPU: the wake-up's own latency
  std::int64_t blocked_ns = 0;                // asleep or blocked (not runnable)
  std::int64_t blocked_on_background_ns = 0;  // of it, woken by a background thread
  const ThreadWait* longest = nullptr;        // the wait with the longest runnable part in it
  std::int64_t longest_ns = 0;
};
// A wait counts in [from_ns, to_ns) when it ends at or after from_ns and begins before to_ns.
// Asked for many intervals (every measured frame, every worker): each thread's waits are kept in
// time order, so that an interval costs its own waits, not a walk of all of them.
// Contract: `waits` outlives the index; one thread's waits do not overlap (thread_waits' own).
class WaitIndex {
 public:
  explicit WaitIndex(const std::vector<ThreadWait>& waits);
  WaitTotals totals(std::int32_t tid, std::int64_t from_ns, std::int64_t to_ns) const;

 private:
  std::unordered_map<std::int32_t, std::vector<const ThreadWait*>> by_thread_;  // by on_ns
};

// "compile 0-6094 (background) held its CPU 3.80 ms after it yielded, until the next tick".
std::string describe(const ThreadWait& wait);
// The phrases of those sentences: "after it yielded", "until the next tick".
std::string_view lost_phrase(LostBy lost_by);
std::string_view back_phrase(GivenBackBy given_back_by);

}  // namespace gpuoverlap
