// `run --all` on whatever Vulkan device the default rule picks (lavapipe on CI): the AllPresets
// tests of what every preset wrote (files, rows, dependencies, meta.json, device reuse,
// summaries). Only invariants are asserted, never timings: lavapipe has one queue and cannot
// overlap anything, and a GPU's numbers are measured by benchmarks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "all_presets.h"
#include "analysis/csv_table.h"
#include "results_tools.h"
#include "run_checks.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

TEST_F(AllPresets, RunSucceedsAndWritesEveryFile) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  EXPECT_EQ(result_->output.find("validation error"), std::string::npos) << result_->output;
  EXPECT_NE(result_->output.find("results: " + out_->string()), std::string::npos);
  ASSERT_EQ(kPresets.size(), 55u);
  // background-policies and the engine-styles studies are presets of their own: named, not run.
  EXPECT_NE(result_->output.find("--all: not run, a study longer than the suite's minute: "
                                 "background-policies (run it with: gpuoverlap run "
                                 "background-policies)"),
            std::string::npos)
      << result_->output;
  for (const char* study : {"engine-styles-block", "engine-styles-spin", "engine-styles-yield"})
    EXPECT_NE(result_->output.find(std::string("a study longer than the suite's minute: ") + study +
                                   " (run it with: gpuoverlap run " + study + ")"),
              std::string::npos)
        << study;
  // non-intrusiveness: 7 conditions (the null and the negative control and 2 of the control's
  // doses) x 3 rounds, none added on a CPU device; the matrix's 12 (the 12 preemption presets
  // are its configurations and run only inside it).
  ASSERT_EQ(kScenarios.size(), 37u + 7u * 3u + 12u);
  for (const std::string& p : kScenarios)
    for (const char* file : {"records.csv.gz", "summary.csv", "dependencies.csv", "frames.csv",
                             "meta.json", "trace.json.gz"}) {
      const fs::path path = *out_ / p / file;
      ASSERT_TRUE(fs::exists(path)) << path;
      EXPECT_GT(fs::file_size(path), 0u) << path;
    }
  const auto run = read_json_file(*out_ / "run.json");
  ASSERT_EQ(run["scenarios"].size(), kScenarios.size());
  for (const auto& s : run["scenarios"]) EXPECT_EQ(s["status"], "ok");
}

TEST_F(AllPresets, EveryRowIsOkWithStartBeforeEndOnEveryClock) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  for (const std::string& p : kScenarios) {
    if (is_preemption(p)) continue;  // submissions, not frames: PreemptionRowsHoldTheInvariants
    const auto table = read_csv((*out_ / p / "records.csv.gz").string(), kRecordColumns);
    const auto meta = read_json_file(*out_ / p / "meta.json");
    const std::size_t workloads = meta["scenario"]["workloads"].size();
    // A study's rounds share its frames: ceil(5 / rounds) each.
    const std::size_t frames = meta["settings"]["frames"].get<std::size_t>();
    EXPECT_EQ(frames, meta["scenario"].contains("study")
                          ? (kFrames + meta["scenario"]["study"]["rounds"].get<std::size_t>() - 1) /
                                meta["scenario"]["study"]["rounds"].get<std::size_t>()
                          : kFrames)
        << p;
    ASSERT_EQ(table.rows.size(), frames * workloads) << p;
    const bool timestamps = meta["clocks"]["timestamp"]["available"].get<bool>();
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      SCOPED_TRACE(p + " row " + std::to_string(r));
      EXPECT_EQ(table.at(r, "scenario"), p);
      EXPECT_EQ(table.at(r, "status"), "ok");
      const auto ps = table.number(r, "poll_start_us"), pe = table.number(r, "poll_end_us");
      ASSERT_TRUE(ps && pe);
      EXPECT_GE(*ps, 0.0);  // nothing starts before the gate opens
      EXPECT_LE(*ps, *pe);
      const auto ts = table.number(r, "ts_start_us"), te = table.number(r, "ts_end_us");
      EXPECT_EQ(ts.has_value(), timestamps);
      if (ts && te) {
        EXPECT_LE(*ts, *te);
      }
    }
  }
}

TEST_F(AllPresets, DependentWorkNeverStartsBeforeItsProducerEnds) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  std::size_t dependencies_checked = 0;
  for (const std::string& p : kScenarios) {
    const auto table = read_csv((*out_ / p / "records.csv.gz").string(), kRecordColumns);
    std::map<std::pair<std::string, std::string>, std::size_t> row_of;  // (frame, workload)
    for (std::size_t r = 0; r < table.rows.size(); ++r)
      row_of[{table.at(r, "frame"), table.at(r, "workload")}] = r;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const auto deps = split_list(table.at(r, "depends_on"));
      if (deps.empty()) continue;
      const auto barriers = split_list(table.at(r, "barrier"));
      ASSERT_EQ(deps.size(), barriers.size()) << p << " row " << r;
      for (std::size_t d = 0; d < deps.size(); ++d) {
        if (barriers[d] == "none") continue;
        const std::size_t producer = row_of.at({table.at(r, "frame"), deps[d]});
        for (const char* clock : {"poll", "ts", "clk"}) {
          const auto start = table.number(r, std::string(clock) + "_start_us");
          const auto end = table.number(producer, std::string(clock) + "_end_us");
          if (!start || !end) continue;
          EXPECT_GE(*start, *end) << p << " frame " << table.at(r, "frame") << ": "
                                  << table.at(r, "workload") << " started before " << deps[d]
                                  << " (" << barriers[d] << ") ended on the " << clock << " clock";
          ++dependencies_checked;
        }
      }
    }
  }
  // Every preset but no-barriers and the preemption ones has dependencies with barriers
  // (barrier-cost alone has 18 after its one "none" pair), each checked on at least the poll
  // clock.
  const auto frame_scenarios = static_cast<std::size_t>(
      std::count_if(kScenarios.begin(), kScenarios.end(),
                    [](const std::string& p) { return !is_preemption(p); }));
  EXPECT_GE(dependencies_checked, frame_scenarios - 1 + 17);
}

TEST_F(AllPresets, MetaRecordsDeviceQueuesPrioritiesAndClocks) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  for (const std::string& p : kScenarios) {
    const auto meta = read_json_file(*out_ / p / "meta.json");
    SCOPED_TRACE(p);
    EXPECT_FALSE(meta["device"]["name"].get<std::string>().empty());
    EXPECT_FALSE(meta["device"]["driver_name"].get<std::string>().empty());
    EXPECT_FALSE(meta["device"]["api_version"].get<std::string>().empty());
    EXPECT_EQ(meta["validation"]["enabled"], true);
    EXPECT_EQ(meta["validation"]["errors"], 0);
    EXPECT_EQ(meta["validation"]["synchronization"], true);
    EXPECT_EQ(meta["validation"]["sync_hazards"], 0);
    EXPECT_EQ(meta["clocks"]["poll"], "CLOCK_MONOTONIC_RAW");
    EXPECT_TRUE(meta["memory"]["stamps"]["flags"].get<std::string>().find("HOST_VISIBLE") !=
                std::string::npos);
    EXPECT_FALSE(meta["tool"]["git_revision"].get<std::string>().empty());
    EXPECT_NE(meta["command_line"].get<std::string>().find("--frames 5"), std::string::npos);
    bool compute_shares_direct = false;
    for (const auto& q : meta["queues"]) {
      EXPECT_TRUE(q.contains("family"));
      EXPECT_TRUE(q.contains("priority_granted"));
      if (q["type"] == "compute" && !q["shares_queue_of"].is_null()) compute_shares_direct = true;
    }
    EXPECT_EQ(meta["compute_queue_shared"].get<bool>(), compute_shares_direct);
    // The shader clock: recorded where the device has it, and its columns filled exactly when
    // its timebase was verified against the poll clock.
    const auto& clock = meta["clocks"]["shader_clock"];
    const bool verified =
        clock["recorded"].get<bool>() && clock["verification"]["verdict"] == "accepted";
    if (clock["recorded"].get<bool>()) {
      EXPECT_TRUE(clock["verification"].contains("verdict"));
    }
    const auto table = read_csv((*out_ / p / "records.csv.gz").string(), kRecordColumns);
    std::size_t flagged = 0;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      EXPECT_EQ(table.number(r, "clk_start_us").has_value(), verified) << r;
      const auto cs = table.number(r, "clk_start_us"), ce = table.number(r, "clk_end_us");
      if (cs && ce) {
        EXPECT_LE(*cs, *ce);
      }
      flagged += table.at(r, "flags").empty() ? 0 : 1;
    }
    EXPECT_EQ(meta["clock_agreement"]["flagged_rows"].get<std::size_t>(), flagged);
  }
  const auto high = read_json_file(*out_ / "high-priority-compute" / "meta.json");
  EXPECT_EQ(high["queues"][1]["priority_requested"], "high");
  if (high["queues"][1]["priority_granted"] != "high") {
    EXPECT_FALSE(high["priority_notes"].empty());
  }
}

// A frame scenario outside the study runs on an idle device an earlier scenario created with
// the same queues and priorities, and says so; the study's scenarios and the preemption cells
// create their own.
TEST_F(AllPresets, OnlyFrameScenariosOutsideTheStudyReuseAnIdleDeviceOfTheirConfiguration) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const auto run = read_json_file(*out_ / "run.json");
  std::map<std::string, nlohmann::json> created;  // scenario name -> its queues
  std::map<std::string, std::int64_t> uses;       // creator -> the last use seen
  std::size_t reused = 0;
  for (const auto& entry : run["scenarios"]) {
    const std::string dir = entry["directory"].get<std::string>();
    SCOPED_TRACE(dir);
    const auto meta = read_json_file(*out_ / dir / "meta.json");
    const auto& opening = meta["device_opening"];
    ASSERT_TRUE(opening["api_device"].is_object()) << opening.dump();
    const std::string creator = opening["api_device"]["created_for"].get<std::string>();
    const std::int64_t use = opening["api_device"]["use"].get<std::int64_t>();
    nlohmann::json queues = nlohmann::json::array();
    // What the device was created with: every queue as asked for and as granted, and the
    // notes on priorities (which name the queues).
    for (const auto& q : meta["queues"])
      queues.push_back({q["name"], q["type"], q["priority_requested"], q["priority_granted"]});
    queues.push_back(meta["priority_notes"]);
    if (dir.rfind("non-intrusiveness/", 0) == 0 || dir.rfind("preemption-matrix/", 0) == 0 ||
        use == 1) {
      EXPECT_EQ(use, 1);
      EXPECT_EQ(creator, opening["opened_for"]);
      created[creator] = queues;
      uses[creator] = 1;
      continue;
    }
    // A reuse: of a device created earlier in the run, for the same queues, its uses counting
    // up (by more than one where an unwritten run used it between, as a CPU device's pacing
    // probe does).
    ++reused;
    ASSERT_TRUE(created.count(creator)) << creator << " did not run before " << dir;
    EXPECT_EQ(created[creator], queues);
    EXPECT_GT(use, uses[creator]);
    uses[creator] = use;
  }
  // 27 of the 37 other presets on lavapipe: they share ten configurations.
  EXPECT_GE(reused, 20u) << "most of the 37 other presets share a few configurations";
}

TEST_F(AllPresets, SummaryHasAPollRowPerWorkload) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const auto table = read_csv((*out_ / "default" / "summary.csv").string(), kSummaryColumns);
  std::size_t poll_rows = 0;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    if (table.at(r, "clock") != "poll") continue;
    ++poll_rows;
    EXPECT_EQ(table.at(r, "frames"), std::to_string(kFrames));
    EXPECT_LE(*table.number(r, "start_p5_us"), *table.number(r, "start_p50_us"));
    EXPECT_LE(*table.number(r, "start_p50_us"), *table.number(r, "start_p95_us"));
    EXPECT_GE(*table.number(r, "duration_p50_us"), 0.0);
  }
  EXPECT_EQ(poll_rows, 8u);
}

}  // namespace
}  // namespace gpuoverlap
