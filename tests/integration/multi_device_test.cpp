// `run --device all` and device lists on the real binary. The Vulkan loader is given lavapipe's
// ICD twice, so this machine has two devices: a run on both keeps each device's results in a
// folder of its own, one run.json lists them, and every tool reads the output. Bad lists are
// refused before any GPU work, naming the devices present.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/csv_table.h"
#include "results_tools.h"
#include "run_binary.h"
#include "timeline/export.h"
#include "two_lavapipes.h"
#include "viewer/png_image.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

// Lavapipe twice: two devices, as on a host with two GPUs of one model.
class TwoDevices : public TwoLavapipesRun<TwoDevices> {
 protected:
  static void SetUpTestSuite() {
    start("multi-device", "run", "run default barrier-cost --frames 4 --warmup 1 --device all");
  }
};

TEST_F(TwoDevices, AllRunsEveryDeviceEachInAFolderOfItsOwn) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const auto run = read_json_or_discarded(*out_ / "run.json");
  ASSERT_TRUE(run.is_object());
  ASSERT_EQ(run["devices"].size(), 2u) << run.dump(2);
  for (int index = 0; index < 2; ++index) {
    const nlohmann::json& device = run["devices"][index];
    const std::string folder = "gpu" + std::to_string(index);
    EXPECT_EQ(device["index"], index);
    EXPECT_EQ(device["directory"], folder);
    EXPECT_EQ(device["status"], "ok");
    EXPECT_FALSE(device["device"]["uuid"].get<std::string>().empty());
    // Each device's folder is a results folder of its own.
    const auto own = read_json_or_discarded(*out_ / folder / "run.json");
    ASSERT_EQ(own["scenarios"].size(), 2u);
    EXPECT_EQ(own["scenarios"][0]["directory"], "default");
    const auto meta = read_json_or_discarded(*out_ / folder / "default" / "meta.json");
    EXPECT_EQ(meta["device_index"], index);
    EXPECT_EQ(meta["device"]["uuid"], device["device"]["uuid"]);
  }
  std::vector<std::string> directories;
  for (const auto& s : run["scenarios"]) directories.push_back(s["directory"]);
  EXPECT_EQ(directories, (std::vector<std::string>{"gpu0/default", "gpu0/barrier-cost",
                                                   "gpu1/default", "gpu1/barrier-cost"}));
}

TEST_F(TwoDevices, EveryToolReadsTheRun) {
  std::string page;
  ASSERT_NO_FATAL_FAILURE(report_shared_run(page));
  EXPECT_NE(page.find("# gpuoverlap report: 2 devices side by side"), std::string::npos) << page;
  EXPECT_NE(page.find("| scenario · workload | gpu0 | gpu1 | apart |"), std::string::npos) << page;
  EXPECT_NE(page.find("| `default` · Compute A |"), std::string::npos) << page;
  EXPECT_NE(page.find("[gpu1/report.md](gpu1/report.md)"), std::string::npos) << page;
  EXPECT_TRUE(fs::exists(*out_ / "gpu0" / "report.md"));
  EXPECT_TRUE(fs::exists(*out_ / "gpu1" / "report-details.md"));
  const auto compared = expect_devices_compared(*out_);
  // Which rows there are depends on the frames a loaded machine left undisturbed: the table is
  // there, judged.
  EXPECT_NE(compared.output.find("metrics changed beyond"), std::string::npos) << compared.output;
  expect_devices_plotted(*out_, "multi-device", "gpu1/default");
  const fs::path db = scratch_path("multi-device", "h.sqlite");
  fs::remove(db);
  const auto kept = run_gpuoverlap("history ingest " + out_->string() + " --db " + db.string());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("run 1: kept " + (*out_ / "gpu0").string()), std::string::npos)
      << kept.output;
  EXPECT_NE(kept.output.find("run 2: kept " + (*out_ / "gpu1").string()), std::string::npos)
      << kept.output;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  expect_devices_viewed(*out_, "multi-device", "gpu1/default");
}

// What records.csv.gz of `scenario_dir` says of frame `frame` on `clock`: each ok workload's
// start and end (µs from its own frame's start) and whether it is a draw.
struct RecordedSpan {
  double start_us = 0, end_us = 0;
  bool graphics = false;
};
std::map<std::string, RecordedSpan> recorded_frame(const fs::path& scenario_dir,
                                                   std::uint32_t frame, const std::string& clock) {
  const auto records = read_csv((scenario_dir / "records.csv.gz").string(), kRecordColumns);
  std::map<std::string, RecordedSpan> out;
  for (std::size_t i = 0; i < records.rows.size(); ++i)
    if (records.at(i, "frame") == std::to_string(frame) && records.at(i, "status") == "ok")
      out[records.at(i, "workload")] = {*records.number(i, clock + "_start_us"),
                                        *records.number(i, clock + "_end_us"),
                                        records.at(i, "kind") == "graphics"};
  return out;
}

// The viewer on a run on several devices: the scenario chosen on one device is drawn for every
// device, a band per device one above the other, each labelled with its folder and device, its
// bars where that device's records put them, all on one time axis.
TEST_F(TwoDevices, TheViewerStacksTheScenarioChosenOnEveryDeviceOnOneTimeAxis) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  const auto run = read_json_or_discarded(*out_ / "run.json");
  const fs::path shot = scratch_path("multi-device", "stacked.png");
  const auto viewed = run_gpuoverlap_on_display(
      "view " + out_->string() + " --scenario gpu1/default --frame 2 --clock ts --screenshot " +
      shot.string());
  ASSERT_EQ(viewed.exit_code, 0) << viewed.output;
  auto layout = read_json_or_discarded(shot.string() + ".layout.json");
  ASSERT_TRUE(layout.is_object());
  EXPECT_EQ(layout["scenario"], "gpu1/default") << "the panes below are the device chosen";
  const auto& bands = layout["devices"];
  ASSERT_TRUE(bands.is_array()) << layout.dump();
  ASSERT_EQ(bands.size(), 2u);
  // One map from time to pixels, fitted on device 0's earliest start and latest end, must put
  // every bar of both devices where its records say: one shared axis.
  const auto first = recorded_frame(*out_ / "gpu0" / "default", 2, "ts");
  ASSERT_GE(first.size(), 2u);
  std::string earliest = first.begin()->first, latest = earliest;
  for (const auto& [name, span] : first) {
    if (span.start_us < first.at(earliest).start_us) earliest = name;
    if (span.end_us > first.at(latest).end_us) latest = name;
  }
  double px0 = 0, px1 = 0;
  for (const auto& bar : bands[0]["bars"]) {
    if (bar["workload"] == earliest) px0 = bar["rect"][0];
    if (bar["workload"] == latest) px1 = bar["rect"][2];
  }
  const double t0 = first.at(earliest).start_us, t1 = first.at(latest).end_us;
  ASSERT_GT(t1, t0);
  const double px_per_us = (px1 - px0) / (t1 - t0);
  ASSERT_GT(px_per_us, 0);
  const auto image = viewer::read_png(shot);
  ASSERT_TRUE(image.ok()) << image.error().message;
  std::size_t coloured = 0;
  for (int index = 0; index < 2; ++index) {
    const std::string folder = "gpu" + std::to_string(index);
    SCOPED_TRACE(folder);
    const auto& band = bands[index];
    EXPECT_EQ(band["folder"], folder);
    EXPECT_EQ(band["device"], run["devices"][index]["device"]["name"]);
    EXPECT_EQ(band["label"],
              folder + ": " + run["devices"][index]["device"]["name"].get<std::string>());
    EXPECT_EQ(band["scenario"], folder + "/default") << "the same scenario on every device";
    EXPECT_EQ(band["chosen"], index == 1);
    EXPECT_EQ(band["frame"], 2) << "the same frame number on every device";
    EXPECT_EQ(band["clock"], "ts");
    const auto recorded = recorded_frame(*out_ / folder / "default", 2, "ts");
    std::set<std::string> drawn, expected;
    for (const auto& [name, span] : recorded) expected.insert(name);
    const double top = band["rect"][1], bottom = band["rect"][3];
    for (const auto& bar : band["bars"]) {
      const std::string name = bar["workload"];
      drawn.insert(name);
      ASSERT_TRUE(recorded.count(name)) << name;
      const auto& rect = bar["rect"];
      const double x0 = rect[0], y0 = rect[1], x1 = rect[2], y1 = rect[3];
      EXPECT_NEAR(x0, px0 + (recorded.at(name).start_us - t0) * px_per_us, 1.5) << name;
      EXPECT_NEAR(x1, px0 + (recorded.at(name).end_us - t0) * px_per_us, 1.5) << name;
      EXPECT_GE(y0, top) << name << " inside its device's band";
      EXPECT_LE(y1, bottom) << name << " inside its device's band";
      EXPECT_EQ(bar["graphics"], recorded.at(name).graphics) << name;
      // The PNG has the kind's colour inside a bar wide enough to have an inside.
      const int px = static_cast<int>(x1) - 2, py = static_cast<int>(y1) - 2;
      if (x1 - x0 < 6 || px >= image->width || py >= image->height) continue;
      const std::uint8_t* pixel = image->at(px, py);
      const std::array<int, 3> rgb =
          recorded.at(name).graphics ? std::array{235, 150, 50} : std::array{70, 130, 220};
      EXPECT_TRUE(pixel[0] == rgb[0] && pixel[1] == rgb[1] && pixel[2] == rgb[2]) << name;
      ++coloured;
    }
    EXPECT_EQ(drawn, expected) << "a bar per workload of the device's frame 2";
  }
  EXPECT_GT(coloured, 0u);
  EXPECT_GE(bands[1]["rect"][1].get<double>(), bands[0]["rect"][3].get<double>())
      << "device 1's band below device 0's";
  // The scenario tree marks the scenario chosen on both devices.
  std::set<std::string> shown;
  for (const auto& device : layout["scenario_tree"])
    for (const auto& leaf : device.value("children", nlohmann::json::array()))
      if (leaf.value("shown", false))
        shown.insert(device["label"].get<std::string>() + "/" + leaf["label"].get<std::string>());
  EXPECT_EQ(shown, (std::set<std::string>{"gpu0/default", "gpu1/default"}));

  // A name without its device's folder chooses the first device's; the medians for both.
  const auto medians = run_gpuoverlap_on_display(
      "view " + out_->string() + " --scenario barrier-cost --screenshot " + shot.string());
  ASSERT_EQ(medians.exit_code, 0) << medians.output;
  layout = read_json_or_discarded(shot.string() + ".layout.json");
  EXPECT_EQ(layout["scenario"], "gpu0/barrier-cost");
  ASSERT_EQ(layout["devices"].size(), 2u);
  const auto meta = read_json_or_discarded(*out_ / "gpu0" / "barrier-cost" / "meta.json");
  std::set<std::string> workloads;
  for (const auto& w : meta["scenario"]["workloads"]) workloads.insert(w["name"]);
  ASSERT_FALSE(workloads.empty()) << meta.dump();
  for (int index = 0; index < 2; ++index) {
    const auto& band = layout["devices"][index];
    EXPECT_EQ(band["scenario"], "gpu" + std::to_string(index) + "/barrier-cost");
    EXPECT_TRUE(band["frame"].is_null()) << "the medians";
    std::set<std::string> drawn;
    for (const auto& bar : band["bars"]) drawn.insert(bar["workload"]);
    EXPECT_EQ(drawn, workloads) << index;
  }
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");
}

TEST_F(TwoDevices, AListRunsThoseDevicesInItsOrder) {
  const fs::path out = fresh_path(scratch_path("multi-device", "list"));
  const auto r = run_with("run default --frames 2 --warmup 0 --device 1 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "default" / "records.csv.gz")) << "one device: the usual layout";
  fs::remove_all(out);
  const auto listed =
      run_with("run default --frames 2 --warmup 0 --device 1,0 --out " + out.string());
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const auto run = read_json_or_discarded(out / "run.json");
  ASSERT_EQ(run["devices"].size(), 2u);
  EXPECT_EQ(run["devices"][0]["directory"], "gpu1");
  EXPECT_EQ(run["devices"][1]["directory"], "gpu0");
  fs::remove_all(out);
}

// A device whose frame is past its deadline stops its own scenarios, with the reason recorded;
// the next device still runs. Three dispatches take tens of ms on lavapipe, far past 1 ms.
TEST_F(TwoDevices, AFailedDeviceStopsItsOwnScenariosAndTheOthersRun) {
  const fs::path out = fresh_path(scratch_path("multi-device", "timeout"));
  const auto r =
      run_into(out, "run three-dispatches --frames 3 --warmup 0 --timeout-ms 1 --device 0,1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const auto run = read_json_or_discarded(out / "run.json");
  ASSERT_EQ(run["devices"].size(), 2u) << r.output;
  for (const auto& device : run["devices"]) {
    EXPECT_EQ(device["status"], "failed") << device.dump();
    EXPECT_EQ(device["failure"]["api_code_name"], "VK_TIMEOUT") << device.dump();
  }
  EXPECT_EQ(read_json_or_discarded(out / "gpu1" / "three-dispatches" /
                                   "meta.json")["failure"]["api_code_name"],
            "VK_TIMEOUT")
      << "device 1 ran after device 0 had failed";
  EXPECT_FALSE(run["failure"].is_null());
  fs::remove_all(out);
}

TEST_F(TwoDevices, BadListsAreRefusedBeforeAnyWorkNamingTheDevices) {
  const fs::path out = scratch_path("multi-device", "never");
  for (const char* bad : {"--device 7", "--device 0,0", "--device all --device 1", "--device ''",
                          "--device 0,", "--device nothing-like-it,1"}) {
    fs::remove_all(out);
    const auto r =
        run_with(std::string("run default --frames 2 ") + bad + " --out " + out.string());
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("devices: 0: llvmpipe"), std::string::npos) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("1: llvmpipe"), std::string::npos) << bad << "\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << bad << ": nothing made";
  }
}

}  // namespace
}  // namespace gpuoverlap
