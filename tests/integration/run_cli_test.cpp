// `gpuoverlap run` and its options end to end on the default device (lavapipe on CI): usage
// errors, list and validate without a GPU, priorities refused, the poller's stamps and
// placement, runs without timestamps, interrupts and GPU timeouts as reported results.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "all_presets.h"
#include "analysis/csv_table.h"
#include "results_tools.h"
#include "run_binary.h"
#include "run_checks.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

TEST(Cli, PriorityRefusalStopsWithoutFallback) {
  const fs::path out = fresh_path(temp_path("strict"));
  const auto devices = nlohmann::json::parse(run_gpuoverlap("devices --json 2>/dev/null").output);
  bool default_has_priority = false;
  for (const auto& d : devices)
    if (d["default"].get<bool>()) default_has_priority = d["global_priority"].get<bool>();
  const auto r =
      run_gpuoverlap("run high-priority-compute --frames 1 --warmup 0 --out " + out.string());
  if (!default_has_priority) {
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("--priority-fallback"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(out / "high-priority-compute" / "records.csv.gz"));
  } else {
    // A device with global priority either grants HIGH or refuses with a clear message.
    if (r.exit_code == 0) {
      EXPECT_EQ(read_json_file(out / "high-priority-compute" /
                               "meta.json")["queues"][1]["priority_granted"],
                "high");
    } else {
      EXPECT_NE(r.output.find("--priority-fallback"), std::string::npos) << r.output;
    }
  }
  fs::remove_all(out);
}

TEST(Cli, BadScenarioFileIsRejectedBeforeAnyGpuWork) {
  const fs::path dir = temp_path("bad");
  fs::create_directories(dir);
  std::ofstream(dir / "bad.toml")
      << "name = \"bad\"\n[queues.direct]\ntype = \"direct\"\n[[workload]]\nname = \"A\"\n"
         "queue = \"direct\"\ngroups = 0\n";
  const auto r =
      run_gpuoverlap("run " + (dir / "bad.toml").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("bad.toml:7: 'groups'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("device"), std::string::npos) << "no device may be opened: " << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST(Cli, UsageErrorsExitWithTwoAndHelpExplains) {
  EXPECT_EQ(run_gpuoverlap("run default --frames 0").exit_code, 2);
  EXPECT_EQ(run_gpuoverlap("frobnicate").exit_code, 2);
  const auto unknown = run_gpuoverlap("run no-such-preset");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("gpuoverlap list"), std::string::npos) << unknown.output;
  const auto typo = run_gpuoverlap("run three-dispatches-split-evnt");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.output.find("did you mean three-dispatches-split-event"), std::string::npos)
      << typo.output;
  EXPECT_EQ(run_gpuoverlap("run").exit_code, 2);                        // no scenario
  const auto washout = run_gpuoverlap("run default --washout-ms 100");  // without sharing
  EXPECT_EQ(washout.exit_code, 2);
  EXPECT_NE(washout.output.find("--washout-ms requires --share-device"), std::string::npos)
      << washout.output;
  const auto help = run_gpuoverlap("run --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("Exit status: 0 ok; 1 "), std::string::npos) << help.output;
  for (const char* option : {"--frames", "--warmup", "--device", "--out", "--priority-fallback",
                             "--timeout-ms", "--share-device", "--washout-ms"})
    EXPECT_NE(help.output.find(option), std::string::npos) << option;
}

TEST(Cli, ListAndValidateNeedNoGpu) {
  const auto list = run_gpuoverlap("list");
  EXPECT_EQ(list.exit_code, 0);
  for (const std::string& p : kPresets) EXPECT_NE(list.output.find(p), std::string::npos) << p;
  const auto ok = run_gpuoverlap(std::string("validate default ") + GPUOVERLAP_SOURCE_DIR +
                                 "/scenarios/presets/three-dispatches.toml");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(run_gpuoverlap("validate nope").exit_code, 2);
}

TEST(Cli, ValidateExplainsBarriersAndSubmissionsWithoutAGpu) {
  const auto r =
      run_gpuoverlap("validate --explain three-dispatches-split-collapsed cross-queue-fence");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("device"), std::string::npos) << "no device may be opened: " << r.output;
  // The collapsed policy: D3D12 records both halves; Vulkan gets one barrier before C.
  EXPECT_NE(r.output.find("D3D12 after producer: TRANSITION(BEGIN_ONLY)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Vulkan before consumer: vkCmdPipelineBarrier2, buffer barrier"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("vkCmdSetEvent2"), std::string::npos) << r.output;
  // Fences: the compute queue's second submission waits for the draw.
  EXPECT_NE(r.output.find("queue 'compute': [Compute Queue C] waits for Gfx A;"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("layout COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL"),
            std::string::npos)
      << r.output;
}

TEST(Cli, DeviceSelectionByBadNameFailsListingDevices) {
  const auto r = run_gpuoverlap("run three-dispatches --frames 1 --device no-such-gpu-xyz --out " +
                                temp_path("nodev").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("matches no device"), std::string::npos) << r.output;
}

// Every stamp carries its detection window, and the run judges them: the records' window
// columns, the disturbed stamps counted per workload, the poller's passes per frame and what it
// was placed as in meta.json.
TEST(Cli, EveryPollStampHasItsWindowAndDisturbedOnesAreCounted) {
  const fs::path out = fresh_path(temp_path("windows"));
  const auto r = run_gpuoverlap("run default --frames 8 --warmup 1 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto meta = read_json_file(out / "default" / "meta.json");
  const auto& window = meta["poll_window"];
  const double tolerance = window["tolerance_us"];
  EXPECT_GE(tolerance, 1.0) << window.dump();
  const auto records = read_csv((out / "default" / "records.csv.gz").string(), kRecordColumns);
  std::map<std::string, std::size_t> disturbed;
  std::size_t stamps = 0, flagged = 0;
  for (std::size_t i = 0; i < records.rows.size(); ++i) {
    if (records.at(i, "status") != "ok") continue;
    std::string expected;
    bool borderline = false;  // within the file's rounding (3 decimals) of the tolerance
    for (const char* side : {"start", "end"}) {
      const auto at = records.number(i, std::string("poll_") + side + "_us");
      const auto width = records.number(i, std::string("poll_") + side + "_window_us");
      ASSERT_TRUE(at && width) << "line " << i + 2;
      EXPECT_GE(*width, 0.0);
      ++stamps;
      borderline = borderline || std::fabs(*width - tolerance) <= 0.0005;
      if (*width > tolerance) expected += expected.empty() ? side : std::string(";") + side;
    }
    if (!borderline) {
      EXPECT_EQ(records.at(i, "poll_disturbed"), expected) << "line " << i + 2;
    }
    expected = records.at(i, "poll_disturbed");
    flagged += std::count(expected.begin(), expected.end(), ';') + !expected.empty();
    disturbed[records.at(i, "workload")] +=
        std::count(expected.begin(), expected.end(), ';') + !expected.empty();
  }
  EXPECT_EQ(window["stamps"], stamps);
  EXPECT_EQ(window["disturbed_stamps"], flagged);
  const auto summary = read_csv((out / "default" / "summary.csv").string(), kSummaryColumns);
  for (std::size_t i = 0; i < summary.rows.size(); ++i)
    if (summary.at(i, "clock") == "poll") {
      EXPECT_EQ(*summary.number(i, "poll_disturbed"),
                static_cast<double>(disturbed[summary.at(i, "workload")]))
          << summary.at(i, "workload");
    } else {
      EXPECT_EQ(summary.at(i, "poll_disturbed"), "");
    }
  const auto frames = read_csv((out / "default" / "frames.csv").string(), kFrameColumns);
  for (std::size_t i = 0; i < frames.rows.size(); ++i) {
    EXPECT_GT(*frames.number(i, "poll_scans"), 0.0);
    EXPECT_GE(*frames.number(i, "poller_cpu"), 0.0);
    expect_interval_explained(frames, i);
  }
  EXPECT_EQ(meta["poller"]["priority_requested"], "normal");
  EXPECT_TRUE(meta["poller"]["refused"].is_null());
  fs::remove_all(out);
}

// --poller-core outside the affinity mask: one line naming the CPUs there, exit 2, before any
// GPU work (no results folder). A priority the OS refuses: one line, and the run goes on at
// what was granted, recorded.
TEST(Cli, APollerCoreOutsideTheMaskIsRefusedAndARefusedPriorityIsRecorded) {
  const fs::path out = fresh_path(temp_path("poller"));
  const auto bad =
      run_gpuoverlap("run default --frames 2 --poller-core 4095 --out " + out.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--poller-core 4095: not a CPU this process may run on (its affinity "
                            "mask has "),
            std::string::npos)
      << bad.output;
  EXPECT_FALSE(fs::exists(out)) << "nothing was created";
  const auto text =
      run_gpuoverlap("run default --frames 2 --poller-core first --out " + out.string());
  EXPECT_EQ(text.exit_code, 2) << text.output;
  EXPECT_NE(text.output.find("--poller-core 'first': give a CPU number, auto or none"),
            std::string::npos)
      << text.output;
  EXPECT_FALSE(fs::exists(out)) << "nothing was created";
  // As root the priority would be granted: run without the capability to raise it.
  const std::string without_nice =
      ::geteuid() == 0 ? "setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice " : "";
  const auto refused = run_command(
      without_nice + std::string(GPUOVERLAP_BINARY) +
      " run default --frames 2 --warmup 0 --poller-priority realtime --out " + out.string());
  ASSERT_EQ(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("poller: priority realtime was refused ("), std::string::npos)
      << refused.output;
  const auto meta = read_json_file(out / "default" / "meta.json");
  EXPECT_EQ(meta["poller"]["priority_requested"], "realtime");
  EXPECT_NE(meta["poller"]["refused"].get<std::string>().find("realtime"), std::string::npos);
  EXPECT_EQ(meta["poller"]["scheduling"].get<std::string>().rfind("SCHED_OTHER", 0), 0u)
      << "what was granted";
  fs::remove_all(out);

  // A CPU of the mask: the poller runs there, and the process's other threads leave it.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(mask), &mask), 0);
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mask)) last = cpu;
  const auto pinned = run_gpuoverlap("run default --frames 3 --warmup 0 --poller-core " +
                                     std::to_string(last) + " --out " + out.string());
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  const auto pinned_meta = read_json_file(out / "default" / "meta.json");
  EXPECT_EQ(pinned_meta["poller"]["cpu"], last);
  EXPECT_EQ(pinned_meta["poller"]["cpu_reserved"], CPU_COUNT(&mask) > 1);
  const auto frames = read_csv((out / "default" / "frames.csv").string(), kFrameColumns);
  for (std::size_t i = 0; i < frames.rows.size(); ++i)
    EXPECT_EQ(*frames.number(i, "poller_cpu"), static_cast<double>(last));
  fs::remove_all(out);
}

TEST(Cli, NoTimestampsLeavesOnlyThePollClock) {
  const fs::path out = fresh_path(temp_path("nots"));
  const auto r = run_gpuoverlap(
      "run three-dispatches-split-event --frames 3 --warmup 1 --no-timestamps --validation --out " +
      out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto table =
      read_csv((out / "three-dispatches-split-event" / "records.csv.gz").string(), kRecordColumns);
  ASSERT_EQ(table.rows.size(), 9u);
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    EXPECT_EQ(table.at(row, "status"), "ok");
    EXPECT_TRUE(table.number(row, "poll_start_us").has_value());
    EXPECT_FALSE(table.number(row, "ts_start_us").has_value());
    EXPECT_FALSE(table.number(row, "ts_end_us").has_value());
  }
  const auto summary =
      read_csv((out / "three-dispatches-split-event" / "summary.csv").string(), kSummaryColumns);
  for (std::size_t row = 0; row < summary.rows.size(); ++row)
    EXPECT_EQ(summary.at(row, "clock"), "poll");
  const auto meta = read_json_file(out / "three-dispatches-split-event" / "meta.json");
  EXPECT_EQ(meta["clocks"]["timestamp"]["available"], false);
  EXPECT_EQ(meta["settings"]["timestamp_queries"], false);
  fs::remove_all(out);
}

// SIGINT (Ctrl-C), SIGTERM and SIGHUP (a dropped ssh session) stop the run after the frame in
// flight; what was measured is written whole and the exit status is 130.
void expect_signal_keeps_what_was_measured(int signal_number) {
  SCOPED_TRACE(strsignal(signal_number));
  const fs::path out = fresh_path(temp_path("interrupt-" + std::to_string(signal_number)));
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execl(GPUOVERLAP_BINARY, GPUOVERLAP_BINARY, "run", "three-dispatches", "--frames", "1000000",
          "--warmup", "0", "--out", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  // Wait until the scenario is being measured, then interrupt it.
  std::string output;
  char buffer[512];
  while (output.find("[1/1] three-dispatches: 0 warm-up") == std::string::npos) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    output.append(buffer, static_cast<std::size_t>(n));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, signal_number);
  // The rest of the output, then the exit status, with a deadline so a bug cannot hang CI.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "gpuoverlap did not stop within 60 s of the signal";
  }
  while (const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer)) {
    if (n < 0) break;
    output.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 130) << output;
  EXPECT_NE(output.find("interrupted"), std::string::npos) << output;
  ASSERT_TRUE(fs::exists(out / "three-dispatches" / "records.csv.gz")) << output;
  const auto table =
      read_csv((out / "three-dispatches" / "records.csv.gz").string(), kRecordColumns);
  EXPECT_LT(table.rows.size(), 3u * 1000000u);
  for (std::size_t row = 0; row < table.rows.size(); ++row)
    EXPECT_EQ(table.at(row, "status"), "ok");
  const auto meta = read_json_file(out / "three-dispatches" / "meta.json");
  EXPECT_NE(meta["failure"]["message"].get<std::string>().find("interrupted"), std::string::npos);
  EXPECT_EQ(read_json_file(out / "run.json")["scenarios"][0]["status"], "failed");
  fs::remove_all(out);
}

TEST(Cli, InterruptStopsAfterTheFrameAndKeepsWhatWasMeasured) {
  expect_signal_keeps_what_was_measured(SIGINT);
}

TEST(Cli, HangupAndTerminateStopLikeAnInterrupt) {
  expect_signal_keeps_what_was_measured(SIGHUP);
  expect_signal_keeps_what_was_measured(SIGTERM);
}

// A frame past its deadline is a reported result: rows marked timeout, the reason in
// meta.json and run.json, exit 1, and no hang (the work still running on the device is
// abandoned, not waited for). Three dispatches take tens of ms on lavapipe, far past 1 ms.
TEST(Cli, GpuTimeoutIsAReportedResultNotAHang) {
  const fs::path out = fresh_path(temp_path("timeout"));
  const auto r = run_gpuoverlap("run three-dispatches --frames 3 --warmup 0 --timeout-ms 1 --out " +
                                out.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // Which of late / still running / stuck it was depends on lavapipe's speed under load; the
  // frame is named as frames.csv counts it, and the deadline with it.
  EXPECT_NE(r.output.find("frame 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--timeout-ms 1"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not coherent"), std::string::npos) << r.output;
  const auto table =
      read_csv((out / "three-dispatches" / "records.csv.gz").string(), kRecordColumns);
  ASSERT_EQ(table.rows.size(), 3u);  // frame 0 only: the scenario stopped there
  for (std::size_t row = 0; row < table.rows.size(); ++row)
    EXPECT_EQ(table.at(row, "status"), "timeout");
  EXPECT_EQ(read_json_file(out / "three-dispatches" / "meta.json")["failure"]["api_code_name"],
            "VK_TIMEOUT");
  EXPECT_EQ(read_json_file(out / "run.json")["scenarios"][0]["status"], "failed");
  fs::remove_all(out);
}

}  // namespace
}  // namespace gpuoverlap
