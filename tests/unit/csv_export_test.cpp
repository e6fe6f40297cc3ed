#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/csv_table.h"
#include "analysis/results.h"
#include "core/atomic_file.h"
#include "core/gzip.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"
#include "timeline/clock_agreement.h"
#include "timeline/export.h"
#include "timeline/record_row.h"
#include "timeline/trace_export.h"
#include "unit/temp_dir.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

Scenario csv_two_workloads() {
  auto s = parse_scenario(R"(name = "csv"
[queues.direct]
type = "direct"
[queues.async]
type = "compute"
priority = "high"
[[workload]]
name = "A, the first"
queue = "direct"
[[workload]]
name = "B"
queue = "direct"
kind = "graphics"
groups = 2
iterations = 7
depends_on = [{ workload = "A, the first", barrier = "split" }]
[[workload]]
name = "Q"
queue = "async"
)",
                          "t.toml");
  EXPECT_TRUE(s.ok()) << s.error().message;
  return *s;
}

ScenarioTimeline sample_timeline() {
  ScenarioTimeline t;
  for (std::uint32_t frame = 0; frame < 4; ++frame) {
    const double f = frame;
    t.records.push_back({.frame = frame,
                         .workload = 0,
                         .poll_start_us = 1.0 + f,
                         .poll_end_us = 11.0 + f,
                         .ts_start_us = 0.5 + f,
                         .ts_end_us = 11.5 + f});
    t.records.push_back(
        {.frame = frame, .workload = 1, .poll_start_us = 12.0 + f, .poll_end_us = 30.0 + f});
    t.records.push_back({.frame = frame,
                         .workload = 2,
                         .poll_start_us = 2.0,
                         .poll_end_us = frame == 3 ? std::optional<double>{} : 5.0,
                         .status = frame == 3 ? RecordStatus::timeout : RecordStatus::ok});
  }
  return t;
}

using CsvExport = TempDir;

TEST_F(CsvExport, RecordsRoundTripThroughFastCppCsvParser) {
  const Scenario s = csv_two_workloads();
  ASSERT_TRUE(write_scenario_results(dir_, s, sample_timeline(), {{"k", 1}}).ok());
  const auto table = read_csv((dir_ / "records.csv.gz").string(), kRecordColumns);
  ASSERT_EQ(table.rows.size(), 12u);
  EXPECT_EQ(table.at(0, "workload"), "A, the first");  // quoted comma survives
  EXPECT_EQ(table.at(0, "queue_type"), "direct");
  EXPECT_EQ(table.at(0, "barrier"), "none");
  EXPECT_EQ(table.at(1, "depends_on"), "A, the first");
  EXPECT_EQ(table.at(1, "barrier"), "split-event");  // kind and split policy
  EXPECT_EQ(table.at(1, "kind"), "graphics");
  EXPECT_EQ(table.at(1, "groups"), "2");
  EXPECT_EQ(table.at(1, "iterations"), "7");
  EXPECT_EQ(table.at(2, "priority"), "high");
  EXPECT_EQ(table.at(2, "queue_type"), "compute");
  EXPECT_DOUBLE_EQ(*table.number(3, "poll_start_us"), 2.0);
  EXPECT_DOUBLE_EQ(*table.number(3, "ts_end_us"), 12.5);
  EXPECT_FALSE(table.number(1, "ts_start_us").has_value());  // unavailable clock: empty
  EXPECT_EQ(table.at(11, "status"), "timeout");
  EXPECT_FALSE(table.number(11, "poll_end_us").has_value());
  EXPECT_FALSE(table.number(0, "clk_start_us").has_value());  // no shader clock recorded
  EXPECT_EQ(table.at(0, "flags"), "");
}

// One row type from the writer to the readers: every record of a preset with draws into a
// texture and copies reads back from records.csv.gz as the row record_row() made of it, the
// columns that do not apply (a target draw's groups, a copy's groups and iterations) empty.
TEST_F(CsvExport, EveryRecordReadsBackAsTheRowItWasWrittenFrom) {
  auto s = resolve_scenario("readback-legacy");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ScenarioTimeline t;
  for (std::uint32_t frame = 0; frame < 2; ++frame)
    for (std::size_t w = 0; w < s->workloads.size(); ++w)
      t.records.push_back(
          {.frame = frame,
           .workload = w,
           .poll_start_us = 1.125 * static_cast<double>(w + frame),
           .poll_end_us = 9.5 + static_cast<double>(w),
           .ts_start_us = w == 1 ? std::optional<double>{} : 0.25,
           .ts_end_us = w == 1 ? std::optional<double>{} : 9.0,
           .disagreements = w == 2 ? 1u : 0u,
           .status = frame == 1 && w == 0 ? RecordStatus::timeout : RecordStatus::ok,
           .frame_t0_us = 1000.0 * frame,
           .variant = w == 3 ? 4u : 0u});
  ASSERT_TRUE(write_scenario_results(dir_, *s, t, {}).ok());
  const auto read = load_scenario_results(dir_);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->records.size(), t.records.size());
  for (std::size_t i = 0; i < t.records.size(); ++i)
    EXPECT_TRUE(read->records[i] == record_row(*s, t.records[i])) << "record " << i;
  for (const RecordRow& row : read->records) {
    const WorkloadSpec& w =
        *std::find_if(s->workloads.begin(), s->workloads.end(),
                      [&](const WorkloadSpec& x) { return x.name == row.workload; });
    EXPECT_EQ(row.groups.has_value(), !w.target && w.kind != WorkloadKind::copy) << row.workload;
    EXPECT_EQ(row.iterations.has_value(), w.kind != WorkloadKind::copy) << row.workload;
    EXPECT_EQ(row.priority, s->queues[w.queue].priority) << row.workload;
  }
  EXPECT_EQ(read->records[2].flags, disagreement_names(1u));
  EXPECT_EQ(read->records[3].variant, 4u);
}

TEST_F(CsvExport, ShaderClockColumnsFlagsAndFlaggedRowCounts) {
  const Scenario s = csv_two_workloads();
  ScenarioTimeline t = sample_timeline();
  t.records[0].clk_start_us = 1.25;
  t.records[0].clk_end_us = 40.0;  // 28.5 µs after the timestamp end: beyond 10 µs
  ASSERT_EQ(flag_disagreements(t, {}), 1u);
  ASSERT_TRUE(write_scenario_results(dir_, s, t, {}).ok());
  const auto records = read_csv((dir_ / "records.csv.gz").string(), kRecordColumns);
  EXPECT_DOUBLE_EQ(*records.number(0, "clk_start_us"), 1.25);
  EXPECT_EQ(records.at(0, "flags"), "end:poll-clk;end:ts-clk");
  EXPECT_EQ(records.at(3, "flags"), "");
  const auto summary = read_csv((dir_ / "summary.csv").string(), kSummaryColumns);
  // A: poll, ts and (one frame of) clk rows, each saying A has one flagged row.
  ASSERT_EQ(summary.at(2, "clock"), "clk");
  EXPECT_EQ(summary.at(2, "frames"), "1");
  for (std::size_t row = 0; row < 3; ++row) EXPECT_EQ(summary.at(row, "flagged_rows"), "1");
  EXPECT_EQ(summary.at(3, "flagged_rows"), "0");
}

TEST_F(CsvExport, SummaryHasPercentilesPerClockAndSkipsBadRows) {
  const Scenario s = csv_two_workloads();
  const auto rows = summarize(s, sample_timeline());
  // A: poll + ts; B: poll only (no ts values); Q: poll only, 3 ok frames.
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].clock, Clock::poll);
  EXPECT_EQ(rows[0].frames, 4u);
  EXPECT_DOUBLE_EQ(*rows[0].start_us[1], 2.5);  // p50 of 1,2,3,4
  EXPECT_DOUBLE_EQ(*rows[0].duration_us[1], 10.0);
  EXPECT_EQ(rows[1].clock, Clock::ts);
  EXPECT_DOUBLE_EQ(*rows[1].duration_us[0], 11.0);
  EXPECT_EQ(rows[3].workload, 2u);
  EXPECT_EQ(rows[3].frames, 3u);  // the timeout row is excluded

  ASSERT_TRUE(write_scenario_results(dir_, s, sample_timeline(), {}).ok());
  const auto table = read_csv((dir_ / "summary.csv").string(), kSummaryColumns);
  ASSERT_EQ(table.rows.size(), 4u);
  EXPECT_EQ(table.at(0, "workload"), "A, the first");
  EXPECT_DOUBLE_EQ(*table.number(0, "duration_p50_us"), 10.0);
  EXPECT_EQ(table.at(3, "frames"), "3");
}

TEST_F(CsvExport, WritesMetaJsonAndLeavesNoTemporaryFiles) {
  const Scenario s = csv_two_workloads();
  ASSERT_TRUE(
      write_scenario_results(dir_, s, sample_timeline(), {{"device", {{"name", "x"}}}}).ok());
  std::ifstream meta(dir_ / "meta.json");
  EXPECT_EQ(nlohmann::json::parse(meta)["device"]["name"], "x");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"dependencies.csv", "frames.csv", "meta.json", "overlap.csv",
                                      "records.csv.gz", "summary.csv", "trace.json.gz"}));
}

// The kernel record's lanes are written to the trace as text, not through the JSON DOM: the
// file still parses as one object, a thread name the kernel cut inside a UTF-8 character or
// one with quotes reads back (the bad byte replaced), times keep the nanosecond, a wait's words
// ride in its slice, and the queues' slices are there beside them.
TEST(ChromeTrace, KernelLanesAreValidJsonBesideTheQueues) {
  const Scenario s = csv_two_workloads();
  ScenarioTimeline t = sample_timeline();
  t.sched_recorded = true;
  t.sched_cpu_slices = {
      {.cpu = 3,
       .start_us = 10.0,
       .end_us = 10.982,
       .thread = "say \"hi\"\\",
       .kind = "frame's thread"},
      {.cpu = 0, .start_us = 1.5, .end_us = 2.25, .thread = "caf\xc3", .kind = "another process"}};
  t.sched_waits = {{.thread = "frame loop",
                    .off_us = 4,
                    .on_us = 9,
                    .runnable_us = 2,
                    .cpu_out = 1,
                    .cpu_in = 2,
                    .blocked = true,
                    .text = "woken by \"poller\""},
                   {.thread = "frame loop",
                    .off_us = 12,
                    .on_us = 13,
                    .cpu_out = 2,
                    .cpu_in = 2,
                    .text = "preempted"}};
  const auto trace = nlohmann::json::parse(chrome_trace(s, t, {{"device", {{"name", "x"}}}}));
  EXPECT_EQ(trace["otherData"]["device"]["name"], "x");
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  std::map<std::string, int> slices_by_category;
  std::vector<nlohmann::json> cpu_slices;
  std::string woken_wait;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices_by_category[e["cat"].get<std::string>()];
    if (e["pid"] == 4) cpu_slices.push_back(e);  // queues 1-2, background 3, CPUs 4
    if (e["name"] == "Runnable (woken)") woken_wait = e["args"]["wait"];
  }
  EXPECT_EQ(slices_by_category["compute"], 7);  // A's 4 frames and Q's 3 ok ones
  EXPECT_EQ(slices_by_category["sleeping"], 1);
  EXPECT_EQ(slices_by_category["runnable"], 2);
  EXPECT_EQ(slices_by_category["running"], 1);  // from its first wait's end to the next
  ASSERT_EQ(cpu_slices.size(), 2u);
  EXPECT_EQ(cpu_slices[0]["name"], "say \"hi\"\\");
  EXPECT_EQ(cpu_slices[0]["tid"], 4);
  EXPECT_DOUBLE_EQ(cpu_slices[0]["dur"].get<double>(), 0.982);
  EXPECT_EQ(cpu_slices[1]["name"], "caf\xef\xbf\xbd");  // U+FFFD for the cut byte
  EXPECT_DOUBLE_EQ(cpu_slices[1]["ts"].get<double>(), 1.5);
  EXPECT_EQ(woken_wait, "woken by \"poller\"");
}

TEST_F(CsvExport, CsvFieldQuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}

using AtomicFile = TempDir;

TEST_F(AtomicFile, ReplacesWholeFilesAndReportsFailures) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "x.txt";
  ASSERT_TRUE(write_file_atomically(file, "first").ok());
  ASSERT_TRUE(write_file_atomically(file, "second").ok());
  std::ifstream in(file);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "second");
  auto failed = write_file_atomically(dir_ / "missing-dir" / "y.txt", "z");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("cannot create"), std::string::npos);
}

}  // namespace
}  // namespace gpuoverlap

namespace gpuoverlap {
namespace {

// trace.json.gz is a gzip member (magic 1f 8b, deflate) that round-trips through zlib: what
// gunzip, Python's gzip and the Perfetto UI read.
TEST(Gzip, CompressesToAGzipMemberThatInflatesBack) {
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += "{\"name\":\"Compute A\",\"ph\":\"X\",\"ts\":" + std::to_string(i) + "},";
  const auto packed = gzip_compress(text);
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  ASSERT_GE(packed->size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>((*packed)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*packed)[1]), 0x8b);
  EXPECT_EQ((*packed)[2], 8);  // deflate
  EXPECT_LT(packed->size(), text.size() / 5);
  z_stream stream{};
  ASSERT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string back(text.size() + 16, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed->data()));
  stream.avail_in = static_cast<uInt>(packed->size());
  stream.next_out = reinterpret_cast<Bytef*>(back.data());
  stream.avail_out = static_cast<uInt>(back.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  back.resize(stream.total_out);
  inflateEnd(&stream);
  EXPECT_EQ(back, text);
  // The empty text is a valid member too.
  const auto empty = gzip_compress("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(static_cast<unsigned char>((*empty)[0]), 0x1f);
}

// Parts deflated side by side make one member of their concatenation, which zlib inflates with
// its checksum and length checked; a single part, empty parts and none at all are members too.
TEST(Gzip, PartsCompressedOnThreadsInflateBackAsOneText) {
  std::vector<std::string> parts;
  for (int p = 0; p < 5; ++p) {
    std::string part;
    for (int i = 0; i < 3000 * (p + 1); ++i)
      part += "  gpuoverlap-100 [00" + std::to_string(p) + "] 10." + std::to_string(i) + "\n";
    parts.push_back(std::move(part));
  }
  parts.insert(parts.begin() + 2, std::string());  // an empty part in the middle
  std::string whole;
  for (const std::string& p : parts) whole += p;
  for (const std::size_t threads : {std::size_t{1}, std::size_t{3}, std::size_t{16}}) {
    const auto packed = gzip_compress_parts(parts, GzipEffort::fast, threads);
    ASSERT_TRUE(packed.ok()) << packed.error().message;
    EXPECT_LT(packed->size(), whole.size() / 5);
    const auto back = gzip_decompress(*packed, 1ull << 30, "parts");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, whole) << threads << " threads";
  }
  const auto one = gzip_compress_parts({whole}, GzipEffort::small, 4);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*gzip_decompress(*one, 1ull << 30, "one part"), whole);
  const auto none = gzip_compress_parts({}, GzipEffort::fast, 4);
  ASSERT_TRUE(none.ok());
  const auto nothing = gzip_decompress(*none, 1 << 20, "no parts");
  ASSERT_TRUE(nothing.ok()) << nothing.error().message;
  EXPECT_TRUE(nothing->empty());
  // A damaged checksum is refused: the trailer is the parts' combined CRC, not a placeholder.
  std::string damaged = *one;
  damaged[damaged.size() - 8] = static_cast<char>(damaged[damaged.size() - 8] ^ 1);
  EXPECT_FALSE(gzip_decompress(damaged, 1ull << 30, "damaged").ok());
}

}  // namespace
}  // namespace gpuoverlap
