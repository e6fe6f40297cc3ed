// The kernel's record read in its binary form (schedtrace/raw_record.h): on records captured
// on this kind of machine (tests/data/sched/capture_raw.sh), against the `trace` text the
// kernel formatted from the same buffer, and on hand-built pages for each kind of entry a page
// can hold, lost events and damage included.
#include "schedtrace/raw_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include "core/gzip.h"
#include "schedtrace/sched_record.h"
#include "schedtrace/tracefs_recording.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(GPUOVERLAP_SOURCE_DIR) / "tests/data/sched";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The pages and the text are kept compressed (the tree's size limit).
std::string read_gz(const fs::path& path) {
  auto text = gzip_decompress(read_text(path), 64u << 20, path.string());
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : std::string();
}

// A captured record: its formats, pages, tgids and the kernel's text of the same events.
struct Capture {
  RawFormats formats;
  std::vector<RawCpuPages> cpus;
  std::unordered_map<std::int32_t, std::int32_t> tgid_of;
  std::unordered_map<std::int32_t, std::string> name_of;
  std::string text;
  std::map<std::int32_t, std::int64_t> overrun_by_cpu;
};

Capture load_capture(const fs::path& dir) {
  Capture c;
  const Status header = parse_header_page(read_text(dir / "events/header_page"), c.formats);
  EXPECT_TRUE(header) << header.error().message;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "events")) {
    if (entry.path().filename() != "format") continue;
    const std::string text = read_text(entry.path());
    auto format = parse_event_format(text);
    EXPECT_TRUE(format) << entry.path() << ": " << format.error().message;
    if (!format) continue;
    if (format->name == "sched_switch") c.formats.state_letters = parse_state_letters(text);
    c.formats.events.emplace(format->id, std::move(*format));
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("cpu") && name.ends_with(".raw.gz"))
      c.cpus.push_back(RawCpuPages{std::stoi(name.substr(3)), read_gz(entry.path())});
  }
  std::sort(c.cpus.begin(), c.cpus.end(),
            [](const RawCpuPages& a, const RawCpuPages& b) { return a.cpu < b.cpu; });
  c.tgid_of = parse_saved_tgids(read_text(dir / "saved_tgids"));
  c.name_of = parse_saved_cmdlines(read_text(dir / "saved_cmdlines"));
  c.text = read_gz(dir / "trace.txt.gz");
  std::istringstream overrun(read_text(dir / "overrun.txt"));
  std::int32_t cpu;
  std::int64_t count;
  while (overrun >> cpu >> count) c.overrun_by_cpu[cpu] = count;
  return c;
}

// What both forms say of an event; the text's stamps are microseconds, rounded to nearest.
std::int64_t microseconds(std::int64_t time_ns) { return (time_ns + 500) / 1000; }
auto key(const SchedEvent& e) {
  return std::make_tuple(microseconds(e.time_ns), e.cpu, static_cast<int>(e.kind), e.tid, e.tgid,
                         e.in_interrupt, e.prev_tid, e.prev_prio, e.prev_state, e.prev_comm,
                         e.next_tid, e.next_prio, e.next_comm, e.subject_tid, e.subject_comm,
                         e.subject_prio, e.target_cpu, e.orig_cpu, e.syscall_nr);
}

void expect_same_events_as_the_kernels_text(const fs::path& dir) {
  SCOPED_TRACE(dir.string());
  const Capture c = load_capture(dir);
  ASSERT_EQ(c.formats.page_bytes, 4096u);
  ASSERT_EQ(c.formats.data_offset, 16u);
  ASSERT_FALSE(c.cpus.empty());
  const SchedRecord raw = parse_raw_record(c.cpus, c.formats, c.tgid_of, c.name_of);
  const SchedRecord text = parse_sched_record(c.text);
  EXPECT_EQ(raw.unreadable_lines, 0);
  EXPECT_EQ(text.unreadable_lines, 0);
  ASSERT_GT(text.events.size(), 500u);
  ASSERT_EQ(raw.events.size(), text.events.size());
  std::vector<decltype(key(raw.events[0]))> raw_keys, text_keys;
  for (const SchedEvent& e : raw.events) raw_keys.push_back(key(e));
  for (const SchedEvent& e : text.events) text_keys.push_back(key(e));
  std::sort(raw_keys.begin(), raw_keys.end());
  std::sort(text_keys.begin(), text_keys.end());
  for (std::size_t i = 0; i < raw_keys.size(); ++i)
    ASSERT_EQ(raw_keys[i], text_keys[i]) << "event " << i;
  // Every kind the record reads is in the capture, so every field was compared somewhere.
  std::set<SchedEventKind> kinds;
  for (const SchedEvent& e : raw.events) kinds.insert(e.kind);
  for (const SchedEventKind kind :
       {SchedEventKind::switch_task, SchedEventKind::wakeup, SchedEventKind::wakeup_new,
        SchedEventKind::fork, SchedEventKind::exit, SchedEventKind::tick, SchedEventKind::syscall})
    EXPECT_TRUE(kinds.contains(kind)) << tracefs_event_name(kind);
  // The line's task's name: the kernel's text prints the name its cache holds when the text is
  // read (a child that ran exec has its new name all along); the reader the name the record
  // gave the thread then. They agree but for threads that ran exec (every name that differs
  // in these fixtures is python3 against true, or bash against python3).
  std::map<std::int32_t, std::set<std::string>> names;
  for (const SchedEvent& e : raw.events)
    if (e.kind == SchedEventKind::switch_task) {
      names[e.prev_tid].insert(e.prev_comm);
      names[e.next_tid].insert(e.next_comm);
    }
  std::size_t named = 0, same = 0;
  for (std::size_t i = 0; i < raw.events.size(); ++i) {
    const SchedEvent& r = raw.events[i];
    const SchedEvent& t = text.events[i];
    if (microseconds(t.time_ns) != microseconds(r.time_ns) || t.tid != r.tid ||
        names[r.tid].size() > 1)
      continue;
    ++named;
    same += t.comm == r.comm;
  }
  ASSERT_GT(named, raw.events.size() / 2);
  EXPECT_GE(same, named * 95 / 100) << same << " of " << named;
  // Lost events: a page that lost some says so; how many, the buffer's overrun count says (a
  // full page has no room to).
  for (const auto& [cpu, overrun] : c.overrun_by_cpu) {
    const auto lost = raw.lost_events_by_cpu.find(cpu);
    EXPECT_EQ(lost != raw.lost_events_by_cpu.end(), overrun > 0) << "cpu " << cpu;
    SchedTraceData data;
    data.cpus = c.cpus;
    data.formats = std::make_shared<RawFormats>(c.formats);
    if (overrun > 0) data.overrun_by_cpu[cpu] = overrun;
    const SchedRecord merged = data.parse();
    const auto merged_lost = merged.lost_events_by_cpu.find(cpu);
    EXPECT_EQ(merged_lost == merged.lost_events_by_cpu.end() ? 0 : merged_lost->second, overrun)
        << "cpu " << cpu;
  }
}

TEST(RawRecord, ReadsTheSameEventsAsTheKernelsTextAndReportsTheOverwrittenOnes) {
  const Capture c = load_capture(kFixtures / "raw-overrun");
  std::int64_t overrun = 0;
  for (const auto& [cpu, count] : c.overrun_by_cpu) overrun += count;
  ASSERT_GT(overrun, 0) << "the fixture is meant to have overwritten events";
  expect_same_events_as_the_kernels_text(kFixtures / "raw-overrun");
}

TEST(RawRecord, ReadsTheSameEventsAsTheKernelsTextOfARecordThatKeptEveryEvent) {
  const Capture c = load_capture(kFixtures / "raw-complete");
  for (const auto& [cpu, count] : c.overrun_by_cpu) ASSERT_EQ(count, 0) << "cpu " << cpu;
  expect_same_events_as_the_kernels_text(kFixtures / "raw-complete");
}

// Taken on the 16-CPU GPU machine (its kernel's formats), one CPU's buffer overwritten.
TEST(RawRecord, ReadsTheSameEventsAsTheKernelsTextOnTheGpuMachine) {
  const Capture c = load_capture(kFixtures / "raw-h200");
  EXPECT_EQ(c.cpus.size(), 16u);
  std::int64_t overrun = 0;
  for (const auto& [cpu, count] : c.overrun_by_cpu) overrun += count;
  ASSERT_GT(overrun, 0);
  expect_same_events_as_the_kernels_text(kFixtures / "raw-h200");
}

// The file form keeps nanoseconds: read back, it is the record that was written.
TEST(RawRecord, ItsTextFormReadsBackToTheSameEventsInNanoseconds) {
  const Capture c = load_capture(kFixtures / "raw-overrun");
  const SchedRecord raw = parse_raw_record(c.cpus, c.formats, c.tgid_of, c.name_of);
  const SchedRecord back = parse_sched_record(sched_record_text(raw));
  EXPECT_EQ(back.unreadable_lines, 0);
  EXPECT_EQ(back.lost_events_by_cpu, raw.lost_events_by_cpu);
  // Rendered in parts (side by side, in the results), the text is the same.
  const std::size_t n = raw.events.size();
  EXPECT_EQ(sched_record_text(raw, 0, n / 3) + sched_record_text(raw, n / 3, n / 2) +
                sched_record_text(raw, n / 2, n + 10),
            sched_record_text(raw));
  ASSERT_EQ(back.events.size(), raw.events.size());
  for (std::size_t i = 0; i < raw.events.size(); ++i) {
    const SchedEvent& a = raw.events[i];
    const SchedEvent& b = back.events[i];
    ASSERT_EQ(key(a), key(b)) << "event " << i;
    ASSERT_EQ(a.time_ns, b.time_ns) << "event " << i;
    ASSERT_EQ(a.comm, b.comm) << "event " << i;
  }
}

// Hand-built pages over the captured formats.
class RawPages : public ::testing::Test {
 protected:
  void SetUp() override {
    capture_ = load_capture(kFixtures / "raw-complete");
    for (const auto& [id, format] : capture_.formats.events) {
      if (format.name == "sched_switch") switch_ = &format;
      if (format.name == "local_timer_entry") tick_ = &format;
    }
    ASSERT_NE(switch_, nullptr);
    ASSERT_NE(tick_, nullptr);
  }

  // A page: its stamp, then `body` (the entries), commit = the body's length plus `flags`.
  std::string page(std::uint64_t time_ns, const std::string& body, std::uint64_t flags = 0,
                   std::int64_t stored_missed = -1) {
    std::string p(capture_.formats.page_bytes, '\0');
    std::memcpy(p.data(), &time_ns, 8);
    const std::uint64_t commit = body.size() | flags;
    std::memcpy(p.data() + capture_.formats.commit_offset, &commit, 8);
    std::memcpy(p.data() + capture_.formats.data_offset, body.data(), body.size());
    if (stored_missed >= 0)
      std::memcpy(p.data() + capture_.formats.data_offset + body.size(), &stored_missed, 8);
    return p;
  }
  static std::string u32(std::uint32_t v) { return std::string(reinterpret_cast<char*>(&v), 4); }
  static std::string header(std::uint32_t type_len, std::uint32_t delta) {
    return u32(type_len | (delta << 5));
  }
  // A timer tick of `tid`, data padded to a whole number of words.
  std::string tick_data(std::int32_t tid, std::uint8_t flags = 0) const {
    std::string data((tick_->min_bytes + 3) / 4 * 4, '\0');
    std::memcpy(data.data(), &tick_->id, 2);
    data[2] = static_cast<char>(flags);
    std::memcpy(data.data() + 4, &tid, 4);
    return data;
  }
  std::string tick(std::uint32_t delta, std::int32_t tid, std::uint8_t flags = 0) const {
    const std::string data = tick_data(tid, flags);
    return header(static_cast<std::uint32_t>(data.size() / 4), delta) + data;
  }
  std::string switch_data(std::int32_t prev, std::int32_t next, std::uint64_t state) const {
    std::string data((switch_->min_bytes + 3) / 4 * 4, '\0');
    const auto put = [&](const char* name, const void* value, std::size_t bytes) {
      const RawField& f = switch_->fields.at(name);
      std::memcpy(data.data() + f.offset, value, std::min<std::size_t>(bytes, f.size));
    };
    std::memcpy(data.data(), &switch_->id, 2);
    const std::int32_t prio = 120;
    put("common_pid", &prev, 4);
    put("prev_comm", "game", 4);
    put("prev_pid", &prev, 4);
    put("prev_prio", &prio, 4);
    put("prev_state", &state, 8);
    put("next_comm", "compile 0", 9);
    put("next_pid", &next, 4);
    put("next_prio", &prio, 4);
    return data;
  }
  SchedRecord read(const std::vector<std::string>& pages, std::int32_t cpu = 1) const {
    std::string all;
    for (const std::string& p : pages) all += p;
    return parse_raw_record({RawCpuPages{cpu, all}}, capture_.formats, {{100, 100}});
  }

  Capture capture_;
  const RawEventFormat* switch_ = nullptr;
  const RawEventFormat* tick_ = nullptr;
};

TEST_F(RawPages, EachKindOfEntryMovesTheClockAsTheKernelWroteIt) {
  // A long event (type_len 0: its length in the next word, that word counted) is a switch.
  const std::string sw = switch_data(100, 200, 0x100);  // preempted: "R+"
  std::string body = tick(10, 100);
  body += header(30, 5) + u32(2);  // a time extension: 5 + (2 << 27) ns
  body += header(0, 3) + u32(static_cast<std::uint32_t>(sw.size() + 4)) + sw;
  body += header(29, 7) + u32(12) + std::string(8, '\0');  // a discarded event: padding
  body += header(31, 1234) + u32(3);                       // an absolute stamp: 1234 + (3 << 27)
  body += tick(20, 200, 0x08);                             // in a hard interrupt
  body += header(29, 0);                                   // the rest of the page is padding
  body += tick(1, 300);                                    // after the padding: never read
  const SchedRecord r = read({page(1'000, body)});
  EXPECT_EQ(r.unreadable_lines, 0);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].kind, SchedEventKind::tick);
  EXPECT_EQ(r.events[0].time_ns, 1'010);
  EXPECT_EQ(r.events[0].tgid, 100);
  EXPECT_EQ(r.events[0].comm, "<...>");  // nothing named it yet
  const SchedEvent& s = r.events[1];
  EXPECT_EQ(s.kind, SchedEventKind::switch_task);
  EXPECT_EQ(s.time_ns, 1'010 + 5 + (std::int64_t{2} << 27) + 3);
  EXPECT_EQ(s.prev_tid, 100);
  EXPECT_EQ(s.next_tid, 200);
  EXPECT_EQ(s.prev_state, 'R');
  EXPECT_EQ(s.prev_comm, "game");
  EXPECT_EQ(s.next_comm, "compile 0");
  EXPECT_EQ(s.cpu, 1);
  const SchedEvent& t = r.events[2];
  EXPECT_EQ(t.time_ns, ((std::int64_t{3} << 27) | 1234) + 20);
  EXPECT_TRUE(t.in_interrupt);
  EXPECT_EQ(t.comm, "compile 0");  // the name the last switch gave it
  EXPECT_EQ(t.tgid, -1);           // saved_tgids does not know it
  EXPECT_TRUE(r.lost_events_by_cpu.empty());
}

// A discarded event (padding with a length) stays in the clock: the writer stamped the next
// event from its time.
TEST_F(RawPages, ADiscardedEventsDeltaCountsForTheNextEvent) {
  const SchedRecord r = read({page(
      1'000, tick(10, 100) + header(29, 7) + u32(12) + std::string(8, '\0') + tick(20, 100))});
  EXPECT_EQ(r.unreadable_lines, 0);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].time_ns, 1'010);
  EXPECT_EQ(r.events[1].time_ns, 1'010 + 7 + 20);
}

// A `__rel_loc` string's offset counts from the end of its own field; a `__data_loc` one's from
// the event's start.
TEST_F(RawPages, RelLocAndDataLocStringsAreReadFromTheirOwnOrigins) {
  const fs::path fork_format = kFixtures / "raw-complete/events/sched/sched_process_fork/format";
  std::string text = read_text(fork_format);
  const auto data_loc_format = parse_event_format(text);
  ASSERT_TRUE(data_loc_format) << data_loc_format.error().message;
  for (std::size_t at; (at = text.find("__data_loc")) != std::string::npos;)
    text.replace(at, 10, "__rel_loc");
  const auto rel_loc_format = parse_event_format(text);
  ASSERT_TRUE(rel_loc_format) << rel_loc_format.error().message;
  const RawField& child = rel_loc_format->fields.at("child_comm");
  ASSERT_TRUE(child.data_loc);
  ASSERT_TRUE(child.rel_loc);
  ASSERT_FALSE(data_loc_format->fields.at("child_comm").rel_loc);
  // One event: the parent's name "game", the child's "compile 3", both after the fixed fields.
  const auto event = [&](const RawEventFormat& format, bool rel) {
    const RawField& parent_field = format.fields.at("parent_comm");
    const RawField& child_field = format.fields.at("child_comm");
    const std::uint32_t strings_at = 24;
    std::string data(strings_at, '\0');
    data += std::string("game\0", 5) + std::string("compile 3\0", 10);
    data.resize((data.size() + 3) / 4 * 4, '\0');
    std::memcpy(data.data(), &format.id, 2);
    const std::int32_t parent = 100, child_tid = 101;
    std::memcpy(data.data() + 4, &parent, 4);
    std::memcpy(data.data() + format.fields.at("parent_pid").offset, &parent, 4);
    std::memcpy(data.data() + format.fields.at("child_pid").offset, &child_tid, 4);
    const auto put = [&](const RawField& f, std::uint32_t at, std::uint32_t bytes) {
      const std::uint32_t where = (bytes << 16) | (rel ? at - (f.offset + 4) : at);
      std::memcpy(data.data() + f.offset, &where, 4);
    };
    put(parent_field, strings_at, 5);
    put(child_field, strings_at + 5, 10);
    return header(static_cast<std::uint32_t>(data.size() / 4), 1) + data;
  };
  for (const bool rel : {false, true}) {
    RawFormats formats = capture_.formats;
    const RawEventFormat& format = rel ? *rel_loc_format : *data_loc_format;
    formats.events.erase(format.id);
    formats.events.emplace(format.id, format);
    const SchedRecord r =
        parse_raw_record({RawCpuPages{0, page(5, event(format, rel))}}, formats, {{100, 100}});
    ASSERT_EQ(r.events.size(), 1u) << (rel ? "__rel_loc" : "__data_loc");
    EXPECT_EQ(r.events[0].kind, SchedEventKind::fork);
    EXPECT_EQ(r.events[0].subject_comm, "compile 3") << (rel ? "__rel_loc" : "__data_loc");
    EXPECT_EQ(r.events[0].subject_tid, 101);
  }
}

TEST_F(RawPages, ASleepingTasksStateIsItsLetter) {
  const std::string sw = switch_data(100, 0, 0x01);
  const SchedRecord r =
      read({page(5, header(0, 1) + u32(static_cast<std::uint32_t>(sw.size() + 4)) + sw)});
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].prev_state, 'S');
}

TEST_F(RawPages, LostEventsAreCountedAsThePageSaysNotGuessed) {
  const SchedRecord r = read({page(1, tick(1, 100), 1ull << 31 | 1ull << 30, 42),
                              page(2, tick(1, 100), 1ull << 31),  // lost, count not kept
                              page(3, tick(1, 100))});
  EXPECT_EQ(r.unreadable_lines, 0);
  EXPECT_EQ(r.events.size(), 3u);
  ASSERT_EQ(r.lost_events_by_cpu.count(1), 1u);
  EXPECT_EQ(r.lost_events_by_cpu.at(1), 43);
  // A stored count no buffer could hold is damage: it counts one lost event and is reported.
  const SchedRecord damaged =
      read({page(1, tick(1, 100), 1ull << 31 | 1ull << 30, std::int64_t{1} << 40)});
  EXPECT_EQ(damaged.unreadable_lines, 1);
  EXPECT_EQ(damaged.lost_events_by_cpu.at(1), 1);
}

TEST_F(RawPages, DamageIsCountedAndTheRestOfThePageIsNotGuessedOver) {
  // An event shorter than its format, then a good one on the same page: the short one counts.
  const std::string short_switch = switch_data(100, 200, 0).substr(0, 32);
  std::string body = header(8, 1) + short_switch + tick(1, 100);
  // An entry that runs past the page's data: the rest of that page is not read.
  std::string cut = tick(1, 100);
  cut += header(0, 1) + u32(4000);
  // A page that says it holds more than a page can.
  std::string too_long = page(9, tick(1, 100));
  const std::uint64_t commit = 5000;
  std::memcpy(too_long.data() + capture_.formats.commit_offset, &commit, 8);
  // A padding entry whose length word would wrap a 32-bit sum (it once looped forever).
  const std::string wrap = tick(1, 100) + header(29, 1) + u32(0xFFFFFFFC) + tick(1, 100);
  const SchedRecord r = read({page(1, body), page(5, cut), too_long, page(7, wrap)});
  EXPECT_EQ(r.unreadable_lines, 4);
  EXPECT_EQ(r.events.size(), 3u);
  // A trailing part page (a read cut short) is not read as a page.
  const SchedRecord part = read({page(1, tick(1, 100)) + std::string(100, '\x7f')});
  EXPECT_EQ(part.events.size(), 1u);
  EXPECT_EQ(part.unreadable_lines, 0);
}

TEST_F(RawPages, CpusAreMergedByTimeAndEventsOfOtherIdsAreSkipped) {
  std::string other = tick_data(100);
  const std::uint16_t unknown_id = 65000;
  std::memcpy(other.data(), &unknown_id, 2);
  const std::string cpu0 = page(10, tick(5, 100) + tick(10, 100));
  const std::string cpu1 =
      page(12, header(static_cast<std::uint32_t>(other.size() / 4), 1) + other + tick(1, 200));
  const SchedRecord r =
      parse_raw_record({RawCpuPages{0, cpu0}, RawCpuPages{1, cpu1}}, capture_.formats, {});
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.unreadable_lines, 0);
  EXPECT_EQ(r.events[0].time_ns, 14);
  EXPECT_EQ(r.events[0].cpu, 1);
  EXPECT_EQ(r.events[1].time_ns, 15);
  EXPECT_EQ(r.events[2].time_ns, 25);
}

TEST(RawFormats, AFormatOrAPageLayoutLackingWhatTheReaderNeedsIsAnError) {
  const std::string good = read_text(kFixtures / "raw-complete/events/sched/sched_switch/format");
  auto format = parse_event_format(good);
  ASSERT_TRUE(format) << format.error().message;
  EXPECT_EQ(format->name, "sched_switch");
  EXPECT_EQ(format->min_bytes, 64u);  // next_prio at 60, 4 bytes
  std::string no_id = good;
  no_id.erase(no_id.find("ID:"), no_id.find('\n', no_id.find("ID:")) - no_id.find("ID:"));
  EXPECT_FALSE(parse_event_format(no_id));
  std::string no_pid = good;
  no_pid.replace(no_pid.find("common_pid"), 10, "common_xyz");
  const auto refused = parse_event_format(no_pid);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("common_pid"), std::string::npos)
      << refused.error().message;
  RawFormats formats;
  EXPECT_FALSE(
      parse_header_page("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n", formats));
  // The states' letters come from the print format; the kernel's table where it lists none.
  const auto letters = parse_state_letters(good);
  ASSERT_GE(letters.size(), 8u);
  EXPECT_EQ(letters[0], (std::pair<std::uint64_t, char>{0x01, 'S'}));
  EXPECT_EQ(parse_state_letters("print fmt: \"%d\"").size(), 8u);
}

}  // namespace
}  // namespace gpuoverlap
