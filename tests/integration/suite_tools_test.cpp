// The main job's other shapes end to end: a preemption matrix with each load in a second
// process, read by report, compare and plot.py (`run --all` itself is in the AllPresets tests,
// all_presets.h), the smaller default sizes of a CPU device, and results of the first release
// (before frames.csv, the shader clock's columns and trace.json.gz) read by every tool.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "results_tools.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

class SuiteTools : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gpuoverlap-suite-tools-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

// A measurement of the first release, as kept under docs/results (its raw files in raw.tar.xz,
// unpacked where they were): report, compare, plot.py and the viewer read it.
TEST_F(SuiteTools, EveryToolReadsResultsOfTheFirstRelease) {
  const fs::path kept =
      fs::path(GPUOVERLAP_SOURCE_DIR) / "docs" / "results" / "2026-11-22-h100-foundation";
  const fs::path copy = root_ / "first-release";
  fs::copy(kept, copy, fs::copy_options::recursive);
  ASSERT_EQ(
      std::system(
          ("tar xJf '" + (copy / "raw.tar.xz").string() + "' -C '" + copy.string() + "'").c_str()),
      0);
  const fs::path run = copy / "with-timestamps";
  ASSERT_TRUE(fs::exists(run / "default" / "records.csv"));
  ASSERT_FALSE(fs::exists(run / "default" / "frames.csv"));  // it is from before frames.csv
  fs::remove(run / "report.md");                             // the report of its day, remade below
  expect_tools_read_every_scenario(run);
  // Its answers come from its own scenarios.
  const std::string page = read_text_file(run / "report.md");
  EXPECT_NE(page.find("**1. Does DIRECT overlap COMPUTE?** **Yes**"), std::string::npos) << page;
}

TEST_F(SuiteTools, ToolsReadALoadProcessMatrix) {
  const fs::path out = root_ / "load-process";
  const auto r = run_gpuoverlap(
      "run preemption-matrix --load-process --priority-fallback --duration-ms 60 --target-ms 5 "
      "--out " +
      out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto index = read_json_file(out / "run.json");
  ASSERT_EQ(index["scenarios"].size(), 12u);
  for (const auto& entry : index["scenarios"])
    EXPECT_EQ(entry["directory"].get<std::string>().rfind("preemption-matrix/", 0), 0u);
  expect_tools_read_every_scenario(out);
  // Each cell opened shows the whole matrix with itself outlined: a click on a cell opens the
  // scenario the sidecar names for it.
  for (const auto& entry : index["scenarios"]) {
    const std::string name = entry["name"];
    const fs::path shot = root_ / "cell.png";
    const auto view = run_gpuoverlap_on_display("view " + out.string() + " --scenario '" + name +
                                                "' --height 1400 --screenshot " + shot.string());
    ASSERT_EQ(view.exit_code, 0) << view.output;
    const auto drawn = read_json_file(shot.string() + ".layout.json");
    ASSERT_FALSE(drawn["preemption_grid"].is_null()) << name;
    EXPECT_EQ(drawn["preemption_grid"]["cells"].size(), 12u);
    EXPECT_TRUE(drawn["overlap_grid"].is_null()) << "a preemption scenario has no overlap matrix";
    expect_grids_match_results(out, drawn);
  }
}

// A CPU device runs smaller defaults, says so and records it; --full-size keeps the files'
// sizes. On a GPU the files' sizes run.
TEST_F(SuiteTools, CpuDeviceRunsSmallerDefaultsAndSaysSo) {
  const fs::path out = root_ / "sizes";
  const auto r = run_gpuoverlap("run three-dispatches --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto meta = read_json_file(out / "three-dispatches" / "meta.json");
  if (meta["device"]["type"] != "cpu") {
    EXPECT_EQ(meta["sizes"]["profile"], "files");
    EXPECT_EQ(meta["settings"]["frames"], 100);
    return;
  }
  EXPECT_EQ(meta["sizes"]["profile"], "cpu-device");
  EXPECT_EQ(meta["settings"]["frames"], 20);
  EXPECT_EQ(meta["settings"]["warmup_frames"], 3);
  EXPECT_NE(r.output.find("CPU device: smaller default sizes"), std::string::npos) << r.output;

  const fs::path full = root_ / "full-size";
  const auto f =
      run_gpuoverlap("run three-dispatches --full-size --warmup 0 --out " + full.string());
  ASSERT_EQ(f.exit_code, 0) << f.output;
  const auto full_meta = read_json_file(full / "three-dispatches" / "meta.json");
  EXPECT_EQ(full_meta["sizes"]["profile"], "files");
  EXPECT_EQ(full_meta["settings"]["frames"], 100);
  EXPECT_EQ(f.output.find("CPU device"), std::string::npos) << f.output;
}

}  // namespace
}  // namespace gpuoverlap
