// `run --concurrent` on the real binary, on two devices: lavapipe's ICD given to the Vulkan
// loader twice. Lavapipe cannot tell whether one device disturbs another (its two devices share
// the same CPUs), so these tests assert what holds on any host: a step starts only once every
// earlier step has ended on every device, a device measured alone ran while the other was idle,
// each device's study of neighbours is judged, and every tool reads the output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "results_tools.h"
#include "run_binary.h"
#include "two_lavapipes.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

// One scenario as a device ran it: its step in the run and when it ran on the CPU clock.
struct Ran {
  std::string device, name;
  std::uint64_t step = 0;
  bool alone = false;
  std::int64_t start_ns = 0, end_ns = 0;
};

// Every scenario of every device of a concurrent run, from each folder's run.json and the
// scenarios' meta.json.
std::vector<Ran> scenarios_run(const fs::path& out) {
  std::vector<Ran> all;
  const auto run = read_json_or_discarded(out / "run.json");
  for (const auto& device : run["devices"]) {
    const std::string folder = device["directory"];
    const auto own = read_json_or_discarded(out / folder / "run.json");
    for (const auto& s : own["scenarios"]) {
      const auto meta =
          read_json_or_discarded(out / folder / s["directory"].get<std::string>() / "meta.json");
      EXPECT_TRUE(meta["concurrent"]["in_step"].get<bool>()) << folder << " " << s["name"];
      all.push_back({folder, s["name"], meta["concurrent"]["step"], meta["concurrent"]["alone"],
                     meta["run_span_ns"]["start"], meta["run_span_ns"]["end"]});
    }
  }
  return all;
}

class ConcurrentDevices : public TwoLavapipesRun<ConcurrentDevices> {
 protected:
  static void SetUpTestSuite() {
    start("concurrent", "rounds",
          "run default --frames 12 --warmup 1 --device all --concurrent --concurrency-rounds 3");
  }
};

TEST_F(ConcurrentDevices, EachDeviceRunsTogetherAndAloneAndIsJudged) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const auto run = read_json_or_discarded(*out_ / "run.json");
  ASSERT_EQ(run["devices"].size(), 2u) << run.dump(2);
  EXPECT_EQ(run["concurrent"]["rounds"], 3);
  EXPECT_EQ(run["concurrent"]["studied"], nlohmann::json::array({"default"}));
  for (const char* folder : {"gpu0", "gpu1"}) {
    const auto verdict = read_json_or_discarded(*out_ / folder / "default" / "verdict.json");
    ASSERT_TRUE(verdict.is_object()) << folder;
    EXPECT_EQ(verdict["baseline"], "alone");
    ASSERT_EQ(verdict["conditions"].size(), 1u);
    EXPECT_EQ(verdict["conditions"][0]["condition"], "together");
    EXPECT_EQ(verdict["progress"]["rounds_run"], 3);
    for (const char* condition : {"alone", "together"})
      for (int round = 1; round <= 3; ++round) {
        const auto meta = read_json_or_discarded(*out_ / folder / "default" / condition /
                                                 ("round-" + std::to_string(round)) / "meta.json");
        EXPECT_EQ(meta["scenario"]["study"]["kind"], "neighbours");
        EXPECT_EQ(meta["concurrent"]["alone"], std::string(condition) == "alone");
      }
  }
  // The run's log says which device each line is of.
  EXPECT_NE(result_->output.find("[gpu1] "), std::string::npos) << result_->output;
}

// By default each device gets a share of the CPUs of its own where every share gets two or more
// (a game frame then fills its share, not the host), else they share the CPUs and the run says
// why. Either way run.json and every meta.json tell which.
TEST_F(ConcurrentDevices, EachDeviceGetsCpusOfItsOwnWhereTheyGoRound) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const auto run = read_json_or_discarded(*out_ / "run.json");
  const std::string cpus = run["concurrent"]["cpus"];
  std::vector<std::set<int>> shares;
  for (const char* folder : {"gpu0", "gpu1"}) {
    const auto meta =
        read_json_or_discarded(*out_ / folder / "default" / "together" / "round-1" / "meta.json");
    EXPECT_EQ(meta.contains("cpu_share"), cpus == "split") << folder << " " << cpus;
    if (meta.contains("cpu_share"))
      shares.emplace_back(meta["cpu_share"].begin(), meta["cpu_share"].end());
  }
  if (cpus == "split") {
    ASSERT_EQ(shares.size(), 2u);
    for (int cpu : shares[0]) EXPECT_FALSE(shares[1].contains(cpu)) << "CPU " << cpu << " twice";
    EXPECT_GE(shares[0].size(), 2u);
    EXPECT_GE(shares[1].size(), 2u);
  } else {
    EXPECT_EQ(cpus, "shared");
    EXPECT_NE(result_->output.find("the devices share the CPUs"), std::string::npos)
        << result_->output;
  }
  // Two CPUs (and a poller pinned beside them) cannot give two devices two CPUs each.
  if (std::thread::hardware_concurrency() < 4) {
    EXPECT_EQ(cpus, "shared");
  }
}

// The gate's promise: a step starts only after every earlier step ended on every device, so a
// device alone ran while the other was idle, and together rounds started together.
TEST_F(ConcurrentDevices, AStepStartsOnlyOnceEveryEarlierStepHasEnded) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const std::vector<Ran> all = scenarios_run(*out_);
  ASSERT_EQ(all.size(), 12u);  // per device: 3 together + 3 alone
  std::size_t alone = 0;
  for (const Ran& a : all)
    for (const Ran& b : all) {
      if (a.device == b.device) continue;
      if (a.step < b.step) {
        EXPECT_LE(a.end_ns, b.start_ns) << a.name << " then " << b.name;
      }
      if (a.alone) {
        EXPECT_NE(a.step, b.step) << "another device ran in " << a.name << "'s step";
      }
    }
  for (const Ran& a : all) alone += a.alone ? 1 : 0;
  EXPECT_EQ(alone, 6u);
}

TEST_F(ConcurrentDevices, EveryToolReadsTheRun) {
  std::string page;
  ASSERT_NO_FATAL_FAILURE(report_shared_run(page));
  EXPECT_NE(page.find("## Does one GPU's work disturb another's?"), std::string::npos) << page;
  EXPECT_NE(page.find("| `default` |"), std::string::npos) << page;
  // The devices' own answers come from the rounds each measured alone, pooled: the overlap
  // table and the barrier table are filled in, not "Not run".
  const auto section = [&](const std::string& title) {
    const std::size_t at = page.find(title);
    return at == std::string::npos ? std::string()
                                   : page.substr(at, page.find("\n## ", at + 1) - at);
  };
  for (const char* title : {"## Does DIRECT overlap COMPUTE?", "## What does each barrier cost?",
                            "## Each workload's duration"}) {
    const std::string table = section(title);
    EXPECT_NE(table.find("| `default` "), std::string::npos) << title << "\n" << page;
    EXPECT_EQ(table.find("Not run on these devices"), std::string::npos) << title;
  }
  // 3 rounds of 4 frames each, pooled (fewer where a loaded machine left a frame without both
  // clocks): a share of frames with its clock.
  EXPECT_NE(section("## Does DIRECT overlap COMPUTE?").find(" frames (ts)"), std::string::npos)
      << page;
  const std::string own = read_text_file(*out_ / "gpu1" / "report.md");
  EXPECT_NE(own.find("**1. Does DIRECT overlap COMPUTE?** **"), std::string::npos) << own;
  EXPECT_NE(own.find("frames of `default` (its rounds measured alone, pooled)"), std::string::npos)
      << own;
  EXPECT_NE(own.find("**6. Does the other devices' work disturb this one's?**"), std::string::npos)
      << own;
  EXPECT_NE(own.find("## Neighbours: study `default`"), std::string::npos) << own;
  EXPECT_EQ(own.find("**4. Is background processing non-intrusive?** `default`"), std::string::npos)
      << "a study of neighbours is no background study";
  expect_devices_compared(*out_);
  expect_devices_plotted(*out_, "concurrent", "gpu0/default");
  const fs::path db = scratch_path("concurrent", "h.sqlite");
  fs::remove(db);
  const auto kept = run_gpuoverlap("history ingest " + out_->string() + " --db " + db.string());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  const auto listed = run_gpuoverlap("history trend --db " + db.string() +
                                     " --scenario default --series together --metric decision");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  // The answers' overlap shares, from the rounds measured alone, kept under the scenario's name.
  const auto shares = run_gpuoverlap("history trend --db " + db.string() +
                                     " --scenario default --series frame --metric "
                                     "same_queue_overlap_pct --clock ts");
  EXPECT_EQ(shares.exit_code, 0) << shares.output;
  EXPECT_NE(shares.output.find("default · frame · same_queue_overlap_pct · ts"), std::string::npos)
      << shares.output;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  expect_devices_viewed(*out_, "concurrent", "gpu1/default/together/round-1");
}

// Without rounds every scenario runs once on both devices, each started together.
TEST_F(ConcurrentDevices, WithoutRoundsEachScenarioRunsOnEveryDeviceInStep) {
  const fs::path out = fresh_path(scratch_path("concurrent", "plain"));
  const auto r = run_into(
      out,
      "run default barrier-cost --frames 3 --warmup 0 --device 0,1 --concurrent --shared-cpus");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto run = read_json_or_discarded(out / "run.json");
  EXPECT_EQ(run["concurrent"]["rounds"], 0);
  EXPECT_EQ(run["concurrent"]["cpus"], "shared");
  EXPECT_EQ(r.output.find("the devices share the CPUs"), std::string::npos)
      << "asked for: nothing to explain\n"
      << r.output;
  const std::vector<Ran> all = scenarios_run(out);
  ASSERT_EQ(all.size(), 4u);
  for (const Ran& a : all) {
    EXPECT_FALSE(a.alone);
    for (const Ran& b : all)
      if (a.device != b.device && a.step < b.step) {
        EXPECT_LE(a.end_ns, b.start_ns) << a.name << " then " << b.name;
      }
  }
  fs::remove_all(out);
}

TEST_F(ConcurrentDevices, BadRequestsAreRefusedBeforeAnyWork) {
  const fs::path out = scratch_path("concurrent", "never");
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"--concurrent --device 0", "several devices"},
      {"--concurrency-rounds 3 --device all", "--concurrent"},
      {"--concurrent --concurrency-rounds 2 --device all", "--concurrency-rounds"},
      {"--concurrent --device all --poller-core 0", "one per device"},
      {"--concurrent --device all --poller-core 0,0", "twice"},
      {"--split-cpus --device all", "--concurrent"},
      {"--shared-cpus --device all", "--concurrent"},
      {"--concurrent --device all --split-cpus --shared-cpus", "excludes"},
  };
  // Two CPUs cannot be split in two shares of two (a machine with four or more can).
  std::vector<std::pair<std::string, std::string>> all = refusals;
  if (std::thread::hardware_concurrency() < 4)
    all.emplace_back("--concurrent --split-cpus --device all", "each device needs two or more");
  for (const auto& [arguments, reason] : all) {
    fs::remove_all(out);
    const auto r = run_with("run default --frames 2 " + arguments + " --out " + out.string());
    EXPECT_EQ(r.exit_code, 2) << arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(reason), std::string::npos) << arguments << "\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << arguments << ": nothing made";
  }
}

}  // namespace
}  // namespace gpuoverlap
