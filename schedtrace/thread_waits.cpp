#include "schedtrace/thread_waits.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

namespace gpuoverlap {

namespace {

constexpr std::array<std::string_view, 4> kBackgroundPrefixes{"compile ", "boost ", "control ",
                                                              "spinner"};
constexpr std::array<std::string_view, 12> kKernelPrefixes{
    "kworker/", "ksoftirqd/", "rcu_",   "rcuc/", "rcuog/",    "migration/",
    "kthreadd", "watchdog",   "cpuhp/", "irq/",  "kcompactd", "khugepaged"};

struct CpuState {
  std::int32_t running = -1;
  std::int64_t came_in_ns = -1;  // when `running` came onto the CPU
  std::int64_t last_irq_ns = -1;
  SchedEventKind last_irq_kind = SchedEventKind::tick;
  std::int64_t last_remote_wake_ns = -1;  // a thread on another CPU woke a thread onto this one
  std::int64_t last_local_wake_ns = -1;   // the running thread woke a thread onto this CPU
};

struct Syscall {
  std::int64_t time_ns = -1;
  std::int32_t nr = -1;
};

bool is_interrupt(SchedEventKind kind) {
  return kind == SchedEventKind::tick || kind == SchedEventKind::reschedule_ipi ||
         kind == SchedEventKind::function_ipi || kind == SchedEventKind::device_irq;
}

class Walker {
 public:
  Walker(const SchedRecord& record, const std::set<std::int32_t>& tids, const WaitOptions& options)
      : record_(record), tids_(tids), options_(options) {
    // A thread's name is the last the record gives it (a thread named after it started had
    // its creator's name first), as the kernel's text names every line by its current name.
    for (const SchedEvent& e : record.events) {
      if (e.tgid >= 0) tgid_of_.emplace(e.tid, e.tgid);
      if (e.tid > 0 && e.comm != "<...>") names_[e.tid] = e.comm;
      if (e.kind == SchedEventKind::switch_task) {
        if (e.prev_tid > 0) names_[e.prev_tid] = e.prev_comm;
        if (e.next_tid > 0) names_[e.next_tid] = e.next_comm;
      }
    }
  }

  std::vector<ThreadWait> run(std::int64_t from_ns, std::int64_t to_ns) {
    std::vector<ThreadWait> out;
    for (const SchedEvent& e : record_.events) {
      if (e.time_ns > to_ns) break;
      CpuState& cpu = cpus_[e.cpu];
      if (e.kind == SchedEventKind::switch_task)
        seen_leaving(e.prev_tid, e.time_ns, e.cpu, cpu, from_ns, out);
      else
        seen_running(e.tid, e.time_ns, e.cpu, cpu, from_ns, out);
      if (is_interrupt(e.kind)) {
        cpu.last_irq_ns = e.time_ns;
        cpu.last_irq_kind = e.kind;
      } else if (e.kind == SchedEventKind::syscall) {
        syscalls_[e.tid] = {e.time_ns, e.syscall_nr};
      } else if (e.kind == SchedEventKind::wakeup || e.kind == SchedEventKind::wakeup_new) {
        woken(e);
      } else if (e.kind == SchedEventKind::switch_task) {
        switched(e, cpu, from_ns, out);
      }
    }
    return out;
  }

 private:
  std::string name(std::int32_t tid, const std::string& comm_hint = {}) const {
    if (tid == 0) return "idle";
    if (tid < 0) return "unknown";
    auto it = names_.find(tid);
    const std::string& comm = it != names_.end() ? it->second : comm_hint;
    return fmt::format("{}-{}", comm.empty() ? "?" : comm, tid);
  }

  ThreadKind kind(std::int32_t tid, const std::string& comm_hint = {}) const {
    if (tid <= 0) return ThreadKind::idle;
    auto named = names_.find(tid);
    const std::string& comm = named != names_.end() ? named->second : comm_hint;
    auto tgid = tgid_of_.find(tid);
    if (tgid != tgid_of_.end() && tgid->second == options_.process_tgid)
      return is_background_thread_name(comm) ? ThreadKind::background : ThreadKind::frame_thread;
    const bool kernel = options_.is_kernel_thread ? options_.is_kernel_thread(tid, comm)
                                                  : is_kernel_thread_name(comm);
    return kernel ? ThreadKind::kernel : ThreadKind::other_process;
  }

  bool yielded_since(std::int32_t tid, std::int64_t since_ns) const {
    auto it = syscalls_.find(tid);
    return it != syscalls_.end() && it->second.nr == kSyscallSchedYield &&
           it->second.time_ns >= since_ns;
  }

  LostBy lost_by(const CpuState& cpu, std::int32_t tid) const {
    const std::int64_t came = cpu.came_in_ns;
    if (yielded_since(tid, came)) return LostBy::yielded;
    // The latest of the causes since it came onto the CPU.
    std::int64_t latest = -1;
    LostBy cause = LostBy::own_call;
    if (cpu.last_irq_ns >= came && cpu.last_irq_ns > latest) {
      latest = cpu.last_irq_ns;
      cause = cpu.last_irq_kind == SchedEventKind::tick         ? LostBy::tick
              : cpu.last_irq_kind == SchedEventKind::device_irq ? LostBy::interrupt
                                                                : LostBy::woken_thread;
    }
    for (std::int64_t wake : {cpu.last_remote_wake_ns, cpu.last_local_wake_ns}) {
      if (wake >= came && wake > latest) {
        latest = wake;
        cause = LostBy::woken_thread;
      }
    }
    return cause;
  }

  GivenBackBy given_back_by(const CpuState& cpu, const SchedEvent& e,
                            const ThreadWait& wait) const {
    if (e.prev_tid == 0) return GivenBackBy::idle_cpu;
    if (e.prev_state == 'X' || e.prev_state == 'Z') return GivenBackBy::holder_ended;
    if (e.prev_state != 'R') return GivenBackBy::holder_blocked;
    // A woken thread that preempted the holder with nothing on the CPU after its wake-up: the
    // wake-up did it (the interrupt that woke it, when one did, is not a later tick).
    const std::int64_t since_wake = std::max(cpu.came_in_ns, wait.runnable_from_ns);
    if (wait.lost_by == LostBy::blocked && cpu.last_irq_ns < since_wake &&
        cpu.last_remote_wake_ns < since_wake && !yielded_since(e.prev_tid, cpu.came_in_ns))
      return GivenBackBy::woke_preempting;
    const std::int64_t came = cpu.came_in_ns;
    if (yielded_since(e.prev_tid, came)) return GivenBackBy::holder_yielded;
    if (cpu.last_irq_ns >= came && cpu.last_irq_ns >= cpu.last_remote_wake_ns) {
      if (cpu.last_irq_kind == SchedEventKind::tick) return GivenBackBy::tick;
      if (cpu.last_irq_kind != SchedEventKind::device_irq) return GivenBackBy::wakeup_ipi;
    }
    if (cpu.last_remote_wake_ns >= came) return GivenBackBy::wakeup_ipi;
    return GivenBackBy::other;
  }

  void woken(const SchedEvent& e) {
    const std::int32_t subject = e.subject_tid;
    names_.try_emplace(subject, e.subject_comm);
    runnable_since_[subject] = e.time_ns;
    if (e.cpu != e.target_cpu) {
      cpus_[e.target_cpu].last_remote_wake_ns = e.time_ns;
    } else if (!e.in_interrupt) {
      cpus_[e.target_cpu].last_local_wake_ns = e.time_ns;
    }
    auto open = open_.find(subject);
    if (open == open_.end() || open->second.lost_by != LostBy::blocked ||
        open->second.runnable_from_ns >= 0)
      return;
    ThreadWait& wait = open->second;
    wait.runnable_from_ns = e.time_ns;
    if (e.in_interrupt) {
      wait.waker = "an interrupt";
      wait.waker_kind = ThreadKind::kernel;
    } else {
      wait.waker_tid = e.tid;
      wait.waker = name(e.tid, e.comm);
      wait.waker_kind = kind(e.tid, e.comm);
      auto waited = last_wait_ns_.find(e.tid);
      if (waited != last_wait_ns_.end()) wait.waker_waited_ns = waited->second;
    }
    const std::int32_t holder = cpus_[e.target_cpu].running;
    wait.holder_tid = holder;
    wait.holder = name(holder);
    wait.holder_kind = kind(holder);
  }

  void switched(const SchedEvent& e, CpuState& cpu, std::int64_t from_ns,
                std::vector<ThreadWait>& out) {
    names_.try_emplace(e.next_tid, e.next_comm);
    names_.try_emplace(e.prev_tid, e.prev_comm);
    if (e.prev_state == 'R') runnable_since_[e.prev_tid] = e.time_ns;
    if (tids_.count(e.prev_tid) != 0) {
      ThreadWait wait;
      wait.tid = e.prev_tid;
      wait.off_ns = e.time_ns;
      wait.cpu_out = e.cpu;
      if (e.prev_state == 'R') {
        wait.runnable_from_ns = e.time_ns;
        wait.lost_by = lost_by(cpu, e.prev_tid);
        wait.holder_tid = e.next_tid;
        wait.holder = name(e.next_tid, e.next_comm);
        wait.holder_kind = kind(e.next_tid, e.next_comm);
        wait.holder_prio = e.next_prio;
      } else {
        wait.runnable_from_ns = -1;  // until its wake-up
        wait.lost_by = LostBy::blocked;
      }
      open_[e.prev_tid] = std::move(wait);
    }
    came_in(e.next_tid, e.time_ns, e.cpu, from_ns, out, [&](ThreadWait& wait) {
      wait.given_back_by = given_back_by(cpu, e, wait);
      if (wait.holder_prio < 0 && wait.holder_tid == e.prev_tid) wait.holder_prio = e.prev_prio;
    });
    cpu.running = e.next_tid;
    cpu.came_in_ns = e.time_ns;
  }

  // A line whose task is not the one the record last switched to on its CPU: the kernel wrote
  // no sched_switch for it (a 6.18 VM kernel was seen to omit about half the switches from the
  // idle task), and the line is the first sign that the task runs there. Its wait ends here,
  // at the latest; without this it would stay open and be lost at the next switch away. A line
  // of the idle task (tid 0: an interrupt on an idle CPU) says the CPU went idle, so the next
  // thread seen there came from idle and is not taken for the one that ran before.
  void seen_running(std::int32_t tid, std::int64_t time_ns, std::int32_t cpu_index, CpuState& cpu,
                    std::int64_t from_ns, std::vector<ThreadWait>& out) {
    if (tid < 0 || cpu.running == tid) return;
    if (tid > 0) {
      const bool from_idle = cpu.running == 0;
      // From an idle CPU, a woken thread runs as soon as the CPU leaves idle: its wait ends at
      // its wake-up, or when the CPU was last seen going idle if that was later, not at its
      // first line, which is often the next tick. Ending there counted up to a tick of waiting
      // the kernel did not: an H200 baseline read 34.8 ms runnable against 1.5 ms of run
      // delay, in frames whose schedstat delay was 0 ("runnable 3.29 ms behind idle").
      std::int64_t in_ns = time_ns;
      if (const auto since = runnable_since_.find(tid); from_idle && since != runnable_since_.end())
        in_ns = std::min(time_ns, std::max(since->second, cpu.came_in_ns));
      came_in(tid, in_ns, cpu_index, from_ns, out, [&](ThreadWait& wait) {
        wait.given_back_by = from_idle ? GivenBackBy::idle_cpu : GivenBackBy::other;
        wait.switch_unrecorded = true;
      });
    }
    cpu.running = tid;
    cpu.came_in_ns = time_ns;
  }

  // A switch away from a thread the record never showed coming onto this CPU (its switch in was
  // not written, and it left no line of its own there before): it ran there for an unknown time
  // before `time_ns`. On that kernel most such threads came from idle, woken onto an idle CPU,
  // and ran at once: ending the wait at this switch would count their whole run as waiting (an
  // H200 baseline then showed 166 ms runnable against 0.4 ms of the kernel's run delay). So no
  // runnable part is claimed: a woken wait ends at its wake-up, and a wait whose wake-up the
  // record lacks too is dropped, as nothing past its start is known.
  void seen_leaving(std::int32_t tid, std::int64_t time_ns, std::int32_t cpu_index, CpuState& cpu,
                    std::int64_t from_ns, std::vector<ThreadWait>& out) {
    if (tid <= 0 || cpu.running == tid) return;
    runnable_since_.erase(tid);
    if (auto open = open_.find(tid); open != open_.end()) {
      const std::int64_t woken_ns = open->second.runnable_from_ns;
      if (woken_ns >= 0)
        came_in(tid, woken_ns, cpu_index, from_ns, out, [&](ThreadWait& wait) {
          wait.given_back_by = GivenBackBy::other;
          wait.switch_unrecorded = true;
        });
      else
        open_.erase(open);
    }
    cpu.running = tid;
    cpu.came_in_ns = time_ns;
  }

  // `tid` is on `cpu_in` from `time_ns`: its runnable time and its open wait end there.
  template <typename Finish>
  void came_in(std::int32_t tid, std::int64_t time_ns, std::int32_t cpu_in, std::int64_t from_ns,
               std::vector<ThreadWait>& out, Finish&& finish) {
    if (auto since = runnable_since_.find(tid); since != runnable_since_.end()) {
      last_wait_ns_[tid] = time_ns - since->second;
      runnable_since_.erase(since);
    }
    auto open = open_.find(tid);
    if (open == open_.end()) return;
    ThreadWait wait = std::move(open->second);
    open_.erase(open);
    wait.on_ns = time_ns;
    wait.cpu_in = cpu_in;
    // A blocked wait whose wake-up the record lacks: no runnable part is claimed.
    if (wait.runnable_from_ns < 0) wait.runnable_from_ns = time_ns;
    finish(wait);
    wait.lost_events = record_.lost_events_by_cpu.count(wait.cpu_out) != 0 ||
                       record_.lost_events_by_cpu.count(wait.cpu_in) != 0;
    if (wait.on_ns >= from_ns) out.push_back(std::move(wait));
  }

  const SchedRecord& record_;
  const std::set<std::int32_t>& tids_;
  const WaitOptions& options_;
  std::unordered_map<std::int32_t, std::int32_t> tgid_of_;
  std::unordered_map<std::int32_t, std::string> names_;
  std::map<std::int32_t, CpuState> cpus_;
  std::unordered_map<std::int32_t, Syscall> syscalls_;
  std::unordered_map<std::int32_t, std::int64_t> runnable_since_;
  std::unordered_map<std::int32_t, std::int64_t> last_wait_ns_;
  std::unordered_map<std::int32_t, ThreadWait> open_;
};

std::int64_t overlap_ns(std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) {
  return std::max<std::int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

std::string ms(std::int64_t ns) { return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6); }

}  // namespace

std::string_view lost_phrase(LostBy lost_by) {
  switch (lost_by) {
    case LostBy::yielded:
      return "after it yielded";
    case LostBy::tick:
      return "after its slice ended at a tick";
    case LostBy::woken_thread:
      return "after a woken thread preempted it";
    case LostBy::interrupt:
      return "after an interrupt";
    case LostBy::own_call:
      return "after a system call of its own";
    case LostBy::blocked:
      return "after its wake-up";
  }
  return "";
}

std::string_view back_phrase(GivenBackBy by) {
  switch (by) {
    case GivenBackBy::tick:
      return "until the next tick";
    case GivenBackBy::wakeup_ipi:
      return "until a wake-up IPI";
    case GivenBackBy::holder_blocked:
      return "until the holder blocked";
    case GivenBackBy::holder_ended:
      return "until the holder ended";
    case GivenBackBy::holder_yielded:
      return "until the holder yielded";
    case GivenBackBy::idle_cpu:
      return "on an idle CPU";
    case GivenBackBy::other:
      return "until the holder's own call";
    case GivenBackBy::woke_preempting:
      return "until its wake-up preempted the holder";
  }
  return "";
}

bool is_background_thread_name(std::string_view comm) {
  return std::any_of(kBackgroundPrefixes.begin(), kBackgroundPrefixes.end(),
                     [&](std::string_view p) { return comm.starts_with(p); });
}

bool is_kernel_thread_name(std::string_view comm) {
  return std::any_of(kKernelPrefixes.begin(), kKernelPrefixes.end(),
                     [&](std::string_view p) { return comm.starts_with(p); });
}

std::int64_t ThreadWait::runnable_ns_in(std::int64_t from_ns, std::int64_t to_ns) const {
  return overlap_ns(runnable_from_ns, on_ns, from_ns, to_ns);
}

std::vector<ThreadWait> thread_waits(const SchedRecord& record, const std::set<std::int32_t>& tids,
                                     std::int64_t from_ns, std::int64_t to_ns,
                                     const WaitOptions& options) {
  return Walker(record, tids, options).run(from_ns, to_ns);
}

namespace {

// Adds what of `wait` lies in [from_ns, to_ns) to `totals`.
void add_wait(WaitTotals& totals, const ThreadWait& wait, std::int64_t from_ns,
              std::int64_t to_ns) {
  const std::int64_t runnable = wait.runnable_ns_in(from_ns, to_ns);
  totals.runnable_ns += runnable;
  switch (wait.holder_kind) {
    case ThreadKind::background:
      totals.to_background_ns += runnable;
      break;
    case ThreadKind::frame_thread:
      totals.to_frame_threads_ns += runnable;
      break;
    case ThreadKind::other_process:
      totals.to_other_processes_ns += runnable;
      break;
    case ThreadKind::kernel:
      totals.to_kernel_ns += runnable;
      break;
    case ThreadKind::idle:
      totals.wake_latency_ns += runnable;
      break;
  }
  const std::int64_t blocked = overlap_ns(wait.off_ns, wait.runnable_from_ns, from_ns, to_ns);
  totals.blocked_ns += blocked;
  if (wait.priority_inversion()) totals.blocked_on_background_ns += blocked;
  if (runnable > totals.longest_ns) {
    totals.longest_ns = runnable;
    totals.longest = &wait;
  }
}

}  // namespace

WaitIndex::WaitIndex(const std::vector<ThreadWait>& waits) {
  for (const ThreadWait& wait : waits) by_thread_[wait.tid].push_back(&wait);
  for (auto& [tid, list] : by_thread_)
    std::stable_sort(list.begin(), list.end(),
                     [](const ThreadWait* a, const ThreadWait* b) { return a->on_ns < b->on_ns; });
}

WaitTotals WaitIndex::totals(std::int32_t tid, std::int64_t from_ns, std::int64_t to_ns) const {
  WaitTotals totals;
  const auto it = by_thread_.find(tid);
  if (it == by_thread_.end()) return totals;
  const std::vector<const ThreadWait*>& list = it->second;
  // The first wait that ends at or after from_ns; one thread's waits do not overlap, so from
  // there on they begin in order too, and the first to begin at or after to_ns ends the walk.
  auto wait = std::lower_bound(list.begin(), list.end(), from_ns,
                               [](const ThreadWait* w, std::int64_t t) { return w->on_ns < t; });
  for (; wait != list.end() && (*wait)->off_ns < to_ns; ++wait)
    add_wait(totals, **wait, from_ns, to_ns);
  return totals;
}

std::string describe(const ThreadWait& wait) {
  std::string text;
  if (wait.lost_by == LostBy::blocked) {
    text = fmt::format("blocked {}, woken by {} ({})", ms(wait.runnable_from_ns - wait.off_ns),
                       wait.waker.empty() ? "?" : wait.waker,
                       name_of(kThreadKindNames, wait.waker_kind));
    if (wait.waker_waited_ns > 0)
      text += fmt::format(", which had waited {} for a CPU", ms(wait.waker_waited_ns));
    if (wait.runnable_ns() > 0)
      text +=
          fmt::format("; then runnable {} behind {} ({}) {}", ms(wait.runnable_ns()), wait.holder,
                      name_of(kThreadKindNames, wait.holder_kind), back_phrase(wait.given_back_by));
  } else {
    text = fmt::format("{} ({}) held its CPU {} {}, {}", wait.holder,
                       name_of(kThreadKindNames, wait.holder_kind), ms(wait.runnable_ns()),
                       lost_phrase(wait.lost_by), back_phrase(wait.given_back_by));
  }
  if (wait.cpu_in != wait.cpu_out) text += fmt::format(" (back on CPU {})", wait.cpu_in);
  if (wait.lost_events) text += " (the record lost events on its CPU)";
  return text;
}

}  // namespace gpuoverlap
