// The kernel's scheduling record read from tracefs's binary per-CPU buffers (trace_pipe_raw),
// and written back in tracefs's text form.
//
// Why binary: the kernel formats the `trace` file's text as it is read, which took two thirds
// of the record's cost after the frames (about 16 ms per MB of text on a 2-core VM; a lavapipe
// game frame's record is several MB a second); the raw pages are copied out about fifteen times
// faster and carry nanosecond stamps where the text has microseconds. The layout of a page and
// of each event comes from the kernel's own format files (events/header_page, events/*/format),
// read once, so nothing here assumes a field's offset.
//
// A page (a ring buffer "sub-buffer"): a u64 timestamp, a commit word (the data's length in
// bytes; bit 31: events were lost before this page, bit 30: their count is stored after the
// data), then events. Each event starts with a u32: type_len (5 bits) and time_delta (27 bits).
// type_len 1..28: data of type_len * 4 bytes; 0: data whose length is the next u32 (that word
// included); 29: padding (time_delta 0: the rest of the page; else its length follows); 30: a
// time extension (the next u32 holds the delta's high bits); 31: an absolute timestamp.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "schedtrace/sched_record.h"

namespace gpuoverlap {

// Where a field lies in an event's data (its format file's offset and size). A `__data_loc`
// field (a string of its own length, as sched_process_fork's and, since Linux 6.10,
// sched_migrate_task's names are) holds a u32 there: the string's offset in the event's data in
// its low 16 bits, its length in the high 16. A `__rel_loc` field (kernels since 5.19 allow it)
// holds the same u32, but its offset counts from the end of that u32.
struct RawField {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  bool data_loc = false;
  bool rel_loc = false;  // with data_loc: the offset is from the end of the field
};

// The fields the record reads, by slot (RawEventFormat::slots).
enum class RawSlot : std::uint8_t {
  common_pid,
  common_flags,
  prev_comm,
  prev_pid,
  prev_prio,
  prev_state,
  next_comm,
  next_pid,
  next_prio,
  comm,
  pid,
  prio,
  target_cpu,
  orig_cpu,
  dest_cpu,
  child_comm,
  child_pid,
  id,
  count
};

// One traced event's format: its id (common_type), what the record calls it, and its fields.
struct RawEventFormat {
  std::uint16_t id = 0;
  std::string name;  // "sched_switch"
  std::map<std::string, RawField, std::less<>> fields;
  // The fields the record reads, looked up once (size 0: the event has no such field), and the
  // bytes an event's data must hold for all of them.
  std::array<RawField, static_cast<std::size_t>(RawSlot::count)> slots{};
  std::uint32_t min_bytes = 0;
};

// The page layout and the formats of the events read.
struct RawFormats {
  std::uint32_t data_offset = 16;  // where a page's events begin
  std::uint32_t commit_offset = 8;
  std::uint32_t page_bytes = 4096;
  std::unordered_map<std::uint16_t, RawEventFormat> events;  // by id
  // sched_switch's prev_state letters by bit ("S" for 0x1, ...), from its print format; a
  // state with none of these bits is "R".
  std::vector<std::pair<std::uint64_t, char>> state_letters;
};

// One event's format file (events/<system>/<event>/format); an error names what is missing.
Result<RawEventFormat> parse_event_format(std::string_view text);
// events/header_page: the page's layout. An error when a field the reader needs is missing.
Status parse_header_page(std::string_view text, RawFormats& formats);
// The letters of sched_switch's prev_state from its format file's print fmt
// ({ 0x00000001, "S" }, ...); the kernel's own table where the text lists none.
std::vector<std::pair<std::uint64_t, char>> parse_state_letters(std::string_view format_text);

// One CPU's pages, as read from per_cpu/cpuN/trace_pipe_raw.
struct RawCpuPages {
  std::int32_t cpu = -1;
  std::string pages;  // a whole number of pages of formats.page_bytes
};

// The events of every CPU's pages, in time order. `tgid_of` maps a thread to its process (the
// kernel's saved_tgids); a thread it lacks has tgid -1. The line's task is named as the record
// last named that thread (a switch, a wake-up, a migration, a fork), else by `name_of` (the
// kernel's saved_cmdlines: what the `trace` text would print), else "<...>". Events of ids not in
// `formats` are skipped; pages or events that do not fit their page count as unreadable; lost
// events are counted per CPU as the pages report them: a page that lost some but had no room to
// store how many counts 1, and a stored count of 2^31 or more is damage: it counts 1 and an
// unreadable line (SchedTraceData reports per CPU the larger of this and the buffer's own overrun
// count).
SchedRecord parse_raw_record(const std::vector<RawCpuPages>& cpus, const RawFormats& formats,
                             const std::unordered_map<std::int32_t, std::int32_t>& tgid_of,
                             const std::unordered_map<std::int32_t, std::string>& name_of = {});

// The kernel's saved_tgids text ("pid tgid" a line).
std::unordered_map<std::int32_t, std::int32_t> parse_saved_tgids(std::string_view text);
// The kernel's saved_cmdlines text ("pid comm" a line; a comm may hold spaces).
std::unordered_map<std::int32_t, std::string> parse_saved_cmdlines(std::string_view text);

// The record in tracefs's text form, one line per event and one "CPU:n [LOST k EVENTS]" line
// per CPU that lost events, nanosecond stamps: what parse_sched_record reads back to the same
// events (the results folder's sched_record.txt.gz).
std::string sched_record_text(const SchedRecord& record);
// The lines of events [first_event, end_event) alone, with the header lines where first_event
// is 0: the parts, in order, concatenate to sched_record_text(record), so that they can be
// rendered side by side.
std::string sched_record_text(const SchedRecord& record, std::size_t first_event,
                              std::size_t end_event);

}  // namespace gpuoverlap
