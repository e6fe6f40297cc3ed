// `compare` and `report` on real runs of the binary (lavapipe on CI).
// lavapipe's "GPU" is the CPU, so its speed follows the machine's load: two identical runs
// measured 20% apart while another job ran. Hence the three runs below execute concurrently
// (sharing whatever load there is), ctest runs this test alone (RUN_SERIAL), and the gate uses
// a 40% threshold: the slowed run is 4x the work (+300%), identical runs must stay inside it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "run_binary.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

class CompareAndReport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ =
        new fs::path(fs::temp_directory_path() / ("gpuoverlap-cmp-" + std::to_string(::getpid())));
    fs::remove_all(*root_);
    fs::create_directories(*root_);
    // The same preset with every workload doing 4x the iterations.
    std::ofstream(*root_ / "slower.toml") << R"(name = "three-dispatches"
[queues.direct]
type = "direct"
[[workload]]
name = "Compute A"
queue = "direct"
iterations = 256
[[workload]]
name = "Compute B"
queue = "direct"
iterations = 512
[[workload]]
name = "Compute C"
queue = "direct"
iterations = 256
depends_on = ["Compute A"]
)";
    const std::string common = " --frames 15 --warmup 2 --out ";
    auto base = std::async(std::launch::async, [&] {
      return run_gpuoverlap("run three-dispatches" + common + (*root_ / "base").string());
    });
    auto same = std::async(std::launch::async, [&] {
      return run_gpuoverlap("run three-dispatches" + common + (*root_ / "same").string());
    });
    auto slow = std::async(std::launch::async, [&] {
      return run_gpuoverlap("run " + (*root_ / "slower.toml").string() + common +
                            (*root_ / "slow").string());
    });
    runs_ok_ = base.get().exit_code == 0 && same.get().exit_code == 0 && slow.get().exit_code == 0;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }
  static fs::path* root_;
  static bool runs_ok_;
};
fs::path* CompareAndReport::root_ = nullptr;
bool CompareAndReport::runs_ok_ = false;

TEST_F(CompareAndReport, SameConfigurationPassesTheGate) {
  ASSERT_TRUE(runs_ok_);
  const auto r = run_gpuoverlap("compare " + (*root_ / "base").string() + " " +
                                (*root_ / "same").string() + " --threshold-pct 40");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 of 10 metrics changed"), std::string::npos) << r.output;
}

TEST_F(CompareAndReport, DeliberatelySlowerRunFailsTheGate) {
  ASSERT_TRUE(runs_ok_);
  const fs::path csv = *root_ / "comparison.csv";
  const auto r =
      run_gpuoverlap("compare " + (*root_ / "base").string() + " " + (*root_ / "slow").string() +
                     " --threshold-pct 40 --csv " + csv.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Compute B            duration"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CHANGED: slower"), std::string::npos) << r.output;
  std::ifstream in(csv);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(all.find("three-dispatches,Compute B,duration,"), std::string::npos);
  EXPECT_NE(all.find(",slower\n"), std::string::npos);
}

TEST_F(CompareAndReport, BadDirectoriesAreErrors) {
  auto r = run_gpuoverlap("compare /nonexistent " + (*root_ / "base").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("baseline: /nonexistent: not a directory"), std::string::npos)
      << r.output;
  r = run_gpuoverlap("compare " + (*root_ / "base").string() + " " + root_->string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("not a directory written by gpuoverlap run"), std::string::npos)
      << r.output;
  EXPECT_EQ(run_gpuoverlap("compare only-one-argument").exit_code, 2);
}

TEST_F(CompareAndReport, ReportPutsTheRunOnOnePage) {
  ASSERT_TRUE(runs_ok_);
  const auto r = run_gpuoverlap("report " + (*root_ / "base").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(*root_ / "base" / "report.md");
  std::string md((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(md.find("# gpuoverlap report: base"), std::string::npos) << md;
  EXPECT_NE(md.find("| device | "), std::string::npos);
  EXPECT_NE(md.find("## three-dispatches"), std::string::npos);
  EXPECT_NE(md.find("| Compute B | 15 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Compute A → Compute C | legacy |"), std::string::npos) << md;
  EXPECT_NE(md.find("(three-dispatches/trace.json)"), std::string::npos) << md;
  EXPECT_EQ(run_gpuoverlap("report /nonexistent").exit_code, 1);
}

}  // namespace
}  // namespace gpuoverlap
