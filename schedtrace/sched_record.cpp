#include "schedtrace/sched_record.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "schedtrace/text_fields.h"

namespace gpuoverlap {

namespace {

using tracefs_text::number;
using tracefs_text::trim;

// `key=value` of an event's body; values hold no spaces except comm values, which sched_switch
// alone needs whole (they are read by position there).
std::optional<std::string_view> field(std::string_view body, std::string_view key) {
  std::size_t at = 0;
  while ((at = body.find(key, at)) != std::string_view::npos) {
    const bool starts_word = at == 0 || body[at - 1] == ' ';
    const std::size_t value_at = at + key.size();
    if (starts_word && value_at < body.size() && body[value_at] == '=') {
      const std::size_t end = body.find(' ', value_at + 1);
      return body.substr(value_at + 1, end == std::string_view::npos ? std::string_view::npos
                                                                     : end - value_at - 1);
    }
    at = value_at;
  }
  return std::nullopt;
}

std::int32_t field_int(std::string_view body, std::string_view key) {
  const auto text = field(body, key);
  if (!text) return -1;
  return number<std::int32_t>(*text).value_or(-1);
}

// A comm value that may hold spaces ("compile 0"): from `key=` to the next " <word>=" of
// `next_key`.
std::string comm_field(std::string_view body, std::string_view key, std::string_view next_key) {
  const std::string prefix = std::string(key) + "=";
  std::size_t at = body.find(prefix);
  while (at != std::string_view::npos && at != 0 && body[at - 1] != ' ')
    at = body.find(prefix, at + 1);
  if (at == std::string_view::npos) return {};
  const std::size_t value_at = at + prefix.size();
  const std::size_t end = body.find(" " + std::string(next_key) + "=", value_at);
  return std::string(body.substr(
      value_at, end == std::string_view::npos ? std::string_view::npos : end - value_at));
}

// "CPU:3 [LOST 120 EVENTS]"
bool lost_marker(std::string_view line, SchedRecord& record) {
  line = trim(line);
  if (!line.starts_with("CPU:")) return false;
  const std::size_t space = line.find(' ');
  const std::size_t lost = line.find("[LOST ");
  if (space == std::string_view::npos || lost == std::string_view::npos) return false;
  const auto cpu = number<std::int32_t>(line.substr(4, space - 4));
  const std::size_t count_at = lost + 6;
  const std::size_t count_end = line.find(' ', count_at);
  if (!cpu || count_end == std::string_view::npos) return false;
  const auto count = number<std::int64_t>(line.substr(count_at, count_end - count_at));
  if (!count) return false;
  record.lost_events_by_cpu[*cpu] += *count;
  return true;
}

// One event line:
// "   comm-123     (  100) [001] d..2. 1234.567890: sched_switch: prev_comm=..."
// The comm may hold spaces and dashes: the task's id is the number after the last '-' before
// the "(tgid)" column.
enum class LineRead { event, skipped, unreadable };

// `e` is a default SchedEvent, filled in place.
LineRead parse_line(std::string_view line, SchedEvent& e) {
  const std::size_t open = line.find(" (");
  const std::size_t cpu_open = line.find(") [");
  if (open == std::string_view::npos || cpu_open == std::string_view::npos || cpu_open < open)
    return LineRead::unreadable;
  const std::string_view task = trim(line.substr(0, open));
  const std::size_t dash = task.rfind('-');
  if (dash == std::string_view::npos) return LineRead::unreadable;
  const auto tid = number<std::int32_t>(task.substr(dash + 1));
  if (!tid) return LineRead::unreadable;
  const std::string_view tgid_text = trim(line.substr(open + 2, cpu_open - open - 2));
  const std::size_t cpu_close = line.find(']', cpu_open + 3);
  if (cpu_close == std::string_view::npos) return LineRead::unreadable;
  const auto cpu = number<std::int32_t>(line.substr(cpu_open + 3, cpu_close - cpu_open - 3));
  if (!cpu) return LineRead::unreadable;
  std::string_view rest = trim(line.substr(cpu_close + 1));
  const std::size_t flags_end = rest.find(' ');
  if (flags_end == std::string_view::npos) return LineRead::unreadable;
  const std::string_view flags = rest.substr(0, flags_end);
  rest = trim(rest.substr(flags_end));
  const std::size_t ts_end = rest.find(": ");
  if (ts_end == std::string_view::npos) return LineRead::unreadable;
  const std::string_view ts = rest.substr(0, ts_end);
  const std::size_t dot = ts.find('.');
  if (dot == std::string_view::npos) return LineRead::unreadable;
  const auto seconds = number<std::int64_t>(ts.substr(0, dot));
  std::string fraction(ts.substr(dot + 1));
  if (!seconds || fraction.empty() || fraction.size() > 9) return LineRead::unreadable;
  fraction.resize(9, '0');
  const auto nanos = number<std::int64_t>(fraction);
  if (!nanos) return LineRead::unreadable;
  rest = rest.substr(ts_end + 2);
  const std::size_t name_end = rest.find(':');
  if (name_end == std::string_view::npos) return LineRead::unreadable;
  const auto kind = sched_event_kind(rest.substr(0, name_end));
  if (!kind) return LineRead::skipped;
  const std::string_view body = trim(rest.substr(name_end + 1));

  e.time_ns = *seconds * 1'000'000'000 + *nanos;
  e.cpu = *cpu;
  e.tid = *tid;
  e.tgid = number<std::int32_t>(tgid_text).value_or(-1);
  e.comm = std::string(task.substr(0, dash));
  e.kind = *kind;
  // The flags' third letter: h (hard interrupt), s (soft), H (hard inside soft).
  e.in_interrupt = flags.size() > 2 && (flags[2] == 'h' || flags[2] == 's' || flags[2] == 'H');
  switch (e.kind) {
    case SchedEventKind::switch_task: {
      const std::size_t arrow = body.find(" ==> ");
      if (arrow == std::string_view::npos) return LineRead::unreadable;
      const std::string_view left = body.substr(0, arrow);
      const std::string_view right = body.substr(arrow + 5);
      e.prev_comm = comm_field(left, "prev_comm", "prev_pid");
      e.prev_tid = field_int(left, "prev_pid");
      e.prev_prio = field_int(left, "prev_prio");
      const auto state = field(left, "prev_state");
      e.prev_state = state && !state->empty() ? state->front() : '?';
      e.next_comm = comm_field(right, "next_comm", "next_pid");
      e.next_tid = field_int(right, "next_pid");
      e.next_prio = field_int(right, "next_prio");
      if (e.prev_tid < 0 || e.next_tid < 0) return LineRead::unreadable;
      break;
    }
    case SchedEventKind::wakeup:
    case SchedEventKind::wakeup_new:
      e.subject_comm = comm_field(body, "comm", "pid");
      e.subject_tid = field_int(body, "pid");
      e.subject_prio = field_int(body, "prio");
      e.target_cpu = field_int(body, "target_cpu");
      if (e.subject_tid < 0 || e.target_cpu < 0) return LineRead::unreadable;
      break;
    case SchedEventKind::migrate:
      e.subject_comm = comm_field(body, "comm", "pid");
      e.subject_tid = field_int(body, "pid");
      e.subject_prio = field_int(body, "prio");
      e.orig_cpu = field_int(body, "orig_cpu");
      e.target_cpu = field_int(body, "dest_cpu");
      if (e.subject_tid < 0) return LineRead::unreadable;
      break;
    case SchedEventKind::fork:
      e.subject_comm = comm_field(body, "child_comm", "child_pid");
      e.subject_tid = field_int(body, "child_pid");
      if (e.subject_tid < 0) return LineRead::unreadable;
      break;
    case SchedEventKind::syscall: {
      // "NR 24 (0, 0, ...)"
      if (!body.starts_with("NR ")) return LineRead::unreadable;
      const std::size_t end = body.find(' ', 3);
      const auto nr = number<std::int32_t>(
          body.substr(3, end == std::string_view::npos ? std::string_view::npos : end - 3));
      if (!nr) return LineRead::unreadable;
      e.syscall_nr = *nr;
      break;
    }
    default:
      break;
  }
  return LineRead::event;
}

}  // namespace

std::optional<SchedEventKind> sched_event_kind(std::string_view name) {
  if (name == "sched_switch") return SchedEventKind::switch_task;
  if (name == "sched_wakeup") return SchedEventKind::wakeup;
  if (name == "sched_wakeup_new") return SchedEventKind::wakeup_new;
  if (name == "sched_migrate_task") return SchedEventKind::migrate;
  if (name == "sched_process_fork") return SchedEventKind::fork;
  if (name == "sched_process_exit") return SchedEventKind::exit;
  if (name == "local_timer_entry") return SchedEventKind::tick;
  if (name == "reschedule_entry") return SchedEventKind::reschedule_ipi;
  if (name == "call_function_entry" || name == "call_function_single_entry")
    return SchedEventKind::function_ipi;
  if (name == "irq_handler_entry") return SchedEventKind::device_irq;
  if (name == "sys_enter") return SchedEventKind::syscall;
  return std::nullopt;
}

std::string_view tracefs_event_name(SchedEventKind kind) {
  switch (kind) {
    case SchedEventKind::switch_task:
      return "sched_switch";
    case SchedEventKind::wakeup:
      return "sched_wakeup";
    case SchedEventKind::wakeup_new:
      return "sched_wakeup_new";
    case SchedEventKind::migrate:
      return "sched_migrate_task";
    case SchedEventKind::fork:
      return "sched_process_fork";
    case SchedEventKind::exit:
      return "sched_process_exit";
    case SchedEventKind::tick:
      return "local_timer_entry";
    case SchedEventKind::reschedule_ipi:
      return "reschedule_entry";
    case SchedEventKind::function_ipi:
      return "call_function_entry";
    case SchedEventKind::device_irq:
      return "irq_handler_entry";
    case SchedEventKind::syscall:
      return "sys_enter";
  }
  return "unknown";
}

SchedRecord parse_sched_record(std::string_view text) {
  SchedRecord record;
  // One event a line at most: reserved once, so that the events are parsed in place and never
  // moved (a record of a second on 16 CPUs holds hundreds of thousands).
  record.events.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (trim(line).empty() || line.front() == '#') continue;
    if (lost_marker(line, record)) continue;
    SchedEvent& event = record.events.emplace_back();
    const LineRead read = parse_line(line, event);
    if (read != LineRead::event) record.events.pop_back();
    if (read == LineRead::unreadable) ++record.unreadable_lines;
  }
  // The `trace` file merges the CPUs' buffers by time already (so the sort is mostly skipped);
  // a stable sort keeps each CPU's order where two events share a microsecond.
  const auto earlier = [](const SchedEvent& a, const SchedEvent& b) {
    return a.time_ns < b.time_ns;
  };
  if (!std::is_sorted(record.events.begin(), record.events.end(), earlier))
    std::stable_sort(record.events.begin(), record.events.end(), earlier);
  return record;
}

}  // namespace gpuoverlap
