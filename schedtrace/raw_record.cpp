#include "schedtrace/raw_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

#include "schedtrace/text_fields.h"

namespace gpuoverlap {

namespace {

constexpr std::uint32_t kTypePadding = 29;
constexpr std::uint32_t kTypeTimeExtend = 30;
constexpr std::uint32_t kTypeTimeStamp = 31;
constexpr std::uint64_t kMissedEvents = 1ull << 31;
constexpr std::uint64_t kMissedStored = 1ull << 30;
constexpr std::uint64_t kCommitLengthMask = kMissedStored - 1;
// The most events a page may say were lost before it (a stored count past it is damage).
constexpr std::uint64_t kMostMissedEvents = (1ull << 31) - 1;
// An absolute timestamp holds the low 59 bits; the rest are the running stamp's.
constexpr std::uint64_t kTimeStampMask = (1ull << 59) - 1;
// common_flags: in a hard or a soft interrupt (the text's 'h', 's' and 'H').
constexpr std::uint8_t kFlagHardIrq = 0x08;
constexpr std::uint8_t kFlagSoftIrq = 0x10;

using tracefs_text::for_each_line;
using tracefs_text::number;
using tracefs_text::trim;

// The value of "key:value;" in a format line's field list.
std::optional<std::uint32_t> attribute(std::string_view line, std::string_view key) {
  const std::size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t from = at + key.size();
  const std::size_t end = line.find(';', from);
  if (end == std::string_view::npos) return std::nullopt;
  return number<std::uint32_t>(trim(line.substr(from, end - from)));
}

// "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;" -> prev_comm at 8, 16 bytes.
std::optional<std::pair<std::string, RawField>> field_line(std::string_view line) {
  line = trim(line);
  if (!line.starts_with("field:")) return std::nullopt;
  const std::size_t declaration_end = line.find(';');
  if (declaration_end == std::string_view::npos) return std::nullopt;
  std::string_view declaration = trim(line.substr(6, declaration_end - 6));
  const bool rel_loc = declaration.starts_with("__rel_loc");
  const bool data_loc = rel_loc || declaration.starts_with("__data_loc");
  // The name is the last word, less an array's bounds ("char prev_comm[16]"; a __data_loc's
  // "char[] comm" has them on its type).
  const std::size_t name_at = declaration.find_last_of(" \t*");
  std::string_view name =
      name_at == std::string_view::npos ? declaration : declaration.substr(name_at + 1);
  name = name.substr(0, name.find('['));
  const auto offset = attribute(line, "offset:");
  const auto size = attribute(line, "size:");
  if (name.empty() || !offset || !size) return std::nullopt;
  if (data_loc && *size != 4) return std::nullopt;
  return std::pair{std::string(name), RawField{*offset, *size, data_loc, rel_loc}};
}

// Little-endian reads, bounded by the caller.
std::uint32_t read_u32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
std::uint64_t read_u64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One event's data and its format: fields by slot, -1 or "" where the format lacks one (or a
// string's place lies outside the event).
// Contract: `bytes` >= format.min_bytes.
class EventData {
 public:
  EventData(const unsigned char* data, std::size_t bytes, const RawEventFormat& format)
      : data_(data), bytes_(bytes), format_(format) {}
  std::int64_t integer(RawSlot slot) const {
    const RawField& f = format_.slots[static_cast<std::size_t>(slot)];
    const unsigned char* p = data_ + f.offset;
    switch (f.size) {
      case 1:
        return static_cast<std::int8_t>(p[0]);
      case 2: {
        std::int16_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
      }
      case 4: {
        std::int32_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
      }
      case 8: {
        std::int64_t v;
        std::memcpy(&v, p, sizeof v);
        return v;
      }
      default:
        return -1;
    }
  }
  std::int32_t int32(RawSlot slot) const { return static_cast<std::int32_t>(integer(slot)); }
  std::uint8_t flags() const {
    const RawField& f = format_.slots[static_cast<std::size_t>(RawSlot::common_flags)];
    return f.size == 0 ? 0 : data_[f.offset];
  }
  std::string text(RawSlot slot) const {
    const RawField& f = format_.slots[static_cast<std::size_t>(slot)];
    std::size_t at = f.offset;
    std::size_t size = f.size;
    if (f.data_loc) {
      const std::uint32_t where = read_u32(data_ + f.offset);
      at = (where & 0xffff) + (f.rel_loc ? f.offset + 4 : 0);
      size = where >> 16;
      if (at + size > bytes_) return {};
    }
    const char* p = reinterpret_cast<const char*>(data_ + at);
    return std::string(p, strnlen(p, size));
  }

 private:
  const unsigned char* data_;
  std::size_t bytes_;
  const RawEventFormat& format_;
};

constexpr std::pair<RawSlot, std::string_view> kSlotNames[] = {
    {RawSlot::common_pid, "common_pid"},
    {RawSlot::common_flags, "common_flags"},
    {RawSlot::prev_comm, "prev_comm"},
    {RawSlot::prev_pid, "prev_pid"},
    {RawSlot::prev_prio, "prev_prio"},
    {RawSlot::prev_state, "prev_state"},
    {RawSlot::next_comm, "next_comm"},
    {RawSlot::next_pid, "next_pid"},
    {RawSlot::next_prio, "next_prio"},
    {RawSlot::comm, "comm"},
    {RawSlot::pid, "pid"},
    {RawSlot::prio, "prio"},
    {RawSlot::target_cpu, "target_cpu"},
    {RawSlot::orig_cpu, "orig_cpu"},
    {RawSlot::dest_cpu, "dest_cpu"},
    {RawSlot::child_comm, "child_comm"},
    {RawSlot::child_pid, "child_pid"},
    {RawSlot::id, "id"}};

char state_letter(std::uint64_t state, const RawFormats& formats) {
  for (const auto& [bit, letter] : formats.state_letters)
    if (state & bit) return letter;
  return 'R';
}

// Fills `e` from one event's data; false when its format is not one the record reads or its
// data is shorter than the format says.
bool fill_event(const EventData& data, const RawEventFormat& format, const RawFormats& formats,
                SchedEvent& e) {
  const auto kind = sched_event_kind(format.name);
  if (!kind) return false;
  e.kind = *kind;
  e.tid = data.int32(RawSlot::common_pid);
  e.in_interrupt = (data.flags() & (kFlagHardIrq | kFlagSoftIrq)) != 0;
  switch (e.kind) {
    case SchedEventKind::switch_task:
      e.prev_comm = data.text(RawSlot::prev_comm);
      e.prev_tid = data.int32(RawSlot::prev_pid);
      e.prev_prio = data.int32(RawSlot::prev_prio);
      e.prev_state =
          state_letter(static_cast<std::uint64_t>(data.integer(RawSlot::prev_state)), formats);
      e.next_comm = data.text(RawSlot::next_comm);
      e.next_tid = data.int32(RawSlot::next_pid);
      e.next_prio = data.int32(RawSlot::next_prio);
      break;
    case SchedEventKind::wakeup:
    case SchedEventKind::wakeup_new:
    case SchedEventKind::migrate:
      e.subject_comm = data.text(RawSlot::comm);
      e.subject_tid = data.int32(RawSlot::pid);
      e.subject_prio = data.int32(RawSlot::prio);
      e.target_cpu = e.kind == SchedEventKind::migrate ? data.int32(RawSlot::dest_cpu)
                                                       : data.int32(RawSlot::target_cpu);
      if (e.kind == SchedEventKind::migrate) e.orig_cpu = data.int32(RawSlot::orig_cpu);
      break;
    case SchedEventKind::fork:
      e.subject_comm = data.text(RawSlot::child_comm);
      e.subject_tid = data.int32(RawSlot::child_pid);
      break;
    case SchedEventKind::syscall:
      e.syscall_nr = data.int32(RawSlot::id);
      break;
    default:
      break;
  }
  return true;
}

// The events of one CPU's pages, in its order, appended to `out`.
void read_cpu_pages(const RawCpuPages& cpu, const RawFormats& formats, SchedRecord& out) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(cpu.pages.data());
  const std::size_t page_bytes = formats.page_bytes;
  for (std::size_t page = 0; page + page_bytes <= cpu.pages.size(); page += page_bytes) {
    const unsigned char* p = bytes + page;
    std::uint64_t time_ns = read_u64(p);
    const std::uint64_t commit = read_u64(p + formats.commit_offset);
    const std::size_t length = commit & kCommitLengthMask;
    if (formats.data_offset + length > page_bytes) {
      ++out.unreadable_lines;  // a page that says it holds more than it can
      continue;
    }
    const unsigned char* data = p + formats.data_offset;
    if (commit & kMissedEvents) {
      std::int64_t missed = 1;  // at least one, where the count was not kept
      if ((commit & kMissedStored) && formats.data_offset + length + 8 <= page_bytes) {
        // Events overwritten since the last read: past 2^31 - 1 no record of seconds reaches,
        // so a damaged count, not a guess.
        const std::uint64_t stored = read_u64(data + length);
        if (stored <= kMostMissedEvents)
          missed = static_cast<std::int64_t>(stored);
        else
          ++out.unreadable_lines;
      }
      out.lost_events_by_cpu[cpu.cpu] += missed;
    }
    std::size_t at = 0;
    while (at + 4 <= length) {
      const std::uint32_t header = read_u32(data + at);
      const std::uint32_t type_len = header & 31;
      const std::uint32_t delta = header >> 5;
      if (type_len == kTypePadding) {
        if (delta == 0) break;  // the rest of the page is padding
        if (at + 8 > length) break;
        // Its length word counts itself; 64-bit, so a damaged one cannot wrap back.
        const std::size_t skip = std::size_t{4} + read_u32(data + at + 4);
        if (skip < 8 || at + skip > length) {
          ++out.unreadable_lines;
          break;
        }
        at += skip;
        // A discarded event: the writer stamped the next event from this one's time, so its
        // delta counts (the kernel's own reader, rb_update_read_stamp, skips it, and its `trace`
        // text can then run early by this delta after a discard; libtraceevent adds it).
        time_ns += delta;
        continue;
      }
      if (type_len == kTypeTimeExtend || type_len == kTypeTimeStamp) {
        if (at + 8 > length) {
          ++out.unreadable_lines;
          break;
        }
        // An absolute stamp replaces the low 59 bits; the kernel's reader (rb_fix_abs_ts) also
        // carries into bit 59 when they wrapped, which a raw monotonic clock does not reach.
        const std::uint64_t value = (std::uint64_t{read_u32(data + at + 4)} << 27) | delta;
        time_ns =
            type_len == kTypeTimeExtend ? time_ns + value : (time_ns & ~kTimeStampMask) | value;
        at += 8;
        continue;
      }
      std::size_t event_at = at + 4;
      std::uint32_t event_bytes = type_len * 4;
      std::size_t next = at + 4 + event_bytes;
      if (type_len == 0) {
        if (at + 8 > length) {
          ++out.unreadable_lines;
          break;
        }
        const std::uint32_t counted = read_u32(data + at + 4);  // its own word included
        event_at = at + 8;
        event_bytes = counted >= 4 ? counted - 4 : 0;
        next = at + 4 + counted;
      }
      if (next > length || event_bytes < 8) {
        ++out.unreadable_lines;
        break;
      }
      time_ns += delta;
      at = next;
      const unsigned char* event = data + event_at;
      std::uint16_t id;
      std::memcpy(&id, event, sizeof id);
      const auto format = formats.events.find(id);
      if (format == formats.events.end()) continue;  // an event the instance also traced
      if (event_bytes < format->second.min_bytes) {
        ++out.unreadable_lines;
        continue;
      }
      const EventData fields(event, event_bytes, format->second);
      SchedEvent& e = out.events.emplace_back();
      e.time_ns = static_cast<std::int64_t>(time_ns);
      e.cpu = cpu.cpu;
      if (!fill_event(fields, format->second, formats, e)) out.events.pop_back();
    }
  }
}

}  // namespace

Result<RawEventFormat> parse_event_format(std::string_view text) {
  RawEventFormat format;
  bool has_id = false;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.starts_with("name:")) format.name = std::string(trim(line.substr(5)));
    if (line.starts_with("ID:")) {
      const auto id = number<std::uint16_t>(trim(line.substr(3)));
      if (!id) return make_error("an event format's ID is not a number: " + std::string(line));
      format.id = *id;
      has_id = true;
    }
    if (auto f = field_line(line)) format.fields.insert(std::move(*f));
  }
  if (format.name.empty() || !has_id) return make_error("an event format without a name or an ID");
  for (const char* common : {"common_type", "common_flags", "common_pid"})
    if (!format.fields.contains(common))
      return make_error(fmt::format("event format {} lacks {}", format.name, common));
  for (const auto& [slot, name] : kSlotNames)
    if (const auto it = format.fields.find(name); it != format.fields.end()) {
      format.slots[static_cast<std::size_t>(slot)] = it->second;
      format.min_bytes = std::max(format.min_bytes, it->second.offset + it->second.size);
    }
  return format;
}

Status parse_header_page(std::string_view text, RawFormats& formats) {
  std::map<std::string, RawField, std::less<>> fields;
  for_each_line(text, [&](std::string_view line) {
    if (auto f = field_line(line)) fields.insert(std::move(*f));
  });
  const auto commit = fields.find("commit");
  const auto data = fields.find("data");
  if (commit == fields.end() || data == fields.end() || commit->second.size != 8)
    return make_error("events/header_page lacks an 8-byte commit or the data field");
  if (data->second.size == 0 || commit->second.offset + 8 > data->second.offset)
    return make_error("events/header_page's commit field overlaps its data, or its data is empty");
  formats.commit_offset = commit->second.offset;
  formats.data_offset = data->second.offset;
  formats.page_bytes = data->second.offset + data->second.size;
  return ok_status();
}

std::vector<std::pair<std::uint64_t, char>> parse_state_letters(std::string_view format_text) {
  std::vector<std::pair<std::uint64_t, char>> letters;
  const std::size_t print = format_text.find("print fmt:");
  std::size_t at = print == std::string_view::npos ? format_text.size() : print;
  // { 0x00000001, "S" }
  while ((at = format_text.find("{ 0x", at)) != std::string_view::npos) {
    const std::size_t comma = format_text.find(',', at);
    const std::size_t quote = format_text.find('"', at);
    if (comma == std::string_view::npos || quote == std::string_view::npos ||
        quote + 1 >= format_text.size())
      break;
    const auto bit = number<std::uint64_t>(trim(format_text.substr(at + 4, comma - at - 4)), 16);
    if (bit && *bit != 0) letters.emplace_back(*bit, format_text[quote + 1]);
    at = quote + 1;
  }
  if (letters.empty())  // TASK_REPORT's states since Linux 4.14
    letters = {{0x01, 'S'}, {0x02, 'D'}, {0x04, 'T'}, {0x08, 't'},
               {0x10, 'X'}, {0x20, 'Z'}, {0x40, 'P'}, {0x80, 'I'}};
  return letters;
}

std::unordered_map<std::int32_t, std::int32_t> parse_saved_tgids(std::string_view text) {
  std::unordered_map<std::int32_t, std::int32_t> tgid_of;
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return;
    const auto pid = number<std::int32_t>(line.substr(0, space));
    const auto tgid = number<std::int32_t>(trim(line.substr(space + 1)));
    if (pid && tgid) tgid_of[*pid] = *tgid;
  });
  return tgid_of;
}

std::unordered_map<std::int32_t, std::string> parse_saved_cmdlines(std::string_view text) {
  std::unordered_map<std::int32_t, std::string> name_of;
  for_each_line(text, [&](std::string_view line) {
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return;
    if (const auto pid = number<std::int32_t>(line.substr(0, space)))
      name_of[*pid] = std::string(line.substr(space + 1));
  });
  return name_of;
}

SchedRecord parse_raw_record(const std::vector<RawCpuPages>& cpus, const RawFormats& formats,
                             const std::unordered_map<std::int32_t, std::int32_t>& tgid_of,
                             const std::unordered_map<std::int32_t, std::string>& name_of) {
  SchedRecord record;
  std::size_t bytes = 0;
  for (const RawCpuPages& cpu : cpus) bytes += cpu.pages.size();
  record.events.reserve(bytes / 48);  // a sched_switch takes 68 bytes, a tick 12
  for (const RawCpuPages& cpu : cpus) read_cpu_pages(cpu, formats, record);
  // Each CPU's events are in order; merged by time, a CPU's own order kept on a tie.
  const auto earlier = [](const SchedEvent& a, const SchedEvent& b) {
    return a.time_ns < b.time_ns;
  };
  if (!std::is_sorted(record.events.begin(), record.events.end(), earlier))
    std::stable_sort(record.events.begin(), record.events.end(), earlier);
  // The line's task: a switch names it; otherwise the name the record last gave that thread
  // (not the name of the task the CPU last switched to: the kernel does not write every switch).
  std::unordered_map<std::int32_t, std::string> comm_of;
  for (SchedEvent& e : record.events) {
    if (const auto it = tgid_of.find(e.tid); it != tgid_of.end()) e.tgid = it->second;
    switch (e.kind) {
      case SchedEventKind::switch_task:
        e.comm = e.tid == 0 ? "<idle>" : e.prev_comm;  // as the kernel's text names it
        comm_of[e.prev_tid] = e.prev_comm;
        comm_of[e.next_tid] = e.next_comm;
        continue;
      case SchedEventKind::wakeup:
      case SchedEventKind::wakeup_new:
      case SchedEventKind::migrate:
      case SchedEventKind::fork:
        comm_of[e.subject_tid] = e.subject_comm;
        break;
      default:
        break;
    }
    if (e.tid == 0) {
      e.comm = "<idle>";
    } else if (const auto known = comm_of.find(e.tid); known != comm_of.end()) {
      e.comm = known->second;
    } else if (const auto saved = name_of.find(e.tid); saved != name_of.end()) {
      e.comm = saved->second;
    } else {
      e.comm = "<...>";
    }
  }
  return record;
}

std::string sched_record_text(const SchedRecord& record) {
  return sched_record_text(record, 0, record.events.size());
}

std::string sched_record_text(const SchedRecord& record, std::size_t first_event,
                              std::size_t end_event) {
  end_event = std::min(end_event, record.events.size());
  first_event = std::min(first_event, end_event);
  std::string text;
  text.reserve((end_event - first_event) * 110);
  if (first_event == 0) {
    text += "# tracer: nop\n#\n# gpuoverlap: the kernel's scheduling record, from trace_pipe_raw\n";
    for (const auto& [cpu, lost] : record.lost_events_by_cpu)
      text += fmt::format("CPU:{} [LOST {} EVENTS]\n", cpu, lost);
  }
  auto out = std::back_inserter(text);
  for (std::size_t i = first_event; i < end_event; ++i) {
    const SchedEvent& e = record.events[i];
    const std::string_view comm =
        e.tid == 0 ? std::string_view("<idle>") : std::string_view(e.comm);
    const std::int64_t seconds = e.time_ns / 1'000'000'000;
    const std::int64_t nanos = e.time_ns % 1'000'000'000;
    if (e.tgid >= 0)
      fmt::format_to(out, "{:>16}-{:<7} ({:>7}) [{:03}] {} {}.{:09}: {}: ", comm, e.tid, e.tgid,
                     e.cpu, e.in_interrupt ? "..h.." : ".....", seconds, nanos,
                     tracefs_event_name(e.kind));
    else
      fmt::format_to(out, "{:>16}-{:<7} (-------) [{:03}] {} {}.{:09}: {}: ", comm, e.tid, e.cpu,
                     e.in_interrupt ? "..h.." : ".....", seconds, nanos,
                     tracefs_event_name(e.kind));
    switch (e.kind) {
      case SchedEventKind::switch_task:
        fmt::format_to(out,
                       "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} "
                       "next_pid={} next_prio={}\n",
                       e.prev_comm, e.prev_tid, e.prev_prio, e.prev_state, e.next_comm, e.next_tid,
                       e.next_prio);
        break;
      case SchedEventKind::wakeup:
      case SchedEventKind::wakeup_new:
        fmt::format_to(out, "comm={} pid={} prio={} target_cpu={:03}\n", e.subject_comm,
                       e.subject_tid, e.subject_prio, e.target_cpu);
        break;
      case SchedEventKind::migrate:
        fmt::format_to(out, "comm={} pid={} prio={} orig_cpu={} dest_cpu={}\n", e.subject_comm,
                       e.subject_tid, e.subject_prio, e.orig_cpu, e.target_cpu);
        break;
      case SchedEventKind::fork:
        fmt::format_to(out, "comm={} pid={} child_comm={} child_pid={}\n", e.comm, e.tid,
                       e.subject_comm, e.subject_tid);
        break;
      case SchedEventKind::syscall:
        fmt::format_to(out, "NR {} (0, 0, 0, 0, 0, 0)\n", e.syscall_nr);
        break;
      default:
        text += "\n";
        break;
    }
  }
  return text;
}

}  // namespace gpuoverlap
