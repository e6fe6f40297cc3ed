// The viewer for real: `gpuoverlap view` under Xvfb (Mesa's OpenGL) on results lavapipe wrote.
// The screenshot must show a bar for each workload where records.csv puts it, in its lane, in
// the colour of its kind; the sidecar (FILE.layout.json) says where each was drawn, and the PNG
// is checked at those places.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/csv_table.h"
#include "preemption/preemption_analysis.h"
#include "results_tools.h"
#include "run_binary.h"
#include "scenarios/scenario.h"
#include "timeline/export.h"
#include "viewer/png_image.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  return fs::temp_directory_path() / ("gpuoverlap-view-" + std::to_string(getpid()) + "-" + name);
}

// One run of `default` (graphics and compute on two queues), shared by the tests below.
class Viewer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new fs::path(temp_dir("results"));
    fs::remove_all(*out_);
    const auto r = run_gpuoverlap("run default --frames 4 --warmup 1 --out " + out_->string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*out_);
    delete out_;
  }
  static fs::path* out_;
};
fs::path* Viewer::out_ = nullptr;

bool same_rgb(const std::uint8_t* pixel, int r, int g, int b) {
  return pixel[0] == r && pixel[1] == g && pixel[2] == b;
}

// The screenshot `shot` (and its layout sidecar) against records.csv of `scenario_dir`: a bar
// per workload of the frame shown where its records put it on the clock shown, in its lane and
// its kind's colour; a header per queue; an arrow per dependency; the overlap matrix with
// dependent work never overlapping.
void expect_screenshot_matches_records(const fs::path& shot, const fs::path& scenario_dir) {
  const auto image = viewer::read_png(shot);
  ASSERT_TRUE(image.ok()) << image.error().message;
  const auto layout = read_json_file(shot.string() + ".layout.json");
  EXPECT_EQ(layout["width"], image->width);
  EXPECT_EQ(layout["height"], image->height);
  ASSERT_TRUE(layout["frame"].is_number()) << "one frame is shown, not the medians";
  const std::uint32_t frame = layout["frame"];

  // What records.csv says of that frame, on that clock.
  const std::string clock = layout["clock"];
  const auto records = read_csv((scenario_dir / "records.csv.gz").string(), kRecordColumns);
  std::map<std::string, std::pair<double, double>> span;
  std::map<std::string, std::string> kind, queue;
  std::size_t dependencies = 0;
  for (std::size_t i = 0; i < records.rows.size(); ++i) {
    if (records.at(i, "frame") != std::to_string(frame) || records.at(i, "status") != "ok")
      continue;
    const std::string name = records.at(i, "workload");
    span[name] = {*records.number(i, clock + "_start_us"), *records.number(i, clock + "_end_us")};
    kind[name] = records.at(i, "kind");
    queue[name] = records.at(i, "queue");
    if (!records.at(i, "depends_on").empty())
      dependencies += static_cast<std::size_t>(
          std::count(records.at(i, "depends_on").begin(), records.at(i, "depends_on").end(), ';') +
          1);
  }
  ASSERT_GE(span.size(), 2u);

  std::map<std::string, nlohmann::json> bars;
  for (const auto& bar : layout["bars"]) bars[bar["workload"].get<std::string>()] = bar;
  ASSERT_EQ(bars.size(), span.size()) << "a bar per workload of the frame";
  std::map<std::string, nlohmann::json> lanes;
  for (const auto& lane : layout["lanes"]) lanes[lane["label"].get<std::string>()] = lane;
  std::size_t coloured = 0;
  for (const auto& [name, times] : span) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(bars.count(name));
    const auto& rect = bars[name]["rect"];
    const double x0 = rect[0], y0 = rect[1], x1 = rect[2], y1 = rect[3];
    ASSERT_TRUE(lanes.count(name)) << "the workload has a lane";
    EXPECT_GE(y0, lanes[name]["rect"][1].get<double>());
    EXPECT_LE(y1, lanes[name]["rect"][3].get<double>());
    // The PNG has the kind's colour inside the bar, clear of its label (top left). A bar
    // narrower than 6 px (a workload that took very little of the frame) has no inside to
    // look at; the frame has others.
    if (x1 - x0 < 6) continue;
    const int px = static_cast<int>(x1) - 2, py = static_cast<int>(y1) - 2;
    ASSERT_TRUE(px > 0 && py > 0 && px < image->width && py < image->height);
    if (kind[name] == "graphics")
      EXPECT_TRUE(same_rgb(image->at(px, py), 235, 150, 50)) << "graphics bar colour";
    else
      EXPECT_TRUE(same_rgb(image->at(px, py), 70, 130, 220)) << "compute bar colour";
    ++coloured;
  }
  EXPECT_GE(coloured, span.size() / 2) << "most bars are wide enough to see their colour";
  // One linear map from time to pixels for every bar: fitted on the earliest start and the
  // latest end, it must put every bar's edges where its times say (within rounding).
  std::string first = span.begin()->first, last = first;
  for (const auto& [name, times] : span) {
    if (times.first < span[first].first) first = name;
    if (times.second > span[last].second) last = name;
  }
  const double t0 = span[first].first, t1 = span[last].second;
  const double px0 = bars[first]["rect"][0], px1 = bars[last]["rect"][2];
  ASSERT_GT(t1, t0);
  const double px_per_us = (px1 - px0) / (t1 - t0);
  for (const auto& [name, times] : span) {
    EXPECT_NEAR(bars[name]["rect"][0].get<double>(), px0 + (times.first - t0) * px_per_us, 1.5)
        << name << " start";
    EXPECT_NEAR(bars[name]["rect"][2].get<double>(), px0 + (times.second - t0) * px_per_us, 1.5)
        << name << " end";
  }
  // Every queue has a header lane; every dependency an arrow.
  for (const auto& [name, q] : queue) {
    bool found = false;
    for (const auto& lane : layout["lanes"])
      found = found || (lane["queue_header"].get<bool>() &&
                        lane["label"].get<std::string>().starts_with(q + " ("));
    EXPECT_TRUE(found) << q;
  }
  EXPECT_EQ(layout["arrows"].size(), dependencies);
  // The overlap matrix: every pair once, and dependent work never overlapping.
  const std::size_t workloads = span.size();
  EXPECT_EQ(layout["overlap"].size(), workloads * (workloads - 1) / 2);
  std::set<std::pair<std::string, std::string>> dependent;
  for (std::size_t i = 0; i < records.rows.size(); ++i)
    if (records.at(i, "frame") == "0") {
      std::stringstream producers(records.at(i, "depends_on"));
      for (std::string producer; std::getline(producers, producer, ';');)
        dependent.insert({producer, records.at(i, "workload")});
    }
  for (const auto& cell : layout["overlap"]) {
    const std::pair<std::string, std::string> pair{cell["a"], cell["b"]};
    if (dependent.count(pair)) {
      EXPECT_EQ(cell["overlapped"], 0) << pair.first << " -> " << pair.second;
    }
  }
  EXPECT_TRUE(layout["verdict"].is_null()) << "default is in no study";
}

TEST_F(Viewer, AScreenshotShowsEachWorkloadsBarWhereItsRecordsPutIt) {
  const fs::path shot = temp_dir("frame2.png");
  const auto r = run_gpuoverlap_on_display("view " + out_->string() +
                                           " --scenario default --frame 2 --clock ts "
                                           "--screenshot " +
                                           shot.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("screenshot: " + shot.string()), std::string::npos) << r.output;
  const auto layout = read_json_file(shot.string() + ".layout.json");
  EXPECT_EQ(layout["frame"], 2);
  // Timestamps: lavapipe's poll clock, on a loaded machine, can make work look instant.
  EXPECT_EQ(layout["clock"], "ts");
  EXPECT_TRUE(layout["devices"].is_null()) << "a run on one device: one timeline, no bands";
  expect_screenshot_matches_records(shot, *out_ / "default");
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");
}

// run --live: the window follows the run; once it has ended the screenshot shows its last
// frame, as the results it wrote (the same as without --live) have it.
TEST(ViewerLive, TheWindowShowsTheRunsLastFrameAsItsRecordsHaveIt) {
  const fs::path out = temp_dir("live");
  const fs::path shot = temp_dir("live.png");
  fs::remove_all(out);
  const auto r =
      run_gpuoverlap_on_display("run default --frames 6 --warmup 1 --live --screenshot " +
                                shot.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto records = read_csv((out / "default" / "records.csv.gz").string(), kRecordColumns);
  EXPECT_EQ(records.rows.size(), 6u * 8) << "6 frames of default's 8 workloads";
  const auto layout = read_json_file(shot.string() + ".layout.json");
  EXPECT_EQ(layout["scenario"], "default");
  EXPECT_EQ(layout["frame"], 5) << "following the newest frame";
  // The device and the queues as mapped, with the priorities granted, while the run goes on:
  // the lines say what meta.json says.
  const auto meta = read_json_file((out / "default" / "meta.json").string());
  const std::vector<std::string> lines = layout["device_lines"];
  ASSERT_EQ(lines.size(), 1 + meta["queues"].size());
  EXPECT_NE(lines[0].find(meta["device"]["name"].get<std::string>()), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find(meta["device"]["driver_name"].get<std::string>()), std::string::npos)
      << lines[0];
  for (std::size_t q = 0; q < meta["queues"].size(); ++q) {
    const auto& queue = meta["queues"][q];
    EXPECT_NE(lines[1 + q].find(fmt::format(
                  "family {} index {}, priority {} (requested {})", queue["family"].get<int>(),
                  queue["queue_index"].get<int>(), queue["priority_granted"].get<std::string>(),
                  queue["priority_requested"].get<std::string>())),
              std::string::npos)
        << lines[1 + q];
  }
  expect_screenshot_matches_records(shot, out / "default");
  fs::remove_all(out);
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");
}

// run --live --script: the viewer's controls as text. Each accepted edit ends the version
// running at the next frame boundary and starts the next; the refused one changes nothing and
// says its rule; every version is written as a scenario of the run, with what changed, and
// live-session.csv marks where each began. What the edits did must be in the records.
TEST(ViewerLive, AScriptedSessionsEditsAreInTheRecordsItWrote) {
  const fs::path out = temp_dir("live-script");
  const fs::path shot = temp_dir("live-script.png");
  const fs::path saved = temp_dir("live-script-saved.toml");
  const fs::path script = temp_dir("live-script.txt");
  fs::remove_all(out);
  {
    std::ofstream file(script);
    file << "# a session\n"
            "wait 2\n"
            "iterations \"Compute B\" 2\n"
            "undepend \"Compute C\" \"Compute B\"\n"
            "depend \"Compute A\" \"Compute D\"\n"  // refused: D is recorded after A
            "wait 2\n"
            "timestamps off\n"
            "save "
         << saved.string()
         << "\n"
            "wait 2\n"
            "end\n";
  }
  // Many frames: the script ends the run long before.
  const auto r = run_gpuoverlap_on_display("run default --frames 2000 --warmup 1 --live --script " +
                                           script.string() + " --screenshot " + shot.string() +
                                           " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("script line 5: depend \"Compute A\" \"Compute D\": refused: workload "
                          "'Compute A' depends on 'Compute D', which is declared after it"),
            std::string::npos)
      << r.output;

  // live-session.csv: three versions (the refused edit made none), each starting where the
  // frames before it end.
  const auto session = read_csv(
      (out / "live-session.csv").string(),
      std::array<std::string_view, 7>{"version", "scenario", "directory", "first_session_frame",
                                      "frames", "ended", "changes"});
  ASSERT_EQ(session.rows.size(), 3u);
  const std::vector<std::string> names = {"default", "default-edit-1", "default-edit-2"};
  const std::vector<std::string> ended = {"edit", "edit", "end"};
  std::size_t frames_before = 0;
  for (std::size_t v = 0; v < 3; ++v) {
    EXPECT_EQ(session.at(v, "version"), std::to_string(v + 1));
    EXPECT_EQ(session.at(v, "scenario"), names[v]);
    EXPECT_EQ(session.at(v, "ended"), ended[v]);
    EXPECT_EQ(session.at(v, "first_session_frame"), std::to_string(frames_before));
    const auto frames =
        read_csv((out / session.at(v, "directory") / "frames.csv").string(), kFrameColumns);
    EXPECT_EQ(session.at(v, "frames"), std::to_string(frames.rows.size()));
    // The script runs between the run's frames: each `wait 2` is exactly two frames.
    EXPECT_EQ(frames.rows.size(), 2u) << names[v];
    frames_before += frames.rows.size();
  }
  EXPECT_EQ(session.at(1, "changes"),
            "iterations \"Compute B\" 2; undepend \"Compute C\" \"Compute B\"");
  EXPECT_EQ(session.at(2, "changes"), "timestamps off");

  // Each version's records and meta.json are what its edits made.
  auto workload = [](const nlohmann::json& meta, const std::string& name) {
    for (const auto& w : meta["scenario"]["workloads"])
      if (w["name"] == name) return w;
    return nlohmann::json();
  };
  const auto first = read_json_file((out / "default" / "meta.json").string());
  EXPECT_NE(workload(first, "Compute B")["iterations"], 2);
  ASSERT_EQ(workload(first, "Compute C")["depends_on"].size(), 1u);
  EXPECT_EQ(first["ended_early"]["of"], 2000);
  for (const char* version : {"default-edit-1", "default-edit-2"}) {
    SCOPED_TRACE(version);
    const auto meta = read_json_file((out / version / "meta.json").string());
    EXPECT_EQ(workload(meta, "Compute B")["iterations"], 2);
    EXPECT_TRUE(workload(meta, "Compute C")["depends_on"].empty());
    EXPECT_EQ(workload(meta, "Compute D")["iterations"],
              workload(first, "Compute D")["iterations"]);
    const auto records = read_csv((out / version / "records.csv.gz").string(), kRecordColumns);
    ASSERT_FALSE(records.rows.empty());
    for (std::size_t i = 0; i < records.rows.size(); ++i)
      if (records.at(i, "workload") == "Compute C") {
        EXPECT_EQ(records.at(i, "depends_on"), "");
      }
  }
  const auto second = read_json_file((out / "default-edit-1" / "meta.json").string());
  EXPECT_EQ(second["scenario"]["live"]["version"], 2);
  EXPECT_EQ(second["scenario"]["live"]["previous"], "default");
  EXPECT_EQ(second["scenario"]["live"]["changes"].size(), 2u);
  EXPECT_EQ(second["settings"]["timestamp_queries"], true);
  const auto third = read_json_file((out / "default-edit-2" / "meta.json").string());
  EXPECT_EQ(third["settings"]["timestamp_queries"], false);
  EXPECT_EQ(third["scenario"]["timestamps"], false);
  const auto no_ts = read_csv((out / "default-edit-2" / "records.csv.gz").string(), kRecordColumns);
  for (std::size_t i = 0; i < no_ts.rows.size(); ++i)
    EXPECT_EQ(no_ts.at(i, "ts_start_us"), "") << "timestamps off";

  // "save as TOML": a scenario file `validate` accepts, which is the third version.
  const auto valid = run_gpuoverlap("validate " + saved.string());
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
  auto reread = load_scenario_file(saved.string());
  ASSERT_TRUE(reread) << reread.error().message;
  EXPECT_EQ(reread->name, "default-edit-2");
  EXPECT_FALSE(reread->timestamps);
  EXPECT_EQ(reread->workloads[1].iterations, 2u);
  EXPECT_TRUE(reread->workloads[2].depends_on.empty());

  // The window followed the newest version; the viewer reads every version as written.
  const auto layout = read_json_file(shot.string() + ".layout.json");
  EXPECT_EQ(layout["scenario"], "default-edit-2");
  EXPECT_EQ(layout["bars"].size(), 8u);
  expect_tools_read_every_scenario(out);
  for (const fs::path& p : {out, shot, fs::path(shot.string() + ".layout.json"), saved, script})
    fs::remove_all(p);
}

// run --script without --live: the same session without a window (a machine without a
// display, a GPU server), and what a script cannot do is refused before anything runs.
TEST(LiveScript, ASessionRunsWithoutADisplay) {
  const fs::path out = temp_dir("script-headless");
  const fs::path script = temp_dir("script-headless.txt");
  fs::remove_all(out);
  {
    std::ofstream file(script);
    file << "wait 3\ndisable \"Compute Queue C\"\nwait 3\nend\n";
  }
  const auto r = run_command("env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(GPUOVERLAP_BINARY) +
                             " run default --frames 500 --warmup 1 --script " + script.string() +
                             " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("script line 2: disable \"Compute Queue C\": accepted"),
            std::string::npos)
      << r.output;
  const auto first = read_csv((out / "default" / "records.csv.gz").string(), kRecordColumns);
  const auto second =
      read_csv((out / "default-edit-1" / "records.csv.gz").string(), kRecordColumns);
  EXPECT_EQ(first.rows.size(), 3u * 8);
  EXPECT_EQ(second.rows.size(), 3u * 7) << "Compute Queue C is not run";
  for (std::size_t i = 0; i < second.rows.size(); ++i)
    EXPECT_NE(second.at(i, "workload"), "Compute Queue C");
  EXPECT_TRUE(fs::exists(out / "live-session.csv"));

  // A study cannot be edited; a script with a mistake names its line; neither runs anything.
  const auto study = run_gpuoverlap("run non-intrusiveness --script " + script.string() +
                                    " --out " + out.string() + "-study");
  EXPECT_EQ(study.exit_code, 2) << study.output;
  EXPECT_NE(study.output.find("--script: the experiment can be edited when the run is one frame "
                              "scenario"),
            std::string::npos)
      << study.output;
  EXPECT_FALSE(fs::exists(out.string() + "-study"));
  {
    std::ofstream file(script);
    file << "wait 3\nwait for it\n";
  }
  const auto bad =
      run_gpuoverlap("run default --script " + script.string() + " --out " + out.string() + "-bad");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find(script.string() + ":2: 'wait' takes"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(out.string() + "-bad"));
  fs::remove_all(out);
  fs::remove(script);
}

TEST(ViewerLive, WithoutADisplayNothingRuns) {
  const fs::path out = fresh_path(temp_dir("live-nodisplay"));
  const auto r = run_command("env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(GPUOVERLAP_BINARY) +
                             " run default --live --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("run --live: no display"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out)) << "nothing ran";
  const auto without = run_command("env -u DISPLAY " + std::string(GPUOVERLAP_BINARY) +
                                   " run default --screenshot x.png --out " + out.string());
  EXPECT_EQ(without.exit_code, 2) << "--screenshot needs --live: " << without.output;
}

// A/B: a second folder below the first, the same scenario, frame and time range, with
// compare's rows for it. A copy draws every bar where the first does; a folder without the
// scenario says so.
TEST_F(Viewer, TwoFoldersAreShownOneAboveTheOtherOnOneTimeRange) {
  const fs::path copy = fresh_path(temp_dir("copy"));
  fs::copy(*out_, copy, fs::copy_options::recursive);
  const fs::path shot = temp_dir("ab.png");
  auto r = run_gpuoverlap_on_display("view " + out_->string() + " " + copy.string() +
                                     " --frame 2 --clock ts --height 1000 --screenshot " +
                                     shot.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto layout = read_json_file(shot.string() + ".layout.json");
  const auto& b = layout["b"];
  ASSERT_TRUE(b.is_object()) << layout.dump();
  EXPECT_TRUE(b["has_scenario"].get<bool>());
  ASSERT_EQ(b["bars"].size(), layout["bars"].size());
  for (std::size_t i = 0; i < b["bars"].size(); ++i) {
    const auto& a_rect = layout["bars"][i]["rect"];
    const auto& b_rect = b["bars"][i]["rect"];
    EXPECT_EQ(b["bars"][i]["workload"], layout["bars"][i]["workload"]);
    EXPECT_DOUBLE_EQ(b_rect[0].get<double>(), a_rect[0].get<double>()) << "the same time range";
    EXPECT_DOUBLE_EQ(b_rect[2].get<double>(), a_rect[2].get<double>());
    EXPECT_GT(b_rect[1].get<double>(), a_rect[3].get<double>()) << "below the first";
  }
  EXPECT_GT(b["compare_rows"].get<int>(), 0);
  EXPECT_EQ(b["compare_changed"], 0) << "a copy has not changed";

  const fs::path other = fresh_path(temp_dir("other"));
  ASSERT_EQ(run_gpuoverlap("run three-dispatches --frames 2 --warmup 0 --out " + other.string())
                .exit_code,
            0);
  r = run_gpuoverlap_on_display("view " + out_->string() + " " + other.string() + " --screenshot " +
                                shot.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  layout = read_json_file(shot.string() + ".layout.json");
  EXPECT_FALSE(layout["b"]["has_scenario"].get<bool>());
  EXPECT_EQ(layout["b"]["bars"].size(), 0u);
  const auto missing = run_command("env -u DISPLAY " + std::string(GPUOVERLAP_BINARY) + " view " +
                                   out_->string() + " " + (other / "nope").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  fs::remove_all(copy);
  fs::remove_all(other);
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");
}

// A preemption scenario: every measured urgent job's latency in order, and its histogram, as
// preemption.csv lists them.
TEST(ViewerPreemption, TheUrgentLatenciesAreEveryUrgentJobOfPreemptionCsv) {
  const fs::path out = fresh_path(temp_dir("preemption"));
  const std::string preset = "preemption-slow-shader-high";
  ASSERT_EQ(
      run_gpuoverlap("run " + preset + " --priority-fallback --out " + out.string()).exit_code, 0);
  const fs::path shot = temp_dir("preemption.png");
  const auto r = run_gpuoverlap_on_display("view " + out.string() + " --clock ts --screenshot " +
                                           shot.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto layout = read_json_file(shot.string() + ".layout.json");
  const auto& latency = layout["urgent_latency"];
  ASSERT_TRUE(latency.is_object()) << layout.dump();
  std::size_t expected = 0;
  std::ifstream csv(out / preset / "preemption.csv");
  std::string header, line;
  std::getline(csv, header);
  // preemption.csv: ts_start_us is the 12th column, status the last.
  while (std::getline(csv, line)) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    if (line.back() == ',') fields.emplace_back();
    ASSERT_EQ(fields.size(), preemption::kPreemptionColumns.size()) << line;
    expected += fields.back() == "ok" && !fields[11].empty();
  }
  ASSERT_GT(expected, 0u);
  EXPECT_EQ(latency["points"], expected);
  std::size_t counted = 0;
  for (const auto& bin : latency["histogram"]) counted += bin.get<std::size_t>();
  EXPECT_EQ(counted, expected) << "every latency in one bin";
  EXPECT_TRUE(layout["overlap"].empty()) << "no overlap matrix for submissions";
  fs::remove_all(out);
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");
}

// `view --db`: the shared run kept in a SQLite history with an earlier copy of it whose folder
// is gone since; the screenshot's sidecar has the machine's row, a mark per run (the one whose
// folder is there filled in the PNG, the other not), and the default series' trend.
TEST_F(Viewer, AHistoryShowsItsMachineRowItsRunsAndATrend) {
  const fs::path db = temp_dir("history.sqlite"), earlier = temp_dir("earlier"),
                 shot = temp_dir("history.png");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  auto r = run_gpuoverlap("history ingest " + out_->string() + " --db " + db.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The same results as an earlier run (another start, so another content key), then removed.
  fs::remove_all(earlier);
  fs::copy(*out_, earlier, fs::copy_options::recursive);
  std::ofstream(earlier / "run.json")
      << R"({"started_at":"2026-01-01T00:00:00Z","scenarios":[{"name":"default",)"
      << R"("directory":"default","status":"ok"}]})";
  r = run_gpuoverlap("history ingest " + earlier.string() + " --db " + db.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::remove_all(earlier);

  r = run_gpuoverlap_on_display("view --db " + db.string() + " --screenshot " + shot.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("screenshot: " + shot.string()), std::string::npos) << r.output;
  const auto image = viewer::read_png(shot);
  ASSERT_TRUE(image.ok()) << image.error().message;
  const auto layout = read_json_file(shot.string() + ".layout.json");
  EXPECT_EQ(layout["mode"], "history");
  EXPECT_EQ(layout["runs"], 2);
  ASSERT_EQ(layout["machine_rows"].size(), 1u) << layout.dump(1);
  const auto& row = layout["machine_rows"][0];
  EXPECT_EQ(row["label"].get<std::string>().rfind("machine 1: ", 0), 0u) << row["label"];
  ASSERT_EQ(row["marks"].size(), 2u);
  const std::string kept = fs::absolute(*out_).lexically_normal().string();
  std::size_t present = 0, gone = 0;
  for (const auto& mark : row["marks"]) {
    SCOPED_TRACE(mark.dump());
    const double x = mark["at"][0], y = mark["at"][1];
    EXPECT_GE(y, row["rect"][1].get<double>()) << "in its machine's row";
    EXPECT_LE(y, row["rect"][3].get<double>());
    ASSERT_TRUE(x > 0 && y > 0 && x < image->width && y < image->height);
    const std::uint8_t* pixel = image->at(static_cast<int>(x), static_cast<int>(y));
    if (mark["directory"] == kept) {
      EXPECT_TRUE(mark["present"].get<bool>());
      EXPECT_TRUE(same_rgb(pixel, 70, 130, 220)) << "a run whose folder is there is filled";
      ++present;
    } else {
      EXPECT_FALSE(mark["present"].get<bool>());
      EXPECT_EQ(mark["started_at"], "2026-01-01T00:00:00Z");
      EXPECT_FALSE(same_rgb(pixel, 70, 130, 220)) << "a run whose folder is gone is an outline";
      ++gone;
    }
  }
  EXPECT_EQ(present, 1u);
  EXPECT_EQ(gone, 1u);
  // The earlier run is to the left of the later one on the time axis.
  const auto& marks = row["marks"];
  const bool first_is_earlier = marks[0]["started_at"] == "2026-01-01T00:00:00Z";
  EXPECT_LT(marks[first_is_earlier ? 0 : 1]["at"][0].get<double>(),
            marks[first_is_earlier ? 1 : 0]["at"][0].get<double>());
  // The first median series of the run, a point per run, inside the picture.
  const auto& trend = layout["trend"];
  ASSERT_TRUE(trend.is_object()) << layout.dump(1);
  EXPECT_EQ(trend["scenario"], "default");
  EXPECT_EQ(trend["machine_id"], 1);
  const std::string metric = trend["metric"];
  EXPECT_TRUE(metric.ends_with("_p50_us")) << metric;
  ASSERT_EQ(trend["points"].size(), 2u);
  for (const auto& point : trend["points"]) {
    EXPECT_GE(point["at"][0].get<double>(), trend["plot"][0].get<double>());
    EXPECT_LE(point["at"][0].get<double>(), trend["plot"][2].get<double>());
    EXPECT_LT(point["at"][1].get<double>(), image->height);
  }
  EXPECT_TRUE(trend["change_points"].empty()) << "two runs are too few to judge";
  EXPECT_NE(std::find(layout["menus"]["scenarios"].begin(), layout["menus"]["scenarios"].end(),
                      "default"),
            layout["menus"]["scenarios"].end());
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");
}

TEST_F(Viewer, AHistoryIsRefusedWithAFolderAndIsNeverMadeByTheViewer) {
  const std::string view = "env -u DISPLAY " + std::string(GPUOVERLAP_BINARY) + " view ";
  const fs::path missing = temp_dir("no-such-history.sqlite");
  fs::remove(missing);
  auto r = run_command(view + out_->string() + " --db " + missing.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a results folder or --db DB, not both"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  r = run_command(view + "--db " + missing.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no results history at " + missing.string()), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(missing)) << "a viewer only reads";
  r = run_command(view);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("name a results folder, or a results history with --db DB"),
            std::string::npos)
      << r.output;
}

TEST_F(Viewer, WithoutADisplayItSaysSoInOneLineAndExitsTwo) {
  const auto r = run_command("env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(GPUOVERLAP_BINARY) +
                             " view " + out_->string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("view: no display"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST_F(Viewer, WhatCannotBeShownIsRefusedBeforeAnyWindow) {
  // No display is needed to refuse: these never reach the window.
  const std::string view = "env -u DISPLAY " + std::string(GPUOVERLAP_BINARY) + " view ";
  for (const auto& [arguments, message] : std::vector<std::pair<std::string, std::string>>{
           {out_->string() + " --scenario nope", "no scenario 'nope'"},
           {out_->string() + " --frame 99", "has no frame 99"},
           {(*out_ / "missing").string(), "missing"},
           {out_->string() + " --clock sun", "--clock"}}) {
    const auto r = run_command(view + arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << arguments << ": " << r.output;
  }
}

}  // namespace
}  // namespace gpuoverlap
