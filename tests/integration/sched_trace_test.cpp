// run --sched-trace on lavapipe: the kernel's record is taken around the frames (as root, where
// tracefs can be mounted) and every wait of the frame loop, the workers and the poller is
// explained in files every tool reads; where it cannot be taken the run goes on and says why.
// Timings are not asserted: the record's invariants and its consistency with the files are.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analysis/csv_table.h"
#include "core/clock.h"
#include "core/gzip.h"
#include "results_tools.h"
#include "run_binary.h"
#include "run_checks.h"
#include "schedtrace/sched_record.h"
#include "schedtrace/thread_waits.h"
#include "schedtrace/tracefs_recording.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

bool record_required() {
  const char* required = std::getenv("GPUOVERLAP_REQUIRE_SCHED_TRACE");
  return required != nullptr && std::string(required) == "1";
}

TEST(SchedTrace, EveryWaitOfTheForegroundIsExplainedAndEveryToolReadsIt) {
  if (const std::string why = sched_trace_unavailable_reason(); !why.empty()) {
    if (record_required()) FAIL() << "the kernel's record is required here: " << why;
    GTEST_SKIP() << "the kernel's record cannot be taken here: " << why;
  }
  const fs::path out = fresh_path(temp_path("sched-trace"));
  const auto run = run_gpuoverlap("run " + test_data("game-frame-managed.toml") +
                                  " --frames 40 --sched-trace --out " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fs::path scenario = out / "game-frame-managed";
  const auto meta = read_json_file(scenario / "meta.json");
  const auto& sched = meta["sched_trace"];
  ASSERT_EQ(sched["recorded"], true) << sched.dump();
  EXPECT_GT(sched["events"].get<int>(), 0);
  EXPECT_EQ(sched["unreadable_lines"], 0);
  EXPECT_TRUE(sched["overrun_cpus"].is_array());
  // What the record cost after the frames, step by step, and the size of its text.
  EXPECT_GT(sched["text_mb"].get<double>(), 0.0);
  for (const char* step : {"start", "read", "parse", "attribute", "render", "compress"})
    EXPECT_TRUE(sched["cost_ms"][step].is_number()) << step << ": " << sched.dump();
  const std::string instance = sched["instance"];
  EXPECT_TRUE(instance == "new" || instance == "kept, drained" || instance == "kept, cleared")
      << instance;
  EXPECT_GE(sched["text_threads"].get<int>(), 1);
  EXPECT_TRUE(fs::exists(scenario / "sched_record.txt.gz"));
  EXPECT_NE(sched["frame_loop"]["summary"].get<std::string>().find("the frame loop was runnable"),
            std::string::npos);

  // Every stretch: it ends after it began, its runnable part fits in it, its thread is one of
  // the foreground's, its names are the tables', and its frame is a measured one.
  const auto waits = read_csv((scenario / "sched_waits.csv").string(), kSchedWaitColumns);
  ASSERT_FALSE(waits.rows.empty());
  const auto frames = read_csv((scenario / "frames.csv").string(), kFrameColumns);
  std::set<std::string> frame_numbers;
  for (std::size_t f = 0; f < frames.rows.size(); ++f) frame_numbers.insert(frames.at(f, "frame"));
  std::size_t loop_blocked = 0;
  for (std::size_t r = 0; r < waits.rows.size(); ++r) {
    SCOPED_TRACE(waits.at(r, "text"));
    const double off = *waits.number(r, "off_us"), on = *waits.number(r, "on_us");
    const double runnable = *waits.number(r, "runnable_us");
    EXPECT_LE(off, on);
    EXPECT_GE(runnable, 0);
    EXPECT_LE(runnable, on - off + 0.001);
    const std::string thread = waits.at(r, "thread");
    EXPECT_TRUE(thread == "frame loop" || thread == "poller" || thread.starts_with("worker "))
        << thread;
    EXPECT_TRUE(value_of(kLostByNames, waits.at(r, "lost_by"))) << waits.at(r, "lost_by");
    EXPECT_TRUE(value_of(kThreadKindNames, waits.at(r, "holder_kind")));
    EXPECT_TRUE(value_of(kGivenBackByNames, waits.at(r, "given_back_by")));
    if (!waits.at(r, "frame").empty()) {
      EXPECT_EQ(frame_numbers.count(waits.at(r, "frame")), 1u);
    }
    if (thread == "frame loop" && waits.at(r, "lost_by") == "blocked") ++loop_blocked;
  }
  // The frame loop sleeps or blocks in every frame (pacing, the GPU wait).
  EXPECT_GE(loop_blocked, frames.rows.size() / 2);

  // Each frame with an interval has its figures, the background's part within the whole.
  for (std::size_t f = 0; f < frames.rows.size(); ++f) {
    if (!frames.number(f, "frame_interval_us")) continue;
    const auto runnable = frames.number(f, "sched_loop_runnable_us");
    const auto to_background = frames.number(f, "sched_loop_to_background_us");
    ASSERT_TRUE(runnable && to_background) << "frame " << f;
    EXPECT_LE(*to_background, *runnable + 0.001);
    EXPECT_TRUE(frames.number(f, "sched_workers_runnable_us").has_value());
  }

  // The threads the tool starts are named, as the kernel's record reads them.
  const std::string packed = read_text_file(scenario / "sched_record.txt.gz");
  const auto text = gzip_decompress(packed, 1u << 30, "sched_record.txt.gz");
  ASSERT_TRUE(text.ok()) << text.error().message;
  const SchedRecord record = parse_sched_record(*text);
  EXPECT_EQ(record.unreadable_lines, 0);
  std::set<std::string> names;
  const int pid = meta["threads"]["frame_loop"]["thread_id"].get<int>();
  for (const SchedEvent& e : record.events)
    if (e.tgid == pid) names.insert(e.comm);
  for (const char* name : {"poller", "worker 0", "compile 0"})
    EXPECT_EQ(names.count(name), 1u) << name << " among " << ::testing::PrintToString(names);

  // The trace file has the CPU lanes and the foreground's thread states beside the queues.
  const auto trace_text =
      gzip_decompress(read_text_file(scenario / "trace.json.gz"), 1u << 30, "trace.json.gz");
  ASSERT_TRUE(trace_text.ok()) << trace_text.error().message;
  const auto trace = nlohmann::json::parse(*trace_text);
  std::map<int, std::string> processes;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name")
      processes[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
  int cpus_pid = -1, threads_pid = -1;
  for (const auto& [pid, name] : processes) {
    if (name == "CPUs (kernel record)") cpus_pid = pid;
    if (name == "foreground threads (kernel record)") threads_pid = pid;
  }
  ASSERT_GE(cpus_pid, 0);
  ASSERT_GE(threads_pid, 0);
  std::map<int, std::vector<std::pair<double, double>>> by_cpu;
  std::set<std::string> states;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["pid"] == cpus_pid)
      by_cpu[e["tid"].get<int>()].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    if (e["pid"] == threads_pid) states.insert(e["name"].get<std::string>());
  }
  ASSERT_FALSE(by_cpu.empty());
  for (auto& [cpu, slices] : by_cpu) {
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i)
      EXPECT_LE(slices[i - 1].first + slices[i - 1].second, slices[i].first + 0.001)
          << "CPU lane " << cpu << ": one thread at a time";
  }
  EXPECT_EQ(states.count("Sleeping"), 1u);
  EXPECT_EQ(states.count("Running"), 1u);

  // The viewer draws the frame loop's lanes under a frame's queues: it sleeps in every frame
  // (the GPU wait), so a middle frame has a bar in its "asleep" lane.
  const fs::path shot = out / "frame.png";
  const auto view = run_gpuoverlap_on_display("view " + out.string() +
                                              " --scenario game-frame-managed --frame 10 "
                                              "--screenshot " +
                                              shot.string());
  ASSERT_EQ(view.exit_code, 0) << view.output;
  const auto layout = read_json_file(shot.string() + ".layout.json");
  std::size_t asleep_bars = 0;
  for (const auto& bar : layout["bars"])
    if (bar["workload"] == "frame loop: asleep") ++asleep_bars;
  EXPECT_GE(asleep_bars, 1u) << layout["bars"].dump().substr(0, 2000);
  fs::remove(shot);
  fs::remove(shot.string() + ".layout.json");

  expect_tools_read_every_scenario(out);
}

// The frame loop's waits of one run of `scenario` under the record: (lost_by, holder_kind,
// given_back_by) of each; `yields` counts the frame loop's sched_yield calls in the record.
std::vector<std::array<std::string, 3>> frame_loop_waits(const std::string& scenario,
                                                         const std::string& name,
                                                         std::size_t& yields) {
  yields = 0;
  const fs::path out = fresh_path(temp_path("sched-" + name));
  const auto run =
      run_gpuoverlap("run " + test_data(scenario) + " --sched-trace --out " + out.string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::array<std::string, 3>> waits;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (!fs::exists(entry.path() / "sched_waits.csv")) continue;
    const auto meta = read_json_file(entry.path() / "meta.json");
    const auto loop_tid = meta["threads"]["frame_loop"]["thread_id"].get<std::int32_t>();
    const auto text = gzip_decompress(read_text_file(entry.path() / "sched_record.txt.gz"),
                                      1u << 30, "sched_record.txt.gz");
    EXPECT_TRUE(text.ok());
    if (text.ok())
      for (const SchedEvent& e : parse_sched_record(*text).events)
        if (e.kind == SchedEventKind::syscall && e.syscall_nr == kSyscallSchedYield &&
            e.tid == loop_tid)
          ++yields;
    const auto table = read_csv((entry.path() / "sched_waits.csv").string(), kSchedWaitColumns);
    for (std::size_t r = 0; r < table.rows.size(); ++r)
      if (table.at(r, "thread") == "frame loop")
        waits.push_back(
            {table.at(r, "lost_by"), table.at(r, "holder_kind"), table.at(r, "given_back_by")});
  }
  return waits;
}

TEST(SchedTrace, AFrameLoopThatYieldsIsSeenYieldingAndOneThatBlocksNever) {
  // The same game frame beside an idle-priority spinner on every CPU, its frame loop waiting
  // for its jobs by sched_yield between polls, then by blocking. On EEVDF a yielding thread
  // goes behind the eligible thread with the earliest deadline: on a quiet machine the idle
  // spinner, until the next tick (docs/sched-trace.md measures it); on a loaded one, as CI's
  // is, a normal thread of this or another process; or, where no other thread is eligible,
  // none (the yield returns at once and no wait is recorded). Which one is the scheduler's
  // choice, not asserted (the CPU may also pass through several threads before it comes
  // back); that the record sees the yield calls, and names whoever took the CPU where one
  // switched, is.
  if (const std::string why = sched_trace_unavailable_reason(); !why.empty()) {
    if (record_required()) FAIL() << "the kernel's record is required here: " << why;
    GTEST_SKIP() << "the kernel's record cannot be taken here: " << why;
  }
  std::size_t yield_calls = 0;
  const auto yielding = frame_loop_waits("loop-yield-idle-spinners.toml", "yield", yield_calls);
  ASSERT_FALSE(yielding.empty());
  // The loop waits for 12 ms of jobs each frame, so it yields; a yield switches only where the
  // scheduler picks another thread, which is its choice.
  EXPECT_GE(yield_calls, 1u) << "the record saw no sched_yield of a frame loop that yields";
  std::map<std::string, std::size_t> yields_by_way;
  for (const auto& w : yielding) {
    if (w[0] != "yielded") continue;
    ++yields_by_way[w[1] + " until " + w[2]];
    EXPECT_NE(w[1], "idle") << "a yield that switched gave the CPU to a thread";
  }
  std::cout << yield_calls << " sched_yield calls; yields that switched, by holder and give-back: "
            << ::testing::PrintToString(yields_by_way) << "\n";

  std::size_t block_yield_calls = 0;
  const auto blocking =
      frame_loop_waits("loop-block-idle-spinners.toml", "block", block_yield_calls);
  ASSERT_FALSE(blocking.empty());
  EXPECT_EQ(block_yield_calls, 0u) << "a frame loop that blocks called sched_yield";
  for (const auto& w : blocking) EXPECT_NE(w[0], "yielded") << "a frame loop that blocks yields";

  // The same styles for the GPU wait ([cpu] gpu_wait), the jobs waited for by blocking: polling
  // with a yield between polls is seen yielding, polling alone never.
  std::size_t gpu_yield_calls = 0;
  const auto gpu_yielding =
      frame_loop_waits("gpu-yield-idle-spinners.toml", "gpu-yield", gpu_yield_calls);
  ASSERT_FALSE(gpu_yielding.empty());
  EXPECT_GE(gpu_yield_calls, 1u) << "the record saw no sched_yield of a GPU wait that yields";
  std::size_t gpu_spin_yield_calls = 0;
  const auto gpu_spinning =
      frame_loop_waits("gpu-spin-idle-spinners.toml", "gpu-spin", gpu_spin_yield_calls);
  ASSERT_FALSE(gpu_spinning.empty());
  EXPECT_EQ(gpu_spin_yield_calls, 0u) << "a GPU wait that spins called sched_yield";
  for (const auto& w : gpu_spinning) EXPECT_NE(w[0], "yielded") << "a GPU wait that spins yields";
}

TEST(SchedTrace, AStudysConditionsSayWhatTheRecordShowsInTheVerdictAndTheReport) {
  if (const std::string why = sched_trace_unavailable_reason(); !why.empty()) {
    if (record_required()) FAIL() << "the kernel's record is required here: " << why;
    GTEST_SKIP() << "the kernel's record cannot be taken here: " << why;
  }
  const fs::path out = fresh_path(temp_path("sched-study"));
  const auto run = run_gpuoverlap("run " + test_data("neutrality-study.toml") +
                                  " --frames 10 --sched-trace --out " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto verdict = read_json_file(out / "neutrality-study" / "verdict.json");
  ASSERT_TRUE(verdict["baseline_sched"].is_object()) << verdict.dump().substr(0, 2000);
  EXPECT_EQ(verdict["baseline_sched"]["rounds"], 3);
  ASSERT_FALSE(verdict["conditions"].empty());
  for (const auto& c : verdict["conditions"]) {
    const auto& sched = c["sched"];
    ASSERT_TRUE(sched.is_object()) << c["condition"];
    EXPECT_EQ(sched["rounds"], 3) << c["condition"];
    EXPECT_LE(sched["to_background_ms"].get<double>(), sched["runnable_ms"].get<double>() + 1e-6);
    EXPECT_TRUE(sched["line"].get<std::string>().starts_with("the kernel's record (3 rounds"))
        << sched["line"];
    EXPECT_NE(verdict["summary"].get<std::string>().find(sched["line"].get<std::string>()),
              std::string::npos);
  }
  // The negative control shares nothing with the frame's threads: in the measured frames of
  // its rounds no spinner woke a thread (outside an interrupt, a wake-up is the waker's release
  // of something the woken thread slept on: a lock of an allocator the spinner shared would
  // show here, as it did under AddressSanitizer's malloc).
  std::size_t spinner_events = 0;  // over the rounds: a loaded machine may starve them in one
  for (int round = 1; round <= 3; ++round) {
    const fs::path dir =
        out / "neutrality-study" / "idle-spinners" / fmt::format("round-{}", round);
    const auto meta = read_json_file(dir / "meta.json");
    const auto loop_tid = meta["threads"]["frame_loop"]["thread_id"].get<std::int32_t>();
    const auto from_ns = meta["measured_span_ns"]["start"].get<std::int64_t>();
    const auto to_ns = meta["measured_span_ns"]["end"].get<std::int64_t>();
    const auto text = gzip_decompress(read_text_file(dir / "sched_record.txt.gz"), 1u << 30,
                                      "sched_record.txt.gz");
    ASSERT_TRUE(text.ok()) << dir;
    const SchedRecord record = parse_sched_record(*text);
    std::int32_t tgid = -1;
    std::size_t spinner_wakeups = 0;
    for (const SchedEvent& e : record.events)
      if (e.tid == loop_tid && e.tgid >= 0) tgid = e.tgid;
    ASSERT_GE(tgid, 0) << "the record names the frame loop's process";
    for (const SchedEvent& e : record.events) {
      if (e.time_ns < from_ns || e.time_ns > to_ns || e.tgid != tgid) continue;
      if (e.comm != "spinner") continue;
      ++spinner_events;  // on a CPU when the event came
      if (e.kind == SchedEventKind::wakeup && !e.in_interrupt) {
        ++spinner_wakeups;
        ADD_FAILURE() << dir << ": spinner " << e.tid << " woke " << e.subject_comm << " "
                      << e.subject_tid << " at " << e.time_ns;
      }
    }
    EXPECT_EQ(spinner_wakeups, 0u) << dir;
  }
  // The check saw spinners: they ran in the measured frames (on CPUs the frame left idle).
  EXPECT_GE(spinner_events, 1u) << "the record has no spinner on a CPU in any round";

  // The report reads it back from verdict.json into answer 4.
  const auto report = run_gpuoverlap("report " + out.string());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(read_text_file(out / "report.md").find("the kernel's record (3 rounds"),
            std::string::npos);
}

// One trace instance serves every record of a process: the second record is taken from the
// instance the first made, cleared (none of the first's events in it), and the instances stay
// only while the process lives. An instance a killed run left behind (its pid gone) is removed
// when the next run makes its first.
TEST(SchedTrace, OneInstanceIsKeptAndClearedBetweenRecordsAndLeftoversAreRemoved) {
  if (const std::string why = sched_trace_unavailable_reason(); !why.empty()) {
    if (record_required()) FAIL() << "the kernel's record is required here: " << why;
    GTEST_SKIP() << "the kernel's record cannot be taken here: " << why;
  }
  const fs::path instances = fs::path(tracefs_root()) / "instances";
  const std::size_t made_before = tracefs_instances_made();
  auto first = TracefsRecording::start(4096);
  ASSERT_TRUE(first) << first.error().message;
  auto first_text = first->stop();
  ASSERT_TRUE(first_text) << first_text.error().message;
  const std::int64_t second_from_ns = monotonic_raw_ns();
  auto second = TracefsRecording::start(4096);
  ASSERT_TRUE(second) << second.error().message;
  auto second_text = second->stop();
  ASSERT_TRUE(second_text) << second_text.error().message;
  EXPECT_LE(tracefs_instances_made(), made_before + 1) << "the second record made an instance";
  const SchedRecord second_record = second_text->parse();
  for (const SchedEvent& e : second_record.events)
    ASSERT_GE(e.time_ns, second_from_ns - 1000) << "an event from before the second record began";

  // A leftover of a process that is gone (no pid is this large), removed by the next run.
  const fs::path leftover = instances / "gpuoverlap-999999999-0";
  std::error_code ec;
  fs::remove(leftover, ec);
  ASSERT_TRUE(fs::create_directory(leftover, ec)) << ec.message();
  const fs::path out = fresh_path(temp_path("sched-trace-leftover"));
  const auto run = run_gpuoverlap("run " + test_data("game-frame-managed.toml") +
                                  " --frames 3 --sched-trace --out " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_FALSE(fs::exists(leftover)) << "the leftover instance is still there";
  // No instance outlives its process (other tests' runs may be recording beside this one, so
  // only the instances of processes that are gone are faults).
  for (const auto& entry : fs::directory_iterator(instances, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("gpuoverlap-")) continue;
    const long pid = std::strtol(name.c_str() + std::string("gpuoverlap-").size(), nullptr, 10);
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ADD_FAILURE() << "instance " << name << " outlived its process";
  }
}

// A kept instance read to its end is reused without clearing it: its overrun counts go on, so
// a record's overrun is counted from its own start. The first record overflows its small
// buffer with this thread's own sched_yield calls; the second, right after, is not charged
// with them.
TEST(SchedTrace, AKeptInstancesOverrunIsCountedFromEachRecordsStart) {
  if (const std::string why = sched_trace_unavailable_reason(); !why.empty()) {
    if (record_required()) FAIL() << "the kernel's record is required here: " << why;
    GTEST_SKIP() << "the kernel's record cannot be taken here: " << why;
  }
  constexpr std::uint32_t kSmallBufferKb = 64;
  auto first = TracefsRecording::start(kSmallBufferKb);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->instance() == "new" || first->instance() == "kept, drained")
      << first->instance();
  for (int i = 0; i < 200'000; ++i) sched_yield();  // each a sys_enter event: megabytes
  auto first_data = first->stop();
  ASSERT_TRUE(first_data) << first_data.error().message;
  ASSERT_FALSE(first_data->overrun_by_cpu.empty()) << "200,000 yields fit in 64 KB a CPU";
  const SchedRecord first_record = first_data->parse();
  EXPECT_FALSE(first_record.lost_events_by_cpu.empty());
  const std::size_t made = tracefs_instances_made();
  auto second = TracefsRecording::start(kSmallBufferKb);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(tracefs_instances_made(), made) << "the kept instance was not reused";
  EXPECT_EQ(second->instance(), "kept, drained") << "read to its end, it needs no clearing";
  auto second_data = second->stop();
  ASSERT_TRUE(second_data) << second_data.error().message;
  // Other tests' threads may yield beside this one and overflow the second's buffer too, but
  // not by as much in the moment it lasts: counted from the instance's birth, each CPU's count
  // would be at least the first's.
  for (const auto& [cpu, count] : second_data->overrun_by_cpu) {
    const auto first_count = first_data->overrun_by_cpu.find(cpu);
    if (first_count != first_data->overrun_by_cpu.end()) {
      EXPECT_LT(count, first_count->second) << "cpu " << cpu << ": the first record's overrun";
    }
  }
}

TEST(SchedTrace, WhereTheRecordCannotBeTakenTheRunGoesOnAndSaysWhy) {
  const fs::path out = fresh_path(temp_path("sched-trace-unavailable"));
  const auto run = run_command(
      "GPUOVERLAP_TRACEFS=/nonexistent-tracefs " + std::string(GPUOVERLAP_BINARY) + " run " +
      test_data("game-frame-managed.toml") + " --frames 5 --sched-trace --out " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto meta = read_json_file(out / "game-frame-managed" / "meta.json");
  EXPECT_EQ(meta["sched_trace"]["recorded"], false);
  EXPECT_NE(meta["sched_trace"]["why"].get<std::string>().find("/nonexistent-tracefs"),
            std::string::npos)
      << meta["sched_trace"].dump();
  EXPECT_FALSE(fs::exists(out / "game-frame-managed" / "sched_waits.csv"));
  // Without the option, nothing is said of it.
  const fs::path plain = fresh_path(temp_path("sched-trace-off"));
  ASSERT_EQ(run_gpuoverlap("run " + test_data("game-frame-managed.toml") + " --frames 3 --out " +
                           plain.string())
                .exit_code,
            0);
  EXPECT_FALSE(read_json_file(plain / "game-frame-managed" / "meta.json").contains("sched_trace"));
}

}  // namespace
}  // namespace gpuoverlap
