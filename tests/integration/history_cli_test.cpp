// `gpuoverlap history` on the real binary: a lavapipe run kept once, listed, its series shown
// and judged; bad locations and folders refused with the documented exit status, nothing
// written; the same results without their records kept from their summaries, with the same
// numbers. On SQLite; the store's own tests cover PostgreSQL too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "analysis/results.h"
#include "history/history_rows.h"
#include "run_binary.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() /
         ("gpuoverlap-history-cli-" + std::to_string(::getpid()) + "-" + name);
}

TEST(HistoryCli, ARunIsKeptOnceListedAndItsSeriesJudged) {
  const fs::path out = scratch("run"), db = scratch("h.sqlite");
  fs::remove_all(out);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  ASSERT_EQ(run_gpuoverlap("run default --frames 4 --warmup 1 --out " + out.string()).exit_code, 0);
  const auto kept = run_gpuoverlap("history ingest " + out.string() + " --db " + db.string());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("run 1: kept " + out.string() + " (1 scenarios,"), std::string::npos)
      << kept.output;
  // The location from the environment, the same run: nothing changes.
  const auto again = run_command("GPUOVERLAP_DB=" + db.string() + " " + GPUOVERLAP_BINARY +
                                 " history ingest " + out.string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("run 1: " + out.string() + " was kept already"), std::string::npos)
      << again.output;
  const auto list = run_gpuoverlap("history list --db " + db.string());
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find(fs::absolute(out).lexically_normal().string()), std::string::npos)
      << list.output;
  // Its machine by id, GPU and API (lavapipe's device is llvmpipe).
  EXPECT_NE(list.output.find("1 llvmpipe"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("(Vulkan)"), std::string::npos) << list.output;
  const auto machines = run_gpuoverlap("history list --machines --db " + db.string());
  ASSERT_EQ(machines.exit_code, 0) << machines.output;
  EXPECT_NE(machines.output.find("Vulkan"), std::string::npos) << machines.output;
  const fs::path csv = scratch("trend.csv"), png = scratch("trend.png");
  const auto trend =
      run_gpuoverlap("history trend --scenario default --series \"Compute A\" --clock ts --csv " +
                     csv.string() + " --db " + db.string());
  ASSERT_EQ(trend.exit_code, 0) << trend.output;
  EXPECT_NE(trend.output.find("default · Compute A · duration_p50_us · ts · machine 1"),
            std::string::npos)
      << trend.output;
  // plot.py draws what trend wrote.
  const auto plotted =
      run_command("/usr/bin/python3 " + std::string(GPUOVERLAP_SOURCE_DIR) +
                  "/plots/plot.py history " + csv.string() + " --out " + png.string());
  EXPECT_EQ(plotted.exit_code, 0) << plotted.output;
  EXPECT_TRUE(fs::exists(png));
  fs::remove(csv);
  fs::remove(png);
  // compare --against-history: the same results copied as three earlier runs (another start
  // time each, so another content key), then the first judged against them: identical
  // values are inside their range, nothing changed.
  for (int copy = 1; copy <= 3; ++copy) {
    const fs::path earlier = fresh_path(scratch("earlier-" + std::to_string(copy)));
    fs::copy(out, earlier, fs::copy_options::recursive);
    std::ofstream(earlier / "run.json")
        << "{\"started_at\":\"2026-01-0" << copy << "T00:00:00Z\",\"scenarios\":[{\"name\":"
        << "\"default\",\"directory\":\"default\",\"status\":\"ok\"}]}";
    const auto copied =
        run_gpuoverlap("history ingest " + earlier.string() + " --db " + db.string());
    ASSERT_EQ(copied.exit_code, 0) << copied.output;
    fs::remove_all(earlier);
  }
  const auto against =
      run_gpuoverlap("compare " + out.string() + " --against-history --db " + db.string());
  EXPECT_EQ(against.exit_code, 0) << against.output;
  EXPECT_NE(against.output.find("0 of "), std::string::npos) << against.output;
  EXPECT_NE(against.output.find(" metrics changed against the last 10 runs of machine 1"),
            std::string::npos)
      << against.output;
  const auto alone = run_gpuoverlap("compare " + out.string() + " " + out.string() +
                                    " --against-history --db " + db.string());
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  // `run --history`: a completed run keeps itself, after the four above.
  const fs::path second = fresh_path(scratch("second"));
  const auto run_kept = run_gpuoverlap("run default --frames 4 --warmup 1 --out " +
                                       second.string() + " --history " + db.string());
  ASSERT_EQ(run_kept.exit_code, 0) << run_kept.output;
  EXPECT_NE(run_kept.output.find("history: run 5 in " + db.string()), std::string::npos)
      << run_kept.output;
  fs::remove_all(second);
  const auto none = run_gpuoverlap("history trend --scenario nothing-like-it --db " + db.string());
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("no series matches"), std::string::npos) << none.output;
  const auto judged = run_gpuoverlap("history regressions --db " + db.string());
  EXPECT_EQ(judged.exit_code, 0) << judged.output;
  EXPECT_NE(judged.output.find("0 change points in "), std::string::npos) << judged.output;
  fs::remove_all(out);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
}

// The same lavapipe results read whole and with every records.csv.gz deleted (as many
// folders under docs/results/ were committed): what summary.csv gives the history is what the
// records give, to the precision summary.csv writes. summary.csv's percentiles come from the
// engine's values, the records path's from the stamps records.csv.gz keeps to the nanosecond:
// a duration (end - start) may differ by three roundings, 1.5 ns.
TEST(HistoryCli, AFolderWithoutRecordsKeepsWhatItsSummaryGivesWithTheSameNumbers) {
  const fs::path out = scratch("whole"), slim = scratch("slim"), db = scratch("slim.sqlite");
  fs::remove_all(out);
  fs::remove_all(slim);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  const auto ran = run_gpuoverlap(
      "run default preemption-slow-shader-high --priority-fallback --frames 30 --warmup 1 "
      "--duration-ms 300 --target-ms 20 --out " +
      out.string());
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  fs::copy(out, slim, fs::copy_options::recursive);
  for (const char* scenario : {"default", "preemption-slow-shader-high"})
    ASSERT_TRUE(fs::remove(slim / scenario / "records.csv.gz")) << scenario;

  const auto whole = load_results(out);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  const auto summarized = load_results(slim, RecordsRequired::no);
  ASSERT_TRUE(summarized.ok()) << summarized.error().message;
  const auto from_records = history::metric_rows(*whole);
  const auto from_summary = history::metric_rows(*summarized);
  ASSERT_TRUE(from_records.ok() && from_summary.ok());
  auto in_records = [&](const history::MetricRow& m) -> const history::MetricRow* {
    for (const history::MetricRow& r : *from_records)
      if (r.scenario == m.scenario && r.series == m.series && r.metric == m.metric &&
          r.clock == m.clock)
        return &r;
    return nullptr;
  };
  // Each poll row's disturbed stamps, from summary.csv: where there are any, its duration is
  // not kept from the summary (the records path leaves their frames out).
  std::map<std::pair<std::string, std::string>, std::size_t> disturbed;
  for (const LoadedScenario& s : summarized->scenarios)
    for (const LoadedSummaryRow& row : s.summary)
      if (row.clock == Clock::poll)
        disturbed[{s.name, row.workload}] = row.poll_disturbed.value_or(0);
  constexpr double kSummaryPrecisionUs = 0.0015 + 1e-9;
  std::size_t durations = 0, latencies = 0;
  for (const history::MetricRow& m : *from_summary) {
    if (m.series == "frame") continue;  // frames.csv, read alike by both
    const history::MetricRow* r = in_records(m);
    ASSERT_NE(r, nullptr) << m.scenario << " · " << m.series << " · " << m.metric << " · "
                          << m.clock << ": not in what the records give";
    EXPECT_NEAR(m.value, r->value, kSummaryPrecisionUs)
        << m.scenario << " · " << m.series << " · " << m.metric << " · " << m.clock;
    EXPECT_FALSE(m.low || m.high);
    const bool poll_disturbed = m.clock == "poll" && disturbed[{m.scenario, m.series}] > 0;
    // The summary's frames are the ok frames with the clock; the records path's, the values
    // judged: one count, but for a latency on poll whose disturbed starts it left out.
    if (!poll_disturbed) {
      EXPECT_EQ(m.frames, r->frames) << m.scenario << " · " << m.series;
    }
    (m.metric.starts_with("latency") ? latencies : durations)++;
  }
  for (const history::MetricRow& r : *from_records) {
    if (r.metric != "duration_p50_us" && !r.metric.starts_with("latency")) continue;
    const bool poll_disturbed = r.clock == "poll" && disturbed[{r.scenario, r.series}] > 0;
    const bool kept = std::any_of(from_summary->begin(), from_summary->end(), [&](const auto& m) {
      return m.scenario == r.scenario && m.series == r.series && m.metric == r.metric &&
             m.clock == r.clock;
    });
    EXPECT_EQ(kept, !(poll_disturbed && r.metric == "duration_p50_us"))
        << r.scenario << " · " << r.series << " · " << r.metric << " · " << r.clock;
  }
  EXPECT_GT(durations, 0u);
  EXPECT_GT(latencies, 0u) << "the urgent job's latency on some clock";

  // Every reader but the history refuses it as before; the history keeps it, a whole run and
  // one scenario's directory alone.
  const auto report = run_gpuoverlap("report " + slim.string());
  EXPECT_EQ(report.exit_code, 2) << report.output;
  EXPECT_NE(report.output.find("records.csv.gz"), std::string::npos) << report.output;
  const auto kept = run_gpuoverlap("history ingest " + slim.string() + " --db " + db.string());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("(2 scenarios,"), std::string::npos) << kept.output;
  const auto one =
      run_gpuoverlap("history ingest " + (slim / "default").string() + " --db " + db.string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("(1 scenarios,"), std::string::npos) << one.output;
  // The whole folder is the same run as its slim copy (the same content key): kept already.
  const auto again = run_gpuoverlap("history ingest " + out.string() + " --db " + db.string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("was kept already"), std::string::npos) << again.output;
  fs::remove_all(out);
  fs::remove_all(slim);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
}

TEST(HistoryCli, BadLocationsAndFoldersAreRefusedWithNothingWritten) {
  const fs::path db = scratch("never.sqlite"), missing = scratch("missing");
  fs::remove(db);
  const auto folder = run_gpuoverlap("history ingest " + missing.string() + " --db " + db.string());
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_FALSE(fs::exists(db)) << "a bad folder is found before the history is opened";
  const auto scheme = run_gpuoverlap("history list --db mysql://db/h");
  EXPECT_EQ(scheme.exit_code, 2) << scheme.output;
  EXPECT_NE(scheme.output.find("not a history location"), std::string::npos) << scheme.output;
  const auto unnamed =
      run_command("env -u GPUOVERLAP_DB " + std::string(GPUOVERLAP_BINARY) + " history list");
  EXPECT_EQ(unnamed.exit_code, 2) << unnamed.output;
  EXPECT_NE(unnamed.output.find("no results history named"), std::string::npos) << unnamed.output;
  const auto server = run_gpuoverlap("history list --db postgresql://nobody@127.0.0.1:1/none");
  EXPECT_EQ(server.exit_code, 3) << server.output;
  const auto unwritable = run_gpuoverlap("history list --db /proc/gpuoverlap-history.sqlite");
  EXPECT_EQ(unwritable.exit_code, 3) << unwritable.output;
  // run --history with no location anywhere: refused before any GPU work.
  const fs::path out = fresh_path(scratch("never-run"));
  const auto run = run_command("env -u GPUOVERLAP_DB " + std::string(GPUOVERLAP_BINARY) +
                               " run default --frames 2 --history --out " + out.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("no results history named"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(out));
  const auto no_sub = run_gpuoverlap("history");
  EXPECT_EQ(no_sub.exit_code, 2) << no_sub.output;
}

}  // namespace
}  // namespace gpuoverlap
