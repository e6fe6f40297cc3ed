// Hostile input through the binary: exit statuses that separate bad input (2) from a measured
// problem (1), an output folder checked before any GPU work, outputs that are never written
// through a link or into a FIFO, names that would break a file name refused before measuring.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "run_binary.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

class HostileCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("gpuoverlap-hostile-cli-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    // One small real run to point report and compare at.
    const auto r = run_gpuoverlap("run three-dispatches --frames 2 --warmup 0 --out " +
                                  (root_ / "run").string());
    run_ok_ = r.exit_code == 0;
    run_output_ = r.output;
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
  // A line that only a command which opened a Vulkan device prints.
  static bool opened_a_device(const std::string& output) {
    return output.find("device 0:") != std::string::npos;
  }
  static inline fs::path root_;
  static inline bool run_ok_ = false;
  static inline std::string run_output_;
};

TEST_F(HostileCli, AnUnusableOrOccupiedOutFolderIsRefusedBeforeAnyGpuWork) {
  std::ofstream(root_ / "a-file") << "x";
  auto r = run_gpuoverlap("run three-dispatches --frames 1 --out " +
                          (root_ / "a-file" / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--out"), std::string::npos) << r.output;
  EXPECT_FALSE(opened_a_device(r.output)) << r.output;

  fs::create_directories(root_ / "mine");
  std::ofstream(root_ / "mine" / "notes.txt") << "mine";
  r = run_gpuoverlap("run three-dispatches --frames 1 --out " + (root_ / "mine").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("already holds files"), std::string::npos) << r.output;
  EXPECT_FALSE(opened_a_device(r.output)) << r.output;
  r = run_gpuoverlap("run three-dispatches --frames 1 --replace --out " +
                     (root_ / "mine").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;  // not a results folder: nothing deleted
  EXPECT_EQ(read(root_ / "mine" / "notes.txt"), "mine");
}

TEST_F(HostileCli, ReplaceEmptiesAResultsFolderSoOldAndNewNeverMix) {
  const fs::path out = root_ / "again";
  auto r = run_gpuoverlap("run three-dispatches --frames 1 --warmup 0 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ofstream(out / "three-dispatches" / "background.csv") << "stale";
  r = run_gpuoverlap("run three-dispatches --frames 1 --warmup 0 --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(fs::exists(out / "three-dispatches" / "background.csv"));
  r = run_gpuoverlap("run three-dispatches --frames 1 --warmup 0 --replace --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(out / "three-dispatches" / "background.csv"));
  EXPECT_TRUE(fs::exists(out / "three-dispatches" / "records.csv.gz"));
}

TEST_F(HostileCli, ExitStatusTellsBadInputFromAMeasuredProblem) {
  ASSERT_TRUE(run_ok_) << run_output_;
  const std::string run = (root_ / "run").string();
  EXPECT_EQ(run_gpuoverlap("compare " + run + " " + run).exit_code, 0);
  EXPECT_EQ(run_gpuoverlap("compare " + run + " /nonexistent").exit_code, 2);
  EXPECT_EQ(run_gpuoverlap("report /nonexistent").exit_code, 2);
  EXPECT_EQ(run_gpuoverlap("run --device 99 three-dispatches --frames 1 --out " +
                           (root_ / "dev99").string())
                .exit_code,
            2);
  EXPECT_FALSE(fs::exists(root_ / "dev99"));  // the folder made for it is removed again
  EXPECT_EQ(run_gpuoverlap("run three-dispatches --foreground default").exit_code, 2);
  const auto help = run_gpuoverlap("compare --help");
  EXPECT_NE(help.output.find("2 bad input"), std::string::npos) << help.output;
}

TEST_F(HostileCli, OutputsAreNeverWrittenThroughALinkOrIntoAFifo) {
  ASSERT_TRUE(run_ok_) << run_output_;
  const std::string run = (root_ / "run").string();
  std::ofstream(root_ / "victim.txt") << "precious";
  fs::create_symlink(root_ / "victim.txt", root_ / "link.md");
  auto r = run_gpuoverlap("report " + run + " --out " + (root_ / "link.md").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
  EXPECT_EQ(read(root_ / "victim.txt"), "precious");

  ASSERT_EQ(::mkfifo((root_ / "fifo.csv").c_str(), 0600), 0);
  r = run_gpuoverlap("compare " + run + " " + run + " --csv " + (root_ / "fifo.csv").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;  // refused at once, not blocked on the FIFO
  // On the timestamp clock: on lavapipe the poller often loses its CPU, and a frame whose poll
  // stamps were disturbed is left out of the poll clock's figures, so which rows it has varies.
  r = run_gpuoverlap("compare " + run + " " + run + " --clock ts --csv -");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("three-dispatches,Compute B,duration,"), std::string::npos) << r.output;
  r = run_gpuoverlap("report " + run + " --out -");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("# gpuoverlap report"), std::string::npos) << r.output;
}

TEST_F(HostileCli, ANameThatCannotBecomeAFolderIsRefusedBeforeMeasuring) {
  const fs::path file = root_ / "long.toml";
  std::ofstream(file) << "name = \"" << std::string(256, 'n')
                      << "\"\n[queues.d]\ntype = \"direct\"\n[[workload]]\nname = \"A\"\n"
                         "queue = \"d\"\n";
  const auto r = run_gpuoverlap("run " + file.string() + " --out " + (root_ / "long").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("at most 64"), std::string::npos) << r.output;
  EXPECT_FALSE(opened_a_device(r.output)) << r.output;
}

}  // namespace
}  // namespace gpuoverlap
