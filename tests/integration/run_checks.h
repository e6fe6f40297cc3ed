// Test helpers for the integration tests that run one scenario or study and check what it
// wrote: scratch paths, the frame loop's and the compile threads' accounts, a run under
// --sync-validation that must be clean (with its preset's -legacy twin), `validate --explain`.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/csv_table.h"
#include "results_tools.h"
#include "run_binary.h"
#include "timeline/export.h"

namespace gpuoverlap {

// A path in the temporary folder, this process's own.
inline std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("gpuoverlap-it-" + std::to_string(::getpid()) + "-" + name);
}

// A file of tests/data in the source tree.
inline std::string test_data(const std::string& name) {
  return (std::filesystem::path(GPUOVERLAP_SOURCE_DIR) / "tests" / "data" / name).string();
}

// A records.csv list column ("a;b;c") split at its semicolons; none for an empty cell.
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  if (text.empty()) return parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t semicolon = text.find(';', begin);
    parts.push_back(text.substr(begin, semicolon - begin));
    if (semicolon == std::string::npos) return parts;
    begin = semicolon + 1;
  }
}

// A frame's interval as the frame loop's thread spent it (frames.csv's loop_* columns): its
// phases add up to the interval, and the thread's time on a CPU and runnable fit inside it.
inline void expect_interval_explained(const CsvTable<kFrameColumns.size()>& frames, std::size_t f) {
  const auto interval = frames.number(f, "frame_interval_us");
  ASSERT_TRUE(interval) << "line " << f + 2 << ": warm-up frames came before";
  double sum_us = 0;
  for (const char* phase : {"loop_jobs_us", "loop_submit_us", "loop_tool_us", "loop_gpu_wait_us",
                            "loop_pace_us", "loop_woke_late_us"}) {
    const auto us = frames.number(f, phase);
    ASSERT_TRUE(us) << phase << ", line " << f + 2;
    EXPECT_GE(*us, 0.0) << phase << ", line " << f + 2;
    sum_us += *us;
  }
  EXPECT_NEAR(sum_us, *interval, 1.0) << "line " << f + 2;
  const auto run_delay = frames.number(f, "loop_run_delay_us");
  const auto on_cpu = frames.number(f, "loop_on_cpu_us");
  ASSERT_TRUE(run_delay && on_cpu) << "Linux keeps both (/proc/thread-self/schedstat)";
  EXPECT_GE(*run_delay, 0.0);
  EXPECT_GT(*on_cpu, 0.0);
  // Read just after each start, so the span is the interval's give or take the reads.
  EXPECT_LE(*on_cpu + *run_delay, *interval + 1000.0) << "line " << f + 2;
  EXPECT_GE(*frames.number(f, "loop_switches_voluntary"), 0.0);
  EXPECT_GE(*frames.number(f, "loop_switches_involuntary"), 0.0);
  EXPECT_GE(*frames.number(f, "loop_cpu"), 0.0);
  // The workers' share of the same interval, read by the frame loop by their ids, with the CPU
  // frame; the poller's while it polled, with stamps.
  if (frames.number(f, "cpu_phase_us")) {
    const auto sum = frames.number(f, "workers_run_delay_us");
    const auto worst = frames.number(f, "workers_run_delay_max_us");
    const auto on_cpu_us = frames.number(f, "workers_on_cpu_us");
    ASSERT_TRUE(sum && worst && on_cpu_us) << "line " << f + 2;
    EXPECT_GE(*worst, 0.0);
    EXPECT_LE(*worst, *sum + 0.001) << "line " << f + 2;
    // A frame may read none: another thread's CPU time (/proc/<tid>/schedstat) is brought up
    // to date only at a tick or a switch, so a worker still running when the frame's lap is
    // read leaves its time to the next frame. The jobs' time over a round is asserted by the
    // caller (expect_workers_ran).
    EXPECT_GE(*on_cpu_us, 0.0) << "line " << f + 2;
    const auto on_loop_cpu = frames.number(f, "workers_on_loop_cpu");
    ASSERT_TRUE(on_loop_cpu) << "line " << f + 2;
    EXPECT_GE(*on_loop_cpu, 0.0);
  }
  if (frames.number(f, "poll_scans")) {
    const auto poller = frames.number(f, "poller_run_delay_us");
    ASSERT_TRUE(poller) << "line " << f + 2;
    EXPECT_GE(*poller, 0.0);
  }
}

// Over a round of a frame with a CPU phase, its jobs ran on some CPU: the workers' time
// summed over its frames (each frame's may be late by a tick: expect_interval_explained).
inline void expect_workers_ran(const CsvTable<kFrameColumns.size()>& frames) {
  double on_cpu_us = 0;
  bool cpu_phase = false;
  for (std::size_t f = 0; f < frames.rows.size(); ++f) {
    if (!frames.number(f, "cpu_phase_us")) continue;
    cpu_phase = true;
    on_cpu_us += frames.number(f, "workers_on_cpu_us").value_or(0);
  }
  if (cpu_phase) {
    EXPECT_GT(on_cpu_us, 0.0) << "the jobs ran on some CPU";
  }
}

// Every compile that ran names its thread and what it cost it (Linux keeps all of it).
inline void expect_compiles_on_threads(const CsvTable<kBackgroundColumns.size()>& bg) {
  for (std::size_t r = 0; r < bg.rows.size(); ++r) {
    if (bg.at(r, "ran") != "1" || bg.at(r, "outcome") == "cancelled") continue;
    const std::string label = bg.at(r, "label");
    const auto thread_id = bg.number(r, "thread_id");
    const auto on_cpu_ms = bg.number(r, "on_cpu_ms"), system_ms = bg.number(r, "system_ms");
    ASSERT_TRUE(thread_id && on_cpu_ms && system_ms) << label;
    EXPECT_GT(*thread_id, 0.0) << label;
    EXPECT_GE(*bg.number(r, "cpu_start"), 0.0) << label;
    EXPECT_GE(*bg.number(r, "cpu_end"), 0.0) << label;
    EXPECT_GT(*on_cpu_ms, 0.0) << label << ": a compile takes CPU";
    EXPECT_GE(*system_ms, 0.0) << label;
    // getrusage's split is sampled at ticks: allow a tick beyond the thread clock.
    EXPECT_LE(*system_ms, *on_cpu_ms + 10.0) << label;
    EXPECT_GE(*bg.number(r, "run_delay_ms"), 0.0) << label;
    EXPECT_GE(*bg.number(r, "minor_faults"), 0.0) << label;
  }
}

// One scenario run under --sync-validation for 4 frames after 1 warm-up, which must succeed
// clean (no validation error, no synchronization hazard): its folder, meta.json and records
// indexed by (frame, workload).
struct CleanRun {
  std::filesystem::path dir;  // the run's --out
  std::filesystem::path scenario_dir;
  nlohmann::json meta;
  CsvTable<kRecordColumns.size()> records;
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;

  // The (frame, clock) pairs in which `later` starts after `earlier` ended, each checked: a
  // failure names the clock where it started before.
  std::size_t count_after(const std::string& later, const std::string& earlier,
                          std::initializer_list<const char*> clocks) const {
    std::size_t checked = 0;
    for (const auto& [key, row] : row_of) {
      if (key.second != later) continue;
      const auto before = row_of.find({key.first, earlier});
      if (before == row_of.end()) {
        ADD_FAILURE() << "no '" << earlier << "' in frame " << key.first;
        continue;
      }
      for (const char* clock : clocks) {
        const auto start = records.number(row, std::string(clock) + "_start_us");
        const auto end = records.number(before->second, std::string(clock) + "_end_us");
        if (!start || !end) {
          ADD_FAILURE() << later << " or " << earlier << " has no " << clock << " time";
          continue;
        }
        EXPECT_GE(*start, *end) << later << " after " << earlier << " (" << clock << ")";
        ++checked;
      }
    }
    return checked;
  }

  // count_after summed over (later, earlier) pairs.
  std::size_t count_pairs(std::initializer_list<std::pair<const char*, const char*>> pairs,
                          std::initializer_list<const char*> clocks) const {
    std::size_t checked = 0;
    for (const auto& [later, earlier] : pairs) checked += count_after(later, earlier, clocks);
    return checked;
  }
};

inline std::optional<CleanRun> run_clean(const std::string& scenario, const std::string& name) {
  CleanRun run;
  run.dir = temp_path(name);
  std::filesystem::remove_all(run.dir);
  const auto r = run_gpuoverlap(
      "run " + scenario + " --frames 4 --warmup 1 --sync-validation --out " + run.dir.string());
  if (r.exit_code != 0) {
    ADD_FAILURE() << r.output;
    return std::nullopt;
  }
  run.scenario_dir = run.dir / name;
  run.meta = read_json_file(run.scenario_dir / "meta.json");
  EXPECT_EQ(run.meta["validation"]["errors"], 0);
  EXPECT_EQ(run.meta["validation"]["sync_hazards"], 0);
  run.records = read_csv((run.scenario_dir / "records.csv.gz").string(), kRecordColumns);
  for (std::size_t row = 0; row < run.records.rows.size(); ++row)
    run.row_of[{run.records.at(row, "frame"), run.records.at(row, "workload")}] = row;
  return run;
}

// `preset`'s -legacy twin, then `preset` itself, each run clean (run_clean) and given to
// `check`; the run's folder is removed after it. A fatal failure stops there, the folder kept.
inline void for_legacy_and_enhanced(
    const std::string& preset,
    const std::function<void(const std::string& name, const CleanRun& run)>& check) {
  for (const std::string& name : {preset + "-legacy", preset}) {
    SCOPED_TRACE(name);
    const auto run = run_clean(name, name);
    ASSERT_TRUE(run);
    check(name, *run);
    if (::testing::Test::HasFatalFailure()) return;
    std::filesystem::remove_all(run->dir);
  }
}

// `validate SCENARIO --explain` exits 0 and its explanation has each of `expected`.
inline void expect_explains(const std::string& scenario, const std::vector<std::string>& expected) {
  const auto explained = run_gpuoverlap("validate " + scenario + " --explain");
  ASSERT_EQ(explained.exit_code, 0) << explained.output;
  for (const std::string& line : expected)
    EXPECT_NE(explained.output.find(line), std::string::npos) << line << "\n" << explained.output;
}

// expect_explains with `enhanced` for a preset and `legacy` for its -legacy twin.
inline void expect_explains_either(const std::string& name,
                                   const std::vector<std::string>& enhanced,
                                   const std::vector<std::string>& legacy) {
  expect_explains(name, name.ends_with("-legacy") ? legacy : enhanced);
}

// `report` reads the clean run; `validate --explain` names `enhanced`'s lines for a preset and
// `legacy`'s for its -legacy twin.
inline void expect_reported_and_explained(const CleanRun& run, const std::string& name,
                                          const std::vector<std::string>& enhanced,
                                          const std::vector<std::string>& legacy) {
  const auto report = run_gpuoverlap("report " + run.dir.string());
  EXPECT_EQ(report.exit_code, 0) << report.output;
  expect_explains_either(name, enhanced, legacy);
}

// A study's file: `head` (its `key = value` lines: name, foreground, frames...), a baseline
// condition, then each of `conditions`: its name and its [condition.background] lines.
inline std::string study_toml(const std::string& head,
                              const std::vector<std::pair<std::string, std::string>>& conditions) {
  std::string toml = head + "[[condition]]\nname = \"baseline\"\n";
  for (const auto& [name, background] : conditions)
    toml += "[[condition]]\nname = \"" + name + "\"\n[condition.background]\n" + background;
  return toml;
}

// A study written as study.toml into a fresh scratch folder and run with `options`, which must
// succeed; its results in the folder's out/.
struct StudyRun {
  std::filesystem::path dir, out;
  CommandResult result;
};

inline void run_study(StudyRun& study, const std::string& name, const std::string& toml,
                      const std::string& options = "") {
  study.dir = fresh_path(temp_path(name));
  std::filesystem::create_directories(study.dir);
  std::ofstream(study.dir / "study.toml") << toml;
  study.out = study.dir / "out";
  study.result =
      run_gpuoverlap("run " + (study.dir / "study.toml").string() +
                     (options.empty() ? "" : " " + options) + " --out " + study.out.string());
  ASSERT_EQ(study.result.exit_code, 0) << study.result.output;
}

}  // namespace gpuoverlap
