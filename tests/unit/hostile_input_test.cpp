// Each defect a hostile user found, as a test that failed before its fix. Input
// from outside (scenario files, results folders, output paths) is untrusted: it must give one
// line naming the file and the reason, never a crash, a hang or a write outside its place.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "core/atomic_file.h"
#include "core/gzip.h"
#include "core/input_file.h"
#include "core/output_directory.h"
#include "scenarios/names.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"
#include "timeline/export.h"
#include "unit/temp_dir.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

class Hostile : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    fs::create_directories(dir_);
  }
  static void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
};

// --- writing ---------------------------------------------------------------------------------

TEST_F(Hostile, AtomicWriteNeverWritesThroughAPlantedSymlink) {
  const fs::path victim = dir_ / "victim.txt";
  write(victim, "precious");
  const fs::path target = dir_ / "report.md";
  // The old, predictable temporary name: a link there must not be followed.
  fs::create_symlink(victim, target.string() + ".tmp-" + std::to_string(::getpid()));
  ASSERT_TRUE(write_file_atomically(target, "report").ok());
  EXPECT_EQ(read(target), "report");
  EXPECT_EQ(read(victim), "precious");
  // A link at the target itself is refused, and what it points to is untouched.
  const fs::path link = dir_ / "link.md";
  fs::create_symlink(victim, link);
  const Status refused = write_file_atomically(link, "overwritten?");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("symbolic link"), std::string::npos);
  EXPECT_EQ(read(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(link));
  // No temporary is left behind by either write.
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-X"), std::string::npos);
}

TEST_F(Hostile, AtomicWriteRefusesFifosDevicesAndDirectories) {
  const fs::path fifo = dir_ / "fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status to_fifo = write_file_atomically(fifo, "x");
  ASSERT_FALSE(to_fifo.ok());
  EXPECT_NE(to_fifo.error().message.find("FIFO"), std::string::npos);
  EXPECT_FALSE(write_file_atomically("/dev/null", "x").ok());  // as root, rename would win
  EXPECT_TRUE(fs::exists("/dev/null"));
  EXPECT_FALSE(write_file_atomically(dir_, "x").ok());
  EXPECT_FALSE(check_output_file(fifo).ok());
  EXPECT_TRUE(check_output_file(dir_ / "new.csv").ok());
}

TEST_F(Hostile, WrittenFilesAreReadableByOthers) {
  const fs::path file = dir_ / "x.csv";
  ASSERT_TRUE(write_file_atomically(file, "a").ok());
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

// --- reading ---------------------------------------------------------------------------------

TEST_F(Hostile, InputFilesAreRegularSizeLimitedAndErrorsNameTheReason) {
  const fs::path fifo = dir_ / "scenario.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Would block forever in open() without O_NONBLOCK; here it returns at once.
  auto from_fifo = read_input_file(fifo, 1024);
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_NE(from_fifo.error().message.find("is a FIFO"), std::string::npos);
  auto from_directory = read_input_file(dir_, 1024);
  ASSERT_FALSE(from_directory.ok());
  EXPECT_NE(from_directory.error().message.find("is a directory"), std::string::npos);
  auto missing = read_input_file(dir_ / "missing.toml", 1024);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file or directory"), std::string::npos);
  const fs::path big = dir_ / "big.toml";
  write(big, std::string(2048, '#'));
  auto too_big = read_input_file(big, 1024);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error().message.find("larger than the limit"), std::string::npos);
  EXPECT_EQ(read_input_file(big, 4096).value().size(), 2048u);
}

TEST_F(Hostile, ScenarioFilesOverTheLimitAndFifosAreRefusedByName) {
  const fs::path big = dir_ / "huge.toml";
  {
    std::ofstream out(big);
    out.seekp(static_cast<std::streamoff>(kMaxScenarioFileBytes) + 1);
    out << '#';  // sparse: no megabyte written, but the size is over the limit
  }
  auto refused = resolve_scenarios(big.string());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("larger than the limit"), std::string::npos);
  const fs::path fifo = dir_ / "f.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = resolve_scenarios(fifo.string());
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_NE(from_fifo.error().message.find("is a FIFO"), std::string::npos);
}

// --- the parser's numbers --------------------------------------------------------------------

std::string preemption_file(const std::string& period) {
  return "name = \"p\"\n[preemption]\nload = \"big-dispatch\"\npriority = \"high\"\n"
         "period_ms = " +
         period + "\n";
}

TEST(HostileNumbers, IntegersBeyondADoubleOrTheRangeAreRejectedNotMisread) {
  // 2^53 + 1 has no exact double (toml++ then gives no double at all: was a crash), and
  // INT64_MIN was accepted as a 100 ms period.
  for (const char* period : {"9007199254740993", "-9223372036854775808", "9223372036854775807",
                             "1e308", "-0.0", "inf", "nan"}) {
    auto s = parse_preemption(preemption_file(period), "p.toml");
    ASSERT_FALSE(s.ok()) << period;
    EXPECT_NE(s.error().message.find("p.toml:5:"), std::string::npos)
        << period << ": " << s.error().message;
  }
  auto whole = parse_preemption(preemption_file("20"), "p.toml");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_DOUBLE_EQ(whole->front().preemption->period_ms, 20.0);
}

// --- names -----------------------------------------------------------------------------------

std::string scenario_named(const std::string& scenario, const std::string& queue,
                           const std::string& workload) {
  nlohmann::json quoted_queue = queue, quoted_workload = workload, quoted_name = scenario;
  // JSON string escapes are valid TOML basic-string escapes for these characters.
  return "name = " + quoted_name.dump() + "\n[queues." + quoted_queue.dump() +
         "]\ntype = \"direct\"\n[[workload]]\nname = " + quoted_workload.dump() +
         "\nqueue = " + quoted_queue.dump() + "\n";
}

TEST(HostileNames, TheRuleRefusesWhatWouldBreakAFileNameACsvOrAList) {
  for (const std::string& bad : {std::string("a\nb"), std::string("a\rb"), std::string("a\tb"),
                                 std::string("a\x01"), std::string("a;b"), std::string(" lead"),
                                 std::string("trail "), std::string(65, 'w'), std::string()}) {
    auto as_workload = parse_scenario(scenario_named("s", "q", bad), "w.toml");
    EXPECT_FALSE(as_workload.ok()) << nlohmann::json(bad).dump();
    auto as_queue = parse_scenario(scenario_named("s", bad, "w"), "q.toml");
    EXPECT_FALSE(as_queue.ok()) << nlohmann::json(bad).dump();
    if (!as_queue.ok()) {  // the message stays one line whatever the name holds
      EXPECT_EQ(as_queue.error().message.find('\n'), std::string::npos);
      EXPECT_EQ(as_queue.error().message.find('\r'), std::string::npos);
    }
  }
  for (const std::string& bad :
       {std::string("plots"), std::string("PLOTS"), std::string("run.json"),
        std::string("report.md"), std::string(256, 'n'), std::string("../x"),
        std::string(".hidden"), std::string("a b"), std::string("a;b")}) {
    auto s = parse_scenario(scenario_named(bad, "q", "w"), "s.toml");
    EXPECT_FALSE(s.ok()) << bad;
  }
  EXPECT_TRUE(directory_name_problem(std::string(64, 'n')).empty());
  EXPECT_FALSE(directory_name_problem(std::string(65, 'n')).empty());
  EXPECT_EQ(printable_name("a\nb"), "a\\x0ab");
}

// Every edge case the rule allows goes through records.csv and comes back unchanged, and a
// dependency between two such names survives the ';'-joined list.
TEST_F(Hostile, EveryAllowedNameRoundTripsThroughTheCsv) {
  const std::vector<std::string> names = {
      "A, the first", "say \"hi\"", "two  spaces",        "ünïcødé ✓",
      "pipe|name",    "x",          std::string(64, 'L'), "'single'",
      "#hash",        "=eq",        "trailing,comma,",    "\"\"",
      "a\\b"};
  std::string toml = "name = \"names\"\n[queues.\"queue, \\\"quoted\\\" ✓\"]\ntype = \"direct\"\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    toml += "[[workload]]\nname = " + nlohmann::json(names[i]).dump() +
            "\nqueue = \"queue, \\\"quoted\\\" ✓\"\n";
    if (i > 0) toml += "depends_on = [" + nlohmann::json(names[i - 1]).dump() + "]\n";
  }
  auto s = parse_scenario(toml, "names.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ScenarioTimeline t;
  for (std::uint32_t w = 0; w < names.size(); ++w)
    t.records.push_back(
        {.frame = 0, .workload = w, .poll_start_us = 10.0 * w, .poll_end_us = 10.0 * w + 5});
  ASSERT_TRUE(write_scenario_results(dir_, *s, t, {{"scenario", {{"name", "names"}}}}).ok());
  auto loaded = load_scenario_results(dir_);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->records.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(loaded->records[i].workload, names[i]);
    EXPECT_EQ(loaded->records[i].queue, "queue, \"quoted\" ✓");
    EXPECT_EQ(loaded->records[i].depends_on, i > 0 ? names[i - 1] : "");
  }
  // The gap of every dependency is found again: the list split back into its names.
  std::size_t gaps = 0;
  for (const MetricSeries& m : metric_series(*loaded, Clock::poll))
    if (m.metric == "gap") ++gaps;
  EXPECT_EQ(gaps, names.size() - 1);
}

// --- results folders -------------------------------------------------------------------------

// A valid one-scenario results folder written by the exporter, to damage.
class DamagedResults : public Hostile {
 protected:
  void SetUp() override {
    Hostile::SetUp();
    auto s = parse_scenario(
        "name = \"s\"\n[queues.d]\ntype = \"direct\"\n[[workload]]\nname = \"A\"\nqueue = "
        "\"d\"\n[[workload]]\nname = \"B\"\nqueue = \"d\"\ndepends_on = [\"A\"]\n",
        "s.toml");
    ASSERT_TRUE(s.ok()) << s.error().message;
    ScenarioTimeline t;
    for (std::uint32_t f = 0; f < 3; ++f) {
      t.records.push_back({.frame = f, .workload = 0, .poll_start_us = 1, .poll_end_us = 5});
      t.records.push_back({.frame = f, .workload = 1, .poll_start_us = 6, .poll_end_us = 9});
    }
    scenario_ = dir_ / "run" / "s";
    ASSERT_TRUE(write_scenario_results(scenario_, *s, t, {{"scenario", {{"name", "s"}}}}).ok());
    write(dir_ / "run" / "run.json", R"({"scenarios": [{"directory": "s"}]})");
    ASSERT_TRUE(load_results(dir_ / "run").ok());
  }
  // Loading fails with an error naming `file` and containing `reason`; report and compare
  // are never reached with it.
  void expect_refused(const std::string& file, const std::string& reason) {
    auto loaded = load_results(dir_ / "run");
    ASSERT_FALSE(loaded.ok()) << file;
    EXPECT_NE(loaded.error().message.find(file), std::string::npos) << loaded.error().message;
    EXPECT_NE(loaded.error().message.find(reason), std::string::npos) << loaded.error().message;
    EXPECT_EQ(loaded.error().message.find('\n'), std::string::npos);
  }
  // records.csv.gz as text, and back: the damage below is to the table, not to the gzip.
  std::string records_text() const {
    auto text = gzip_decompress(read(scenario_ / "records.csv.gz"), 1u << 30, "records");
    EXPECT_TRUE(text.ok()) << text.error().message;
    return text.ok() ? *text : std::string();
  }
  void write_records(const std::string& text) const {
    write(scenario_ / "records.csv.gz", gzip_compress(text).value());
  }
  fs::path scenario_;
};

TEST_F(DamagedResults, WrongShapedRunJsonIsAnErrorNotAnAbort) {
  for (const char* text :
       {R"({"scenarios": "default"})", R"({"scenarios": [{"directory": 7}]})",
        R"({"scenarios": [3]})", R"([1, 2])", R"("run")", R"({"failure": "text"})"}) {
    write(dir_ / "run" / "run.json", text);
    auto loaded = load_results(dir_ / "run");
    EXPECT_FALSE(loaded.ok()) << text;
    if (!loaded.ok()) {
      EXPECT_NE(loaded.error().message.find("run.json"), std::string::npos);
    }
  }
  write(dir_ / "run" / "run.json", R"({"scenarios": [{"directory": "../../etc"}]})");
  expect_refused("run.json", "leaves the results directory");
  write(dir_ / "run" / "run.json", R"({"scenarios": [{"directory": "/etc"}]})");
  expect_refused("run.json", "is not relative to the results");
}

// A folder of a newer results format than this build reads is refused in one line, from
// run.json or any scenario's meta.json, rather than misread; a folder of this version reads.
TEST_F(DamagedResults, ANewerResultsFormatIsRefusedInOneLine) {
  nlohmann::json meta = nlohmann::json::parse(read(scenario_ / "meta.json"));
  EXPECT_EQ(meta["format_version"], kResultsFormatVersion) << "every meta.json says its format";
  meta["format_version"] = kResultsFormatVersion + 1;
  write(scenario_ / "meta.json", meta.dump());
  expect_refused("meta.json", "newer than this gpuoverlap reads");
  meta["format_version"] = "1";
  write(scenario_ / "meta.json", meta.dump());
  expect_refused("meta.json", "'format_version' must be a whole number");
  meta["format_version"] = kResultsFormatVersion;
  write(scenario_ / "meta.json", meta.dump());
  write(dir_ / "run" / "run.json", nlohmann::json{{"format_version", kResultsFormatVersion + 1},
                                                  {"scenarios", {{{"directory", "s"}}}}}
                                       .dump());
  expect_refused("run.json", "results format " + std::to_string(kResultsFormatVersion + 1) +
                                 ", newer than this gpuoverlap reads (" +
                                 std::to_string(kResultsFormatVersion) + ")");
  write(dir_ / "run" / "run.json", nlohmann::json{{"format_version", kResultsFormatVersion},
                                                  {"scenarios", {{{"directory", "s"}}}}}
                                       .dump());
  EXPECT_TRUE(load_results(dir_ / "run").ok());
}

TEST_F(DamagedResults, WrongTypedMetaJsonFieldsAreErrorsNamingTheField) {
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"scenario", "s"},
                                                           {"queues", {1, 2}},
                                                           {"priority_notes", {1}},
                                                           {"settings", {{"timestamp_queries", 1}}},
                                                           {"preemption", {{"calibrated", "yes"}}},
                                                           {"sizes", {{"profile", 3}}},
                                                           {"device", "H100"},
                                                           {"failure", 5}}) {
    nlohmann::json meta = nlohmann::json::parse(read(scenario_ / "meta.json"));
    meta[field] = value;
    write(scenario_ / "meta.json", meta.dump());
    expect_refused("meta.json", field);
    SetUp();  // a fresh folder for the next field
  }
  write(scenario_ / "meta.json", "[]");
  expect_refused("meta.json", "not a JSON object");
  write(scenario_ / "meta.json", "{\"scenario\": ");
  expect_refused("meta.json", "not valid JSON");
}

TEST_F(DamagedResults, NonFiniteOrTextNumbersInRecordsAreRefusedWithLineAndColumn) {
  const std::string original = records_text();
  const std::string header = original.substr(0, original.find('\n') + 1);
  // Field 0 is the scenario, then frame; poll_start_us is found by name in the header.
  std::vector<std::string> columns;
  {
    std::stringstream in(header.substr(0, header.size() - 1));
    for (std::string c; std::getline(in, c, ',');) columns.push_back(c);
  }
  const auto poll_start = static_cast<std::size_t>(
      std::find(columns.begin(), columns.end(), "poll_start_us") - columns.begin());
  ASSERT_LT(poll_start, columns.size());
  for (const char* bad : {"nan", "inf", "-inf", "1e999", "12abc", "text"}) {
    std::stringstream in(original);
    std::string line, damaged;
    std::getline(in, line);
    damaged = line + "\n";
    std::getline(in, line);              // first data row: line 2
    std::vector<std::string> fields(1);  // empty fields kept (no quoted commas in this row)
    for (char c : line) {
      if (c == ',')
        fields.emplace_back();
      else
        fields.back().push_back(c);
    }
    fields[poll_start] = bad;
    for (std::size_t i = 0; i < fields.size(); ++i) damaged += (i ? "," : "") + fields[i];
    damaged += "\n";
    for (std::string rest; std::getline(in, rest);) damaged += rest + "\n";
    write_records(damaged);
    expect_refused("records.csv.gz", "line 2, column poll_start_us");
  }
  write_records(header + "s,-1" + original.substr(original.find('\n') + 4));
  auto loaded = load_results(dir_ / "run");
  EXPECT_FALSE(loaded.ok());  // a negative frame number
}

// A damaged records.csv.gz is one line naming the file and what is wrong with it: a truncated
// stream, a file that is not gzip at all, bytes after the member, a decompression bomb (a
// stream that inflates a thousandfold), and a gzip of something that is not the table.
TEST_F(DamagedResults, DamagedCompressedRecordsAreRefusedInOneLine) {
  const std::string packed = read(scenario_ / "records.csv.gz");
  const std::string text = records_text();
  ASSERT_TRUE(has_gzip_magic(packed));
  write(scenario_ / "records.csv.gz", packed.substr(0, packed.size() / 2));
  expect_refused("records.csv.gz", "truncated");
  write(scenario_ / "records.csv.gz", packed.substr(0, packed.size() - 4));
  expect_refused("records.csv.gz", "truncated");
  write(scenario_ / "records.csv.gz", text);
  expect_refused("records.csv.gz", "not a gzip file");
  write(scenario_ / "records.csv.gz", "");
  expect_refused("records.csv.gz", "not a gzip file");
  write(scenario_ / "records.csv.gz", packed + "trailing");
  expect_refused("records.csv.gz", "after the end of the gzip data");
  std::string flipped = packed;
  flipped[flipped.size() - 6] ^= 0x55;  // the CRC-32 in the trailer
  write(scenario_ / "records.csv.gz", flipped);
  expect_refused("records.csv.gz", "damaged gzip data");
  write(scenario_ / "records.csv.gz", gzip_compress(std::string(8u << 20, 'x')).value());
  expect_refused("records.csv.gz", "decompression bomb");
  write(scenario_ / "records.csv.gz", gzip_compress("{\"not\": \"a table\"}\n").value());
  expect_refused("records.csv.gz", "in header");
}

// Results written before the table was compressed: records.csv, read as it is.
TEST_F(DamagedResults, PlainRecordsCsvOfOlderResultsStillLoads) {
  const std::string text = records_text();
  fs::remove(scenario_ / "records.csv.gz");
  write(scenario_ / "records.csv", text);
  auto loaded = load_results(dir_ / "run");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->scenarios.front().records.size(), 6u);
  EXPECT_TRUE(has_records(scenario_));
}

TEST_F(DamagedResults, ADamagedFramesCsvIsRefusedWithLineAndColumn) {
  const std::string header =
      "scenario,frame,cpu_start_us,cpu_frame_us,cpu_submit_us,submit_to_start_us,"
      "poll_gap_max_us,bg_managed,bg_boosted,bg_unmanaged,status,bg_held,frame_interval_us\n";
  write(scenario_ / "frames.csv",
        header + "s,0,0,10,2,1,1,0,0,0,ok,0,\ns,1,8,10,2,1,1,0,0,0,ok,0,8000\n");
  // Written in format 1, a frames.csv must have every column of that version.
  expect_refused("frames.csv", "missing column stutter");
  // A folder from before the format had a version: its first release's columns suffice.
  nlohmann::json meta = nlohmann::json::parse(read(scenario_ / "meta.json"));
  ASSERT_EQ(meta["format_version"], kResultsFormatVersion);
  meta.erase("format_version");
  write(scenario_ / "meta.json", meta.dump());
  auto loaded = load_results(dir_ / "run");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->scenarios.front().frames.size(), 2u) << "older columns only: still read";
  EXPECT_FALSE(loaded->scenarios.front().frames[0].frame_interval_us.has_value());
  EXPECT_EQ(loaded->scenarios.front().frames[1].frame_interval_us, 8000.0);
  write(scenario_ / "frames.csv", header + "s,0,0,10,2,1,1,0,0,0,ok,0,nan\n");
  expect_refused("frames.csv", "line 2, column frame_interval_us");
  write(scenario_ / "frames.csv", "scenario,frame\ns,0\n");
  expect_refused("frames.csv", "missing column status");
}

TEST_F(DamagedResults, FifosInAResultsFolderDoNotHangTheReaders) {
  fs::remove(scenario_ / "records.csv.gz");
  ASSERT_EQ(::mkfifo((scenario_ / "records.csv.gz").c_str(), 0600), 0);
  expect_refused("records.csv.gz", "is a FIFO");
  fs::remove(scenario_ / "records.csv.gz");
  SetUp();
  fs::remove(scenario_ / "meta.json");
  ASSERT_EQ(::mkfifo((scenario_ / "meta.json").c_str(), 0600), 0);
  expect_refused("meta.json", "is a FIFO");
}

TEST_F(DamagedResults, ADamagedSummaryOrVerdictStillGivesAReport) {
  // summary.csv is read only for the report's preemption table; a damaged one is reported
  // in the page instead of aborting it.
  nlohmann::json meta = nlohmann::json::parse(read(scenario_ / "meta.json"));
  meta["preemption"] = {{"spec", {{"load", "big-dispatch"}}}};
  write(scenario_ / "meta.json", meta.dump());
  write(scenario_ / "summary.csv", "not,a,summary\n");
  auto loaded = load_results(dir_ / "run");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const ReportPages pages = markdown_report(*loaded);
  EXPECT_NE(pages.details.find("The latency table is missing"), std::string::npos) << pages.details;
  EXPECT_NE(pages.page.find("the latency table is missing"), std::string::npos) << pages.page;
  for (const std::string* page : {&pages.page, &pages.details}) {
    EXPECT_EQ(page->find("nan"), std::string::npos);
    EXPECT_EQ(page->find("inf"), std::string::npos);
  }
  const CompareResult same = compare_runs(*loaded, *loaded, {});
  EXPECT_FALSE(same.changed);
}

// --- the output folder -----------------------------------------------------------------------

TEST_F(Hostile, AnOutputFolderWithFilesIsRefusedUnlessItIsResultsAndReplaceIsAsked) {
  const fs::path out = dir_ / "out";
  ASSERT_TRUE(prepare_output_directory({.path = out}).ok());  // created
  EXPECT_TRUE(fs::is_directory(out));
  EXPECT_TRUE(fs::is_empty(out));                             // the probe file is gone again
  ASSERT_TRUE(prepare_output_directory({.path = out}).ok());  // empty: fine
  write(out / "notes.txt", "mine");
  const Status refused = prepare_output_directory({.path = out});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--replace"), std::string::npos);
  const Status not_ours = prepare_output_directory({.path = out, .replace = true});
  ASSERT_FALSE(not_ours.ok());
  EXPECT_EQ(read(out / "notes.txt"), "mine");  // nothing deleted
  write(out / "run.json", "{}");
  write(out / "old" / "background.csv", "stale");
  ASSERT_TRUE(prepare_output_directory({.path = out, .replace = true}).ok());
  EXPECT_TRUE(fs::is_empty(out));  // old and new results never mix
}

TEST_F(Hostile, AnUnusableOutputFolderIsFoundBeforeAnyWork) {
  write(dir_ / "file", "x");
  const Status under_a_file = prepare_output_directory({.path = dir_ / "file" / "out"});
  ASSERT_FALSE(under_a_file.ok());
  EXPECT_NE(under_a_file.error().message.find("--out"), std::string::npos);
  EXPECT_FALSE(prepare_output_directory({.path = dir_ / "file"}).ok());  // not a folder
  const Status no_space =
      prepare_output_directory({.path = dir_ / "big", .needed_bytes = ~std::uint64_t{0}});
  ASSERT_FALSE(no_space.ok());
  EXPECT_NE(no_space.error().message.find("free, the results need about"), std::string::npos)
      << no_space.error().message;
  EXPECT_FALSE(fs::exists(dir_ / "big"));  // a refused folder it created is removed again
  EXPECT_EQ(unused_directory_name(dir_ / "fresh"), dir_ / "fresh");
  fs::create_directories(dir_ / "taken");
  fs::create_directories(dir_ / "taken-2");
  EXPECT_EQ(unused_directory_name(dir_ / "taken"), dir_ / "taken-3");
}

}  // namespace
}  // namespace gpuoverlap
