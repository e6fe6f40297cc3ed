// The tools on what `run --all` wrote (the AllPresets run, all_presets.h): the results
// history keeps it, report, compare and plot.py read every scenario, report.md answers the five
// questions first, and the viewer draws the study and the matrices as pictures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "all_presets.h"
#include "analysis/csv_table.h"
#include "analysis/verdict.h"
#include "results_tools.h"
#include "run_binary.h"
#include "run_checks.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

// The results history keeps `run --all` itself: every scenario's durations, the preemption
// cells' urgent latencies, the game frame's intervals; and its series are judged.
TEST_F(AllPresets, TheHistoryKeepsTheWholeSuite) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const fs::path db = temp_path("all-history.sqlite");
  fs::remove(db);
  const auto kept = run_gpuoverlap("history ingest " + out_->string() + " --db " + db.string());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("(" + std::to_string(kScenarios.size()) + " scenarios,"),
            std::string::npos)
      << kept.output;
  for (const char* series :
       {"--scenario default --series \"Compute A\" --clock ts",
        "--scenario preemption-matrix/big-dispatch-normal --series urgent --clock ts --metric "
        "latency_p50_us",
        "--scenario game-frame --series frame --clock cpu --metric frame_interval_p99_us",
        // The report's answers: overlap, what a barrier costs, the study's decisions.
        "--scenario default --series frame --metric cross_queue_overlap_pct",
        "--scenario no-barriers --series frame --metric same_queue_overlap_pct",
        "--scenario barrier-cost --series \"P legacy > C legacy\" --metric barrier_gap_p50_us",
        "--scenario non-intrusiveness --series unmanaged --metric decision --clock study",
        "--scenario non-intrusiveness --series managed --metric compiles_per_s --clock cpu"}) {
    const auto trend =
        run_gpuoverlap(std::string("history trend ") + series + " --db " + db.string());
    EXPECT_EQ(trend.exit_code, 0) << series << "\n" << trend.output;
  }
  // A primary endpoint's decision, as verdict.csv has it (its ratio too where it has one: a
  // study without the power to decide may have none).
  const auto verdicts = read_csv((*out_ / "non-intrusiveness" / "verdict.csv").string(),
                                 kVerdictColumns, /*allow_missing=*/true);
  std::string effect;
  for (std::size_t r = 0; r < verdicts.rows.size() && effect.empty(); ++r)
    if (verdicts.at(r, "role") == "primary")
      effect = "--series \"" + verdicts.at(r, "condition") + "\" --metric " +
               verdicts.at(r, "metric") +
               (verdicts.number(r, "ratio_p50") ? ":ratio_p50" : ":decision");
  ASSERT_FALSE(effect.empty()) << "no primary endpoint in verdict.csv";
  const auto effect_trend = run_gpuoverlap("history trend --scenario non-intrusiveness " + effect +
                                           " --clock study --db " + db.string());
  EXPECT_EQ(effect_trend.exit_code, 0) << effect << "\n" << effect_trend.output;
  const auto judged = run_gpuoverlap("history regressions --db " + db.string());
  EXPECT_EQ(judged.exit_code, 0) << judged.output << "one run has no change point";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  // A study whose verdict.csv is damaged: the run is refused whole, nothing written.
  const fs::path damaged = fresh_path(temp_path("all-damaged"));
  fs::copy(*out_, damaged, fs::copy_options::recursive);
  std::ofstream(damaged / "non-intrusiveness" / "verdict.csv", std::ios::app)
      << "managed,frame_interval_us,x,1,1,1,1,1,1,1,intrusive\n";
  const auto refused =
      run_gpuoverlap("history ingest " + damaged.string() + " --db " + db.string());
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("verdict.csv"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(db)) << "a damaged folder is found before the history is opened";
  fs::remove_all(damaged);
}

// report, compare and plot.py on the output of `run --all` itself (studies, matrices).
TEST_F(AllPresets, ReportComparePlotReadEveryScenario) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  EXPECT_NE(result_->output.find("--all: 12 presets run once, as part of a matrix"),
            std::string::npos);
  expect_tools_read_every_scenario(*out_);
  const std::string page = read_text_file(*out_ / "report.md");
  const std::string md = read_text_file(*out_ / "report-details.md");
  EXPECT_NE(page.find("## Background processing: study `non-intrusiveness`\n"), std::string::npos);
  EXPECT_NE(page.find("positive control"), std::string::npos);
  EXPECT_NE(md.find("## Study non-intrusiveness\n"), std::string::npos);
  EXPECT_TRUE(fs::exists(*out_ / "plots" / "non-intrusiveness" / "verdict.png"));
  // The workflow presets bind their committed variants: the run and the report compare each
  // compute workload's GPU duration before and after.
  EXPECT_NE(result_->output.find("bgp-benchmark-priming: GPU duration before and after the "
                                 "committed variant was bound"),
            std::string::npos);
  const std::size_t section = md.find("## bgp-single-frame-analysis\n");
  ASSERT_NE(section, std::string::npos);
  const std::size_t table = md.find("**Committed variants**", section);
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(table, md.find("\n## ", section + 1));
  EXPECT_NE(md.find("| Compute Queue A | ", table), std::string::npos);
}

// report.md of `run --all` answers first: the five questions in order, each with a number and a
// link to a figure that plot.py drew, in the first 60 lines; then one table per family (a row
// per study condition, a row per matrix cell); at most 400 lines, every scenario in the
// details page.
TEST_F(AllPresets, ReportAnswersTheFiveQuestionsFirst) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  // The plots and the report, unless the test above made them (it runs first in one process).
  if (!fs::exists(*out_ / "report-details.md")) expect_tools_read_every_scenario(*out_);
  const std::string page = read_text_file(*out_ / "report.md");
  std::vector<std::string> lines;
  for (std::size_t begin = 0; begin < page.size();) {
    const std::size_t end = page.find('\n', begin);
    lines.push_back(page.substr(begin, end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  EXPECT_LE(lines.size(), 400u) << page;
  std::size_t previous = 0;
  for (const char* question :
       {"**1. Does DIRECT overlap COMPUTE?** ", "**2. Do dispatches on one queue overlap",
        "**3. What does each barrier kind cost?** ",
        "**4. Is background processing non-intrusive?** ",
        "**5. How fast does high-priority compute get the GPU?** "}) {
    SCOPED_TRACE(question);
    std::size_t line = 0;
    while (line < lines.size() && lines[line].rfind(question, 0) != 0) ++line;
    ASSERT_LT(line, 60u) << page;
    EXPECT_GE(line, previous);
    previous = line;
    // The answer (its paragraph, up to the next blank line) has a number and a figure that
    // exists.
    std::string answer;
    for (std::size_t l = line; l < lines.size() && !lines[l].empty(); ++l)
      answer += lines[l] + "\n";
    EXPECT_NE(answer.find_first_of("0123456789", std::string(question).size()), std::string::npos)
        << answer;
    EXPECT_EQ(answer.find("Not measured"), std::string::npos) << answer;
    const std::size_t link = answer.find("](plots/");
    ASSERT_NE(link, std::string::npos) << answer;
    const std::string target = answer.substr(link + 2, answer.find(')', link) - link - 2);
    EXPECT_TRUE(fs::exists(*out_ / target)) << target;
  }
  // A figure per answer: the study's forest plot, the matrix's heat map.
  EXPECT_TRUE(fs::exists(*out_ / "plots" / "non-intrusiveness" / "forest.png"));
  EXPECT_TRUE(fs::exists(*out_ / "plots" / "preemption-matrix" / "matrix.png"));
  EXPECT_NE(page.find("](plots/non-intrusiveness/forest.png)"), std::string::npos);
  EXPECT_NE(page.find("](plots/preemption-matrix/matrix.png)"), std::string::npos);
  // The study's table: a row per condition.
  const auto verdict = read_json_file(*out_ / "non-intrusiveness" / "verdict.json");
  ASSERT_EQ(verdict["conditions"].size(), 6u);
  for (const auto& c : verdict["conditions"]) {
    const std::string row =
        "| " + c["condition"].get<std::string>() +
        (c["control"].get<bool>()            ? " (control) | "
         : c["null_control"].get<bool>()     ? " (null control: the baseline again) | "
         : c["negative_control"].get<bool>() ? " (negative control: idle threads on every CPU) | "
                                             : " | ");
    EXPECT_NE(page.find("\n" + row), std::string::npos) << row;
  }
  // Answer 4 says what the null control (the A/A test) found and what a player would see of
  // each policy: its late frames beside the baseline's.
  EXPECT_NE(page.find(verdict["null_false_alarm"].get<bool>()
                          ? "the null control (the baseline again) was **called intrusive**"
                          : "the null control (the baseline again) was not called intrusive"),
            std::string::npos);
  // ... and what the negative control found: whether the harness left the frame alone.
  EXPECT_NE(page.find(verdict["harness_fault"].get<bool>()
                          ? "**harness fault**: the negative control"
                          : "the negative control (idle-priority threads on every foreground CPU) "
                            "was not called intrusive"),
            std::string::npos);
  EXPECT_EQ(page.find("idle-spinners **"), std::string::npos)
      << "the negative control is no policy";
  EXPECT_NE(page.find("managed **"), std::string::npos);
  EXPECT_NE(page.find("% of frames late, baseline "), std::string::npos);
  EXPECT_EQ(page.find("null **"), std::string::npos) << "the null control is no policy";
  // The preemption table: a row per matrix cell.
  std::size_t cells = 0;
  for (const std::string& s : kScenarios)
    if (s.rfind("preemption-matrix/", 0) == 0) {
      ++cells;
      EXPECT_NE(page.find("\n| " + s + " | "), std::string::npos) << s;
    }
  EXPECT_EQ(cells, 12u);
  // Every scenario has its section in the details page.
  const std::string details = read_text_file(*out_ / "report-details.md");
  for (const std::string& s : kScenarios)
    EXPECT_NE(details.find("\n## " + s + "\n"), std::string::npos) << s;
}

// The viewer on `run --all`: a study's scenario shows the study's forest plot and the control's
// dose-response, a matrix cell the matrix as a grid, and `default` its overlap matrix as a grid
// in which dependent pairs never overlapped.
TEST_F(AllPresets, TheViewerShowsTheStudyAndTheMatricesAsPictures) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const fs::path shot = *out_ / "grids.png";
  auto view = [&](const std::string& scenario) {
    const auto r = run_gpuoverlap_on_display("view " + out_->string() + " --scenario '" + scenario +
                                             "' --height 1600 --screenshot " + shot.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_json_file(shot.string() + ".layout.json");
  };
  std::string round;
  for (const std::string& s : kScenarios)
    if (round.empty() && s.rfind("non-intrusiveness/", 0) == 0) round = s;
  const auto study = view(round);
  const auto verdict =
      read_csv((*out_ / "non-intrusiveness" / "verdict.csv").string(), kVerdictColumns, true);
  std::size_t forest = 0;
  std::set<std::string> primary;
  for (std::size_t v = 0; v < verdict.rows.size(); ++v) {
    forest += verdict.at(v, "role") == "primary";
    if (verdict.at(v, "role") == "primary" &&
        verdict.at(v, "tests").find("median") != std::string::npos)
      primary.insert(verdict.at(v, "metric"));
  }
  ASSERT_TRUE(study["forest"].is_object()) << study.dump();
  EXPECT_EQ(study["forest"]["rows"].size(), forest);
  // Where each condition's time went, as verdict.json says it.
  std::vector<std::string> accounts;
  const auto study_verdict = read_json_file(*out_ / "non-intrusiveness" / "verdict.json");
  for (const auto& c : study_verdict["conditions"])
    if (c["time_account"].is_object())
      accounts.push_back(c["condition"].get<std::string>() + ": " +
                         c["time_account"]["line"].get<std::string>());
  ASSERT_FALSE(accounts.empty());
  ASSERT_EQ(study["time_accounts"].size(), accounts.size()) << study["time_accounts"].dump();
  for (std::size_t i = 0; i < accounts.size(); ++i)
    EXPECT_EQ(study["time_accounts"][i]["condition"].get<std::string>() + ": " +
                  study["time_accounts"][i]["line"].get<std::string>(),
              accounts[i]);
  const auto doses = read_json_file(*out_ / "non-intrusiveness" / "verdict.json")["control_doses"];
  ASSERT_GE(doses.size(), 2u);
  ASSERT_EQ(study["dose_response"].size(), primary.size())
      << "a curve per primary endpoint decided on its median";
  for (const auto& curve : study["dose_response"]) {
    // A point per dose whose row has a median ratio, that ratio, in ascending threads.
    std::vector<std::pair<std::uint32_t, double>> expected;
    for (const auto& dose : doses)
      for (std::size_t v = 0; v < verdict.rows.size(); ++v)
        if (verdict.at(v, "condition") == dose["condition"] &&
            verdict.at(v, "metric") == curve["metric"] && verdict.number(v, "ratio_p50"))
          expected.emplace_back(dose["threads"].get<std::uint32_t>(),
                                *verdict.number(v, "ratio_p50"));
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(curve["points"].size(), expected.size()) << curve.dump();
    for (std::size_t k = 0; k < expected.size(); ++k) {
      EXPECT_EQ(curve["points"][k]["threads"], expected[k].first);
      EXPECT_DOUBLE_EQ(curve["points"][k]["ratio_p50"].get<double>(), expected[k].second);
    }
  }
  std::string matrix_cell;
  for (const std::string& s : kScenarios)
    if (s.rfind("preemption-matrix/", 0) == 0) matrix_cell = s;  // the last cell
  const auto cell = view(matrix_cell);
  expect_grids_match_results(*out_, cell);
  EXPECT_EQ(cell["preemption_grid"]["cells"].size(), 12u);
  const auto plain = view("default");
  ASSERT_FALSE(plain["overlap_grid"].is_null());
  expect_grids_match_results(*out_, plain);
  for (const auto& pair : plain["overlap_grid"]["cells"])
    if (pair["dependent"].get<bool>()) {
      EXPECT_EQ(pair["overlapped"], 0) << pair.dump();
    }
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");
}

}  // namespace
}  // namespace gpuoverlap
