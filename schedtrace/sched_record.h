// The kernel's scheduling record of a run, as tracefs writes it in text (the `trace` file of an
// instance with record-tgid on and the mono_raw clock): every context switch, wake-up,
// migration, thread creation and exit, the interrupts that take a CPU from its task (the timer
// tick, the reschedule and function-call IPIs, device interrupts) and the few system calls that
// give a CPU up by their own call (sched_yield; thread creation).
//
// Contract: parse_sched_record never guesses over damage. A line it cannot read is counted,
// not dropped silently; a "[LOST n EVENTS]" marker is kept per CPU, so that an attribution over
// a CPU with lost events says so instead of inventing what happened there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuoverlap {

enum class SchedEventKind : std::uint8_t {
  switch_task,     // sched_switch: prev gives the CPU to next
  wakeup,          // sched_wakeup: subject becomes runnable on target_cpu
  wakeup_new,      // sched_wakeup_new: a new thread, first runnable on target_cpu
  migrate,         // sched_migrate_task: subject moves from orig_cpu to target_cpu
  fork,            // sched_process_fork: the line's task created subject
  exit,            // sched_process_exit: the line's task ends
  tick,            // local_timer_entry: the timer interrupt (the tick, or an hrtimer's expiry)
  reschedule_ipi,  // reschedule_entry: another CPU asked this one to reschedule
  function_ipi,  // call_function_entry / call_function_single_entry (a queued wake-up, a TLB flush)
  device_irq,    // irq_handler_entry: a device's interrupt
  syscall,       // sys_enter (filtered to kTracedSyscalls)
};

// x86-64 system call numbers the record keeps (sys_enter is filtered to these: every other call
// would fill the buffer).
inline constexpr int kSyscallSchedYield = 24;
inline constexpr int kSyscallClone = 56;
inline constexpr int kSyscallClone3 = 435;

struct SchedEvent {
  std::int64_t time_ns = 0;  // tracefs's mono_raw clock: CLOCK_MONOTONIC_RAW; ns from the binary
                             // record, µs where read from the `trace` text
  std::int32_t cpu = -1;
  std::int32_t tid = -1;      // the task the line names: the one running on `cpu`
  std::int32_t tgid = -1;     // its process; -1 where the record does not say
  bool in_interrupt = false;  // in a hard or soft interrupt: `tid` is only whom it came upon
  SchedEventKind kind = SchedEventKind::tick;
  std::string comm;  // the line's task's name
  // switch_task
  std::int32_t prev_tid = -1, next_tid = -1;
  std::int32_t prev_prio = -1, next_prio = -1;
  char prev_state = '?';  // R (runnable: preempted or yielded), S, D, I, X, Z, T, ...
  std::string prev_comm, next_comm;
  // wakeup, wakeup_new, migrate, fork: the thread it is about
  std::int32_t subject_tid = -1;
  std::string subject_comm;
  std::int32_t subject_prio = -1;
  std::int32_t target_cpu = -1;  // wakeup: where it will run; migrate: dest_cpu
  std::int32_t orig_cpu = -1;    // migrate
  // syscall
  std::int32_t syscall_nr = -1;
};

struct SchedRecord {
  std::vector<SchedEvent> events;  // in time order
  // "CPU:n [LOST k EVENTS]": the events the buffer dropped, per CPU.
  std::map<std::int32_t, std::int64_t> lost_events_by_cpu;
  std::int64_t unreadable_lines = 0;  // lines neither a comment, an event nor a lost marker
};

// The kind of a tracefs event by its name ("sched_switch"); none for events the record skips.
std::optional<SchedEventKind> sched_event_kind(std::string_view tracefs_name);
// The tracefs name of a kind (function_ipi: "call_function_entry").
std::string_view tracefs_event_name(SchedEventKind kind);

// The record in tracefs's text form (the `trace` file). Lines of events not listed above are
// skipped without counting (an instance may trace more); events are sorted by time.
SchedRecord parse_sched_record(std::string_view text);

}  // namespace gpuoverlap
