// libFuzzer target: a results folder with one damaged file, through everything that reads
// results (load_results, metric_series on every clock, compare_runs, markdown_report). The
// input's first line names the file it replaces (run.json, s/meta.json, s/records.csv,
// s/summary.csv, z/records.csv.gz, study/verdict.json, study/verdict.csv); the rest is its content:
// `s` keeps its table as plain text (as older results do), so the CSV reader is fuzzed directly,
// and `z` as gzip, so the inflating reader (damage, bombs) is too. Every other file is a valid one
// written at start-up, so the fuzzer reaches the code behind each file's checks.
//
// Contract under test: every input gives a loaded run or one error line; nothing aborts.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "analysis/study_files.h"
#include "core/gzip.h"
#include "core/input_file.h"
#include "scenarios/scenario.h"
#include "timeline/export.h"

using namespace gpuoverlap;
namespace fs = std::filesystem;

namespace {

fs::path g_root;

void write(const fs::path& path, std::string_view content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(content.data(), content.size());
}

// The valid folder: run.json naming one scenario and one study condition, each written by the
// exporter from a two-workload scenario with a dependency.
void write_valid_results() {
  fs::remove_all(g_root);
  auto s = parse_scenario(
      "name = \"s\"\n[queues.d]\ntype = \"direct\"\n[queues.c]\ntype = \"compute\"\n"
      "[[workload]]\nname = \"A\"\nqueue = \"d\"\n[[workload]]\nname = \"B\"\nqueue = \"c\"\n"
      "depends_on = [\"A\"]\n",
      "s.toml");
  if (!s) __builtin_trap();
  ScenarioTimeline t;
  for (std::uint32_t f = 0; f < 4; ++f) {
    t.records.push_back(
        {.frame = f, .workload = 0, .poll_start_us = 1.0 + f, .poll_end_us = 5, .ts_start_us = 1});
    t.records.push_back({.frame = f, .workload = 1, .poll_start_us = 6, .poll_end_us = 9.5 + f});
  }
  if (!write_scenario_results(g_root / "s", *s, t, {{"scenario", {{"name", "s"}}}}))
    __builtin_trap();
  // `s` as results from before the table was compressed.
  auto text = read_input_text(g_root / "s" / "records.csv.gz", 1u << 20);
  if (!text) __builtin_trap();
  write(g_root / "s" / "records.csv", *text);
  fs::remove(g_root / "s" / "records.csv.gz");
  if (!write_scenario_results(g_root / "z", *s, t, {{"scenario", {{"name", "z"}}}}))
    __builtin_trap();
  // The study's membership as the runner writes it, so the loaders reach its verdict files.
  const nlohmann::json membership = {{"name", "study"}, {"condition", "base"}, {"round", 1}};
  if (!write_scenario_results(g_root / "study" / "base", *s, t,
                              {{"scenario", {{"name", "study/base"}, {"study", membership}}}}))
    __builtin_trap();
  // Both verdict files from the writers, one judged condition and one row, so every member and
  // column the loaders read is there to damage.
  StudyVerdict verdict;
  verdict.study = "study";
  verdict.baseline = "base";
  verdict.rounds = 1;
  verdict.summary = "ok\n";
  ConditionVerdict busy;
  busy.condition = "busy";
  busy.decision = Decision::non_intrusive;
  verdict.conditions.push_back(busy);
  VerdictRow row;
  row.condition = "busy";
  row.metric = "A.start";
  row.ratio_p50 = 1.01;
  row.tail_excess = 0.002;
  row.decision = Decision::non_intrusive;
  verdict.rows.push_back(row);
  write(g_root / "study" / "verdict.json", verdict_json(verdict, VerdictSettings{}).dump());
  write(g_root / "study" / "verdict.csv", verdict_csv(verdict));
  write(g_root / "run.json",
        R"({"scenarios": [{"directory": "s", "seconds": 1.5}, {"directory": "z"},
                       {"directory": "study/base"}]})");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_root = fs::temp_directory_path() / ("gpuoverlap-results-fuzz-" + std::to_string(::getpid()));
  write_valid_results();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  const std::string_view name = input.substr(0, newline);
  if (name != "run.json" && name != "s/meta.json" && name != "s/records.csv" &&
      name != "s/summary.csv" && name != "z/records.csv.gz" && name != "study/verdict.json" &&
      name != "study/verdict.csv")
    return -1;  // not a file this target damages: keep it out of the corpus
  const fs::path damaged = g_root / std::string(name);
  std::string original;
  {
    std::ifstream in(damaged, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  write(damaged, input.substr(newline + 1));
  auto run = load_results(g_root);
  if (!run) {
    if (run.error().message.find('\n') != std::string::npos) __builtin_trap();
  } else {
    for (const LoadedScenario& s : run->scenarios)
      for (Clock clock : {Clock::poll, Clock::ts, Clock::clk}) (void)metric_series(s, clock);
    // Few resamples: the bootstrap's arithmetic is not what is fuzzed, and 2000 per metric
    // would leave the fuzzer a hundred inputs a minute.
    (void)compare_runs(*run, *run, {.resamples = 20});
    // The runs method: one run's p50s and p95s per side, on whatever the damage left.
    (void)compare_runs(std::vector<LoadedRun>{*run, *run}, std::vector<LoadedRun>{*run}, {});
    (void)markdown_report(*run);
  }
  write(damaged, original);
  return 0;
}
