// Preemption runs end to end on the default device (lavapipe on CI): a load past its deadline,
// and the load in a second process (run --load-process):
// the child's timeline is merged into the parent's output, and the child never outlives the
// run: not after it ends, not after Ctrl-C, not after the parent is killed outright. And the
// preemption matrix's rows in the shared `run --all` (AllPresets, all_presets.h).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "all_presets.h"
#include "analysis/csv_table.h"
#include "preemption/preemption_analysis.h"
#include "process_state.h"
#include "run_binary.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

fs::path preemption_scratch(const std::string& name) {
  return fs::temp_directory_path() /
         ("gpuoverlap-preemption-" + name + "-" + std::to_string(::getpid()));
}

nlohmann::json parse_json_file(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

pid_t load_process_pid(const std::string& output) {
  std::smatch m;
  static const std::regex pattern("load process: pid ([0-9]+)");
  return std::regex_search(output, m, pattern) ? static_cast<pid_t>(std::stoi(m[1])) : 0;
}

TEST(LoadProcessRun, RunMergesTheChildsLoadAndTheChildIsGone) {
  const fs::path out = fresh_path(preemption_scratch("run"));
  const auto r = run_gpuoverlap(
      "run preemption-slow-shader-high --load-process --priority-fallback --duration-ms 300 "
      "--target-ms 20 --out " +
      out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const pid_t child = load_process_pid(r.output);
  ASSERT_GT(child, 0) << r.output;
  EXPECT_TRUE(gone_within(child, std::chrono::seconds(5)));
  const fs::path dir = out / "preemption-slow-shader-high";
  const auto meta = parse_json_file(dir / "meta.json");
  EXPECT_EQ(meta["preemption"]["process"], "separate");
  EXPECT_EQ(meta["preemption"]["load_process_id"].get<pid_t>(), child);
  EXPECT_EQ(meta["preemption"]["load_process_exit"], "exit 0");
  EXPECT_TRUE(meta["preemption"]["calibrated"].get<bool>());
  EXPECT_TRUE(meta.contains("load_process"));  // the child's device and queue
  // The parent's device has only the urgent queue; the load ran on the child's.
  ASSERT_EQ(meta["queues"].size(), 1u);
  EXPECT_EQ(meta["queues"][0]["name"], "urgent");
  const auto rows = read_csv((dir / "preemption.csv").string(), preemption::kPreemptionColumns);
  ASSERT_GE(rows.rows.size(), 1u);
  for (std::size_t i = 0; i < rows.rows.size(); ++i) {
    EXPECT_EQ(rows.at(i, "process"), "separate");
    EXPECT_EQ(rows.at(i, "priority"), "high");
    const auto latency = rows.number(i, "latency_us");
    ASSERT_TRUE(latency.has_value());
    EXPECT_GE(*latency, 0.0);
  }
  // The child's loads are in the parent's records: 3 alone, then at least one more.
  const auto records = read_csv((dir / "records.csv.gz").string(), kRecordColumns);
  std::size_t loads = 0;
  for (std::size_t i = 0; i < records.rows.size(); ++i)
    if (records.at(i, "workload") == "load") ++loads;
  EXPECT_GE(loads, 4u);
  // The report's page says what ran and classifies the urgent job per clock.
  const auto report = run_gpuoverlap("report " + out.string());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream page(out / "report-details.md");
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Preemption: a slow-shader load"), std::string::npos) << text;
  EXPECT_NE(text.find("priority (granted normal), separate process"), std::string::npos) << text;
  EXPECT_NE(text.find("| poll | "), std::string::npos) << text;
  fs::remove_all(out);
}

// A load past its deadline is a reported result, never a hang: the calibration's probes grow
// towards 50 ms, far past a 5 ms --timeout-ms on lavapipe, and the run stops with exit 1, the
// reason in meta.json and run.json, and its files written.
TEST(PreemptionRun, ALoadPastItsDeadlineIsAReportedResult) {
  const fs::path out = fresh_path(preemption_scratch("deadline"));
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_gpuoverlap(
      "run preemption-big-dispatch-normal --timeout-ms 5 --target-ms 50 --duration-ms 200 --out " +
      out.string());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("within 5 ms of its submission (--timeout-ms)"), std::string::npos)
      << r.output;
  const fs::path dir = out / "preemption-big-dispatch-normal";
  const auto meta = parse_json_file(dir / "meta.json");
  EXPECT_NE(meta["failure"]["message"].get<std::string>().find("load calibration"),
            std::string::npos)
      << meta["failure"];
  EXPECT_TRUE(fs::exists(dir / "preemption.csv"));
  EXPECT_EQ(parse_json_file(out / "run.json")["scenarios"][0]["status"], "failed");
  fs::remove_all(out);
}

// Starts gpuoverlap with a long urgent phase and returns (parent pid, read end of its output)
// once the load process is announced.
struct Started {
  pid_t parent = 0;
  pid_t child = 0;
  int output_fd = -1;
  std::string output;
};

Started start_long_run(const fs::path& out) {
  Started s;
  int fds[2];
  if (pipe(fds) != 0) return s;
  s.parent = fork();
  if (s.parent == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl(GPUOVERLAP_BINARY, GPUOVERLAP_BINARY, "run", "preemption-big-dispatch-normal",
          "--load-process", "--duration-ms", "600000", "--target-ms", "20", "--out", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  s.output_fd = fds[0];
  char buffer[512];
  // The parent prints the child's pid before it waits for the child to load.
  while (s.child == 0) {
    const ssize_t n = read(s.output_fd, buffer, sizeof buffer);
    if (n <= 0) break;
    s.output.append(buffer, static_cast<std::size_t>(n));
    s.child = load_process_pid(s.output);
  }
  return s;
}

// Reads the run's output until it contains `text`; false at end of output or past `limit`.
bool read_until(Started& s, const std::string& text, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char buffer[512];
  while (s.output.find(text) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{s.output_fd, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(s.output_fd, buffer, sizeof buffer);
    if (n <= 0) return false;
    s.output.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

int wait_exit(Started& s, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(s.parent, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (done == 0) {
    kill(s.parent, SIGKILL);
    waitpid(s.parent, &status, 0);
    return -1;
  }
  char buffer[512];
  while (const ssize_t n = read(s.output_fd, buffer, sizeof buffer)) {
    if (n < 0) break;
    s.output.append(buffer, static_cast<std::size_t>(n));
  }
  close(s.output_fd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(LoadProcessRun, InterruptStopsTheChildAndKeepsWhatWasMeasured) {
  const fs::path out = fresh_path(preemption_scratch("interrupt"));
  Started s = start_long_run(out);
  ASSERT_GT(s.parent, 0);
  ASSERT_GT(s.child, 0) << s.output;
  // Once the child has calibrated and loads, the urgent phase begins.
  ASSERT_TRUE(read_until(s, "load process: loading", std::chrono::seconds(300))) << s.output;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(s.parent, SIGINT);
  const int code = wait_exit(s, std::chrono::seconds(120));
  ASSERT_NE(code, -1) << "gpuoverlap did not stop within 120 s of SIGINT\n" << s.output;
  EXPECT_EQ(code, 130) << s.output;
  EXPECT_TRUE(gone_within(s.child, std::chrono::seconds(5))) << s.output;
  const fs::path dir = out / "preemption-big-dispatch-normal";
  ASSERT_TRUE(fs::exists(dir / "preemption.csv")) << s.output;
  const auto meta = parse_json_file(dir / "meta.json");
  EXPECT_NE(meta["failure"]["message"].get<std::string>().find("interrupted"), std::string::npos);
  EXPECT_EQ(meta["preemption"]["load_process_exit"], "exit 0") << meta["preemption"];
  fs::remove_all(out);
}

TEST(LoadProcessRun, ChildDiesWithAKilledParent) {
  const fs::path out = fresh_path(preemption_scratch("killed"));
  Started s = start_long_run(out);
  ASSERT_GT(s.parent, 0);
  ASSERT_GT(s.child, 0) << s.output;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(s.parent, SIGKILL);  // no handler runs: only the kernel's parent-death signal is left
  wait_exit(s, std::chrono::seconds(30));
  EXPECT_TRUE(gone_within(s.child, std::chrono::seconds(10))) << s.output;
  fs::remove_all(out);
}

// The preemption presets on lavapipe (one queue: the urgent job cannot overlap, let alone
// preempt, so only invariants are checked, never timings): preemption.csv has its columns and
// a row per urgent submission with a latency >= 0; urgent jobs run one after another; on a
// shared queue no urgent job overlaps a load; summary.csv classifies the urgent job.
TEST_F(AllPresets, PreemptionRowsHoldTheInvariants) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  std::size_t scenarios = 0;
  for (const std::string& p : kScenarios) {
    if (!is_preemption(p)) continue;
    ++scenarios;
    SCOPED_TRACE(p);
    const auto meta = read_json_file(*out_ / p / "meta.json");
    ASSERT_TRUE(meta.contains("preemption"));
    EXPECT_TRUE(meta["failure"].is_null()) << meta["failure"];
    EXPECT_FALSE(meta["preemption"]["load_sizes"].empty());
    EXPECT_EQ(meta["preemption"]["baseline_loads"], 3);
    const auto rows =
        read_csv((*out_ / p / "preemption.csv").string(), preemption::kPreemptionColumns);
    // 100 ms at 11.1 ms: 10 ticks, fewer where the CPU could not keep up (recorded as skipped).
    EXPECT_EQ(rows.rows.size() + meta["preemption"]["skipped_ticks"].get<std::size_t>(), 10u);
    ASSERT_GE(rows.rows.size(), 1u);
    struct Span {
      double start, end;
    };
    std::vector<Span> urgent;
    for (std::size_t r = 0; r < rows.rows.size(); ++r) {
      EXPECT_EQ(rows.at(r, "status"), "ok");
      EXPECT_EQ(rows.at(r, "process"), "same");
      const auto latency = rows.number(r, "latency_us");
      ASSERT_TRUE(latency.has_value()) << r;
      EXPECT_GE(*latency, 0.0);
      const auto submit = rows.number(r, "submit_us");
      ASSERT_TRUE(submit.has_value()) << r;
      const auto start = rows.number(r, "poll_start_us"), end = rows.number(r, "poll_end_us");
      if (start && end) {
        EXPECT_LE(*submit, *start);
        EXPECT_LE(*start, *end);
        urgent.push_back({*start, *end});
      }
    }
    // Times from CSVs, each a sum of numbers printed to 0.001 µs: equal times may differ by
    // rounding (two events seen in one scan of a starved poller share one time).
    constexpr double kRoundingUs = 0.01;
    for (std::size_t k = 1; k < urgent.size(); ++k)
      EXPECT_GE(urgent[k].start, urgent[k - 1].end - kRoundingUs)
          << "urgent job " << k << " overlaps " << k - 1;
    // Loads (records.csv, poll clock): never overlapping an urgent job on a shared queue. A
    // load queued right behind another can miss a poll stamp when the poller lost its CPU (a
    // loaded machine), so every load counts, and those with both stamps are checked.
    const auto records = read_csv((*out_ / p / "records.csv.gz").string(), kRecordColumns);
    std::set<std::string> load_frames;
    std::map<std::string, Span> loads;
    for (std::size_t r = 0; r < records.rows.size(); ++r) {
      if (records.at(r, "workload") == "urgent") continue;
      load_frames.insert(records.at(r, "frame"));
      const auto t0 = records.number(r, "frame_t0_us");
      const auto s = records.number(r, "poll_start_us"), e = records.number(r, "poll_end_us");
      if (!s || !e) continue;
      auto [it, inserted] = loads.try_emplace(records.at(r, "frame"), Span{*t0 + *s, *t0 + *e});
      it->second.start = std::min(it->second.start, *t0 + *s);
      it->second.end = std::max(it->second.end, *t0 + *e);
    }
    EXPECT_GE(load_frames.size(), 4u);  // 3 alone and at least one under the urgent job
    if (meta["compute_queue_shared"].get<bool>()) {
      for (const Span& u : urgent)
        for (const auto& [frame, l] : loads) {
          EXPECT_FALSE(u.start < l.end - kRoundingUs && l.start < u.end - kRoundingUs)
              << "urgent job [" << u.start << ", " << u.end << "] overlaps load " << frame;
        }
    }
    const auto summary = read_csv((*out_ / p / "summary.csv").string(), kSummaryColumns);
    bool classified = false, slowdown = false;
    for (std::size_t r = 0; r < summary.rows.size(); ++r) {
      const std::string cls = summary.at(r, "preemption");
      if (summary.at(r, "workload") != "urgent") {
        EXPECT_TRUE(cls.empty());
        continue;
      }
      if (cls == "unmeasured") {
        // Only where the poller lost its CPU around every urgent start (lavapipe on a loaded
        // machine): those starts are left out, and counted.
        EXPECT_EQ(summary.at(r, "clock"), "poll");
        EXPECT_GT(summary.number(r, "poll_disturbed").value_or(0), 0.0);
        EXPECT_FALSE(summary.number(r, "latency_p50_us").has_value());
        continue;
      }
      EXPECT_TRUE(cls == "preempts" || cls == "coarse" || cls == "blocked") << cls;
      EXPECT_LE(*summary.number(r, "latency_p50_us"), *summary.number(r, "latency_p99_us"));
      EXPECT_LE(*summary.number(r, "latency_p99_us"), *summary.number(r, "latency_max_us"));
      // Where the poller (a CPU thread, starved on a loaded CI machine) missed a load's stamp,
      // that clock has no load duration; the timestamps never miss one.
      slowdown = slowdown || summary.number(r, "load_slowdown").has_value();
      classified = true;
    }
    EXPECT_TRUE(classified);
    EXPECT_TRUE(slowdown);
  }
  EXPECT_EQ(scenarios, 12u);  // preemption-matrix's; the twelve presets are not run again
  EXPECT_NE(result_->output.find("preemption (latency, us)"), std::string::npos);
}

}  // namespace
}  // namespace gpuoverlap
