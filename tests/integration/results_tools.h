// Test helper: every tool that reads results (`report`, `compare`, `plots/plot.py`) run on one
// results directory written by `gpuoverlap run`, with the invariants each must hold there. A
// run that nests its scenarios (studies, matrices) once broke all three unnoticed, because
// each tool was only tried on flat runs; every kind of run the README shows goes through this.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "analysis/csv_table.h"
#include "run_binary.h"
#include "timeline/export.h"

namespace gpuoverlap {

inline std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline nlohmann::json read_json_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// Debian's interpreter (it has matplotlib and pandas), on the source tree's plot.py.
inline CommandResult run_plot(const std::filesystem::path& results) {
  return run_command("/usr/bin/python3 " + std::string(GPUOVERLAP_SOURCE_DIR) + "/plots/plot.py " +
                     results.string());
}

// A scenario's records table: records.csv.gz, or records.csv in results from before it was
// compressed.
inline std::filesystem::path records_of(const std::filesystem::path& scenario_dir) {
  const auto gz = scenario_dir / "records.csv.gz";
  return std::filesystem::exists(gz) ? gz : scenario_dir / "records.csv";
}

// The viewer's grids in a screenshot's sidecar (`drawn`) against the results: the overlap grid
// has a cell per pair of the scenario's workloads with counts that make its share; the
// preemption grid a cell per preemption scenario beside the one shown (run.json), each with as
// many urgent jobs as its records, the one shown outlined.
inline void expect_grids_match_results(const std::filesystem::path& run,
                                       const nlohmann::json& drawn) {
  const auto index = read_json_file(run / "run.json");
  const std::string shown = drawn["scenario"];
  std::string directory;
  for (const auto& entry : index["scenarios"])
    if (entry["name"] == shown) directory = entry["directory"];
  ASSERT_FALSE(directory.empty()) << shown;
  if (!drawn["overlap_grid"].is_null()) {
    const auto& grid = drawn["overlap_grid"];
    const std::size_t n = grid["workloads"].size();
    EXPECT_EQ(grid["cells"].size(), n * (n - 1) / 2) << "a cell per pair";
    for (const auto& cell : grid["cells"]) {
      const double frames = cell["frames"], overlapped = cell["overlapped"];
      EXPECT_LE(overlapped, frames);
      EXPECT_DOUBLE_EQ(cell["share"].get<double>(), frames > 0 ? overlapped / frames : 0.0);
    }
  }
  if (drawn["preemption_grid"].is_null()) return;
  const auto& grid = drawn["preemption_grid"];
  const std::string group = grid["group"];
  std::set<std::string> beside;
  for (const auto& entry : index["scenarios"]) {
    const std::string name = entry["name"];
    const auto meta = read_json_file(run / entry["directory"].get<std::string>() / "meta.json");
    const auto slash = name.rfind('/');
    if (meta.contains("preemption") &&
        (slash == std::string::npos ? "" : name.substr(0, slash)) == group)
      beside.insert(name);
  }
  std::set<std::string> cells;
  std::size_t outlined = 0;
  for (const auto& cell : grid["cells"]) {
    const std::string name = cell["scenario"];
    EXPECT_TRUE(cells.insert(name).second) << name << " twice";
    if (cell["shown"].get<bool>()) {
      ++outlined;
      EXPECT_EQ(name, shown);
    }
    std::string cell_dir;
    for (const auto& entry : index["scenarios"])
      if (entry["name"] == name) cell_dir = entry["directory"];
    const auto records = read_csv(records_of(run / cell_dir).string(), kRecordColumns);
    std::size_t urgent = 0;
    for (std::size_t r = 0; r < records.rows.size(); ++r)
      urgent += records.at(r, "workload") == "urgent" ? 1 : 0;
    EXPECT_EQ(cell["submissions"].get<std::size_t>(), urgent) << name;
    EXPECT_LE(cell["misses"].get<std::size_t>(), urgent) << name;
    if (!cell["p99_us"].is_null()) {
      EXPECT_LE(cell["p50_us"].get<double>(), cell["p99_us"].get<double>()) << name;
    }
  }
  EXPECT_EQ(cells, beside) << "a cell per preemption scenario beside " << shown;
  EXPECT_EQ(outlined, 1u);
}

// run.json names every scenario's directory from the root; report, compare (against a copy)
// and plot.py read every scenario; the report's image links all resolve.
inline void expect_tools_read_every_scenario(const std::filesystem::path& run) {
  namespace fs = std::filesystem;
  SCOPED_TRACE(run.string());
  const auto index = read_json_file(run / "run.json");
  std::set<std::string> names;
  for (const auto& entry : index["scenarios"]) {
    const std::string name = entry["name"], directory = entry["directory"];
    EXPECT_TRUE(names.insert(name).second) << name << " ran twice";
    EXPECT_TRUE(fs::exists(run / directory / "meta.json")) << directory;
    // records.csv.gz; results from before it was compressed have records.csv.
    EXPECT_TRUE(fs::exists(run / directory / "records.csv.gz") ||
                fs::exists(run / directory / "records.csv"))
        << directory;
  }
  ASSERT_FALSE(names.empty());

  const auto plot = run_plot(run);
  ASSERT_EQ(plot.exit_code, 0) << plot.output;
  for (const auto& entry : index["scenarios"]) {
    const fs::path plots = run / "plots" / entry["directory"].get<std::string>();
    EXPECT_TRUE(fs::exists(plots / "timeline.png") || fs::exists(plots / "preemption.png"))
        << plots;
  }

  const auto report = run_gpuoverlap("report " + run.string());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  // report.md answers and tabulates; report-details.md has a section per scenario. Every
  // figure either links to exists.
  const std::string page = read_text_file(run / "report.md");
  const std::string md = read_text_file(run / "report-details.md");
  for (const std::string& name : names)
    EXPECT_NE(md.find("## " + name + "\n"), std::string::npos) << name;
  // Where the time went, from run.json's seconds (results of the first release have none).
  if (index["scenarios"].front().contains("seconds")) {
    EXPECT_NE(page.find("**Time:**"), std::string::npos);
  }
  const std::regex image(R"(\]\((plots/[^)]+\.png)\))");
  std::size_t links = 0;
  for (const std::string* text : {&page, &md})
    for (auto it = std::sregex_iterator(text->begin(), text->end(), image);
         it != std::sregex_iterator(); ++it, ++links)
      EXPECT_TRUE(fs::exists(run / (*it)[1].str())) << (*it)[1].str();
  EXPECT_GE(links, names.size());

  // The viewer opens the whole folder (every scenario read) and draws its first and last.
  for (const std::string& name : {index["scenarios"].front()["name"].get<std::string>(),
                                  index["scenarios"].back()["name"].get<std::string>()}) {
    const fs::path shot = run / "view.png";
    const auto view = run_gpuoverlap_on_display("view " + run.string() + " --scenario '" + name +
                                                "' --screenshot " + shot.string());
    ASSERT_EQ(view.exit_code, 0) << view.output;
    const auto drawn = read_json_file(shot.string() + ".layout.json");
    EXPECT_EQ(drawn["scenario"], name);
    // The scenario list is a tree (study > condition > round, matrix > cell) whose leaves are
    // every scenario once, each under the folders of its name.
    std::size_t leaves = 0;
    const std::function<void(const nlohmann::json&, const std::string&)> walk =
        [&](const nlohmann::json& nodes, const std::string& prefix) {
          for (const auto& n : nodes) {
            const std::string path = prefix + n["label"].get<std::string>();
            if (n.contains("scenario")) {
              ++leaves;
              EXPECT_EQ(index["scenarios"][n["scenario"].get<std::size_t>()]["name"], path);
            }
            if (n.contains("children")) walk(n["children"], path + "/");
          }
        };
    walk(drawn["scenario_tree"], "");
    EXPECT_EQ(leaves, names.size());
    expect_grids_match_results(run, drawn);
    // A study's scenario shows its study's verdict, read without an error.
    if (!drawn["verdict"].is_null()) {
      EXPECT_FALSE(drawn["verdict"].contains("error")) << drawn["verdict"].dump();
    }
    fs::remove(shot);
    fs::remove(shot.string() + ".layout.json");
  }

  const fs::path copy = run.string() + "-copy";
  fs::remove_all(copy);
  fs::copy(run, copy, fs::copy_options::recursive);
  const auto compare = run_gpuoverlap("compare " + run.string() + " " + copy.string());
  EXPECT_EQ(compare.exit_code, 0) << compare.output;
  EXPECT_NE(compare.output.find("\n0 of "), std::string::npos) << compare.output;
  fs::remove_all(copy);
}

}  // namespace gpuoverlap
