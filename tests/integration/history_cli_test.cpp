// `gpuoverlap history` on the real binary: a lavapipe run kept once, listed, its series shown
// and judged; bad locations and folders refused with the documented exit status, nothing
// written. On SQLite; the store's own tests cover PostgreSQL too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
    const fs::path earlier = scratch("earlier-" + std::to_string(copy));
    fs::remove_all(earlier);
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
  const fs::path second = scratch("second");
  fs::remove_all(second);
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
  const fs::path out = scratch("never-run");
  fs::remove_all(out);
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
