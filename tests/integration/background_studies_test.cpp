// Background processing's studies end to end on lavapipe: the non-intrusiveness preset and its
// verdict, rounds added to an undecided study, a round time limit, alternating blocks. Verdicts
// are timings and are not asserted; their consistency with the files is.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analysis/csv_table.h"
#include "analysis/verdict.h"
#include "core/cpu_affinity.h"
#include "results_tools.h"
#include "run_binary.h"
#include "run_checks.h"
#include "scenarios/presets.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

// One round's meta.json of the non-intrusiveness study: the foreground is a game frame, and the
// host and the scheduling every kind of thread read back, which the verdict is about.
void expect_study_round_host_and_threads(const nlohmann::json& meta, const std::string& name) {
  // The foreground is a game frame: its CPU phase ran before each frame's GPU work.
  EXPECT_EQ(meta["cpu"]["critical_jobs"], 3);
  EXPECT_GT(meta["cpu"]["busy_work_calibration"]["iterations_per_us"].get<double>(), 0);
  // The host and the scheduling every kind of thread read back, which the verdict is about.
  EXPECT_FALSE(meta["host"]["cpu_model"].get<std::string>().empty());
  EXPECT_GT(meta["host"]["usable_cpus"].get<int>(), 0);
  EXPECT_FALSE(meta["host"]["preemption"]["model"].get<std::string>().empty());
  EXPECT_FALSE(meta["host"]["preemption"]["source"].get<std::string>().empty());
  EXPECT_FALSE(meta["host"]["kernel_version"].get<std::string>().empty());
  // The topology the placement keys act on: every usable CPU in one core's group, and a
  // core with siblings exactly where the groups say so.
  const auto& smt = meta["host"]["smt"];
  ASSERT_TRUE(smt["cores"].is_number()) << smt.dump();
  EXPECT_GE(smt["cores"].get<int>(), 1);
  EXPECT_LE(smt["cores"].get<int>(), meta["host"]["usable_cpus"].get<int>());
  EXPECT_EQ(smt["shows_smt"].get<bool>(), !smt["sibling_groups"].empty()) << smt.dump();
  EXPECT_EQ(smt["shows_smt"].get<bool>(),
            smt["cores"].get<int>() < meta["host"]["usable_cpus"].get<int>())
      << smt.dump();
  EXPECT_EQ(smt.contains("note"), smt["virtual_machine"] == true && !smt["shows_smt"].get<bool>())
      << smt.dump();
  const auto& threads = meta["threads"];
  EXPECT_EQ(threads["frame_loop"]["policy"], "SCHED_OTHER");
  EXPECT_EQ(threads["frame_loop"]["run_delay"], "kept") << "Linux: /proc/thread-self/schedstat";
  // The poller: placed as asked (the default priority is normal) and read back.
  EXPECT_EQ(meta["poller"]["priority_requested"], "normal");
  // A normal poller keeps the nice value the process had (a niced test runner's).
  errno = 0;
  const int nice_now = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  EXPECT_EQ(meta["poller"]["scheduling"], "SCHED_OTHER, nice " + std::to_string(nice_now));
  EXPECT_EQ(threads["job_workers"]["policy"], "SCHED_OTHER");
  EXPECT_EQ(threads["job_workers"]["threads"], meta["cpu"]["workers"]);
  // Each kind's affinity: the process's CPUs, as the test's own thread has them, less the
  // poller's where it was reserved (--poller-core auto does so from 4 CPUs on); nothing in
  // the preset pins another thread kind.
  std::vector<int> cpus_left = usable_cpu_ids();
  if (meta["poller"]["cpu_reserved"].get<bool>())
    std::erase(cpus_left, meta["poller"]["cpu"].get<int>());
  const std::string process_cpus = describe_cpus(cpus_left);
  EXPECT_EQ(threads["frame_loop"]["cpus"], process_cpus) << threads.dump();
  EXPECT_EQ(threads["job_workers"]["cpus"], process_cpus) << threads.dump();
  if (name == "managed" || name == "commit-high-priority") {
    EXPECT_EQ(threads["background_idle"]["policy"], "SCHED_IDLE") << threads.dump();
    EXPECT_EQ(threads["background_idle"]["cpus"], process_cpus) << threads.dump();
  }
  if (name.rfind("unmanaged", 0) == 0) {
    EXPECT_EQ(threads["background_unmanaged"]["policy"], "SCHED_OTHER") << threads.dump();
  }
  if (name == "baseline" || name == "null") {
    EXPECT_FALSE(threads.contains("background_idle"));
  }
}

// One round's frames.csv of the game frame: every frame's CPU phase and interval explained;
// `overlapped` counts the frames some background work overlapped.
void expect_study_round_frames(const CsvTable<kFrameColumns.size()>& frames,
                               std::size_t& overlapped) {
  for (std::size_t f = 0; f < frames.rows.size(); ++f) {
    EXPECT_EQ(frames.at(f, "status"), "ok");
    ASSERT_TRUE(frames.number(f, "cpu_phase_us") && frames.number(f, "critical_path_us"));
    EXPECT_LE(*frames.number(f, "critical_path_us"), *frames.number(f, "cpu_phase_us"));
    expect_interval_explained(frames, f);
    EXPECT_TRUE(frames.number(f, "gpu_span_us"));
    EXPECT_TRUE(frames.number(f, "wake_max_us"));
    EXPECT_GT(*frames.number(f, "cpu_frame_us"), 0.0);
    EXPECT_LE(*frames.number(f, "cpu_submit_us"), *frames.number(f, "cpu_frame_us"));
    EXPECT_GE(*frames.number(f, "submit_to_start_us"), 0.0);
    const bool any = frames.at(f, "bg_managed") != "0" || frames.at(f, "bg_unmanaged") != "0";
    overlapped += any ? 1 : 0;
  }
  expect_workers_ran(frames);
}

// One round's background.csv of a condition that compiles: every compile's outcome, kind and
// priority; only commit-high-priority boosts.
void expect_study_round_background(const fs::path& dir, const std::string& condition) {
  const auto bg = read_csv((dir / "background.csv").string(), kBackgroundColumns);
  ASSERT_GT(bg.rows.size(), 0u);
  expect_compiles_on_threads(bg);
  std::size_t boosted = 0;
  for (std::size_t t = 0; t < bg.rows.size(); ++t) {
    const std::string outcome = bg.at(t, "outcome");
    EXPECT_TRUE(outcome == "delivered" || outcome == "cancelled" ||
                outcome == "skipped (stopping)" ||
                outcome == "compiled; pipeline skipped (stopping)")
        << outcome;
    const bool unmanaged = condition.starts_with("unmanaged");
    EXPECT_EQ(bg.at(t, "kind"), unmanaged ? "unmanaged" : "managed");
    if (bg.at(t, "ran") != "1") continue;
    boosted += bg.at(t, "boosted") == "1" ? 1 : 0;
    // Managed compiles run at SCHED_IDLE unless boosted; the control never does.
    EXPECT_EQ(bg.at(t, "idle_priority"), !unmanaged && bg.at(t, "boosted") == "0" ? "1" : "0")
        << bg.at(t, "label");
  }
  if (condition == "commit-high-priority") {
    EXPECT_GT(boosted, 0u);
  } else {
    EXPECT_EQ(boosted, 0u);
  }
}

// One condition's round of the non-intrusiveness study: on a device of its own, at the
// calibrated period, a game frame whose background work overlapped its frames unless it is the
// baseline or the null control.
void expect_non_intrusiveness_round(const fs::path& study, const std::string& condition, int round,
                                    double period_ms, const nlohmann::json& calibration,
                                    std::set<std::string>& opened_for) {
  SCOPED_TRACE(condition + " round " + std::to_string(round));
  const fs::path dir = study / condition / ("round-" + std::to_string(round));
  const auto meta = read_json_file(dir / "meta.json");
  EXPECT_EQ(meta["device_opening"]["run"], 1);
  EXPECT_TRUE(meta["device_opening"]["washout"].is_null());
  opened_for.insert(meta["device_opening"]["opened_for"].get<std::string>());
  EXPECT_EQ(meta["cpu"]["frame_period_ms"].get<double>(), period_ms);
  EXPECT_EQ(meta["cpu"]["period_calibration"], calibration);
  const auto frames = read_csv((dir / "frames.csv").string(), kFrameColumns);
  ASSERT_EQ(frames.rows.size(), 10u) << "30 frames over 3 rounds";
  ASSERT_NO_FATAL_FAILURE(expect_study_round_host_and_threads(meta, condition));
  std::size_t overlapped = 0;
  ASSERT_NO_FATAL_FAILURE(expect_study_round_frames(frames, overlapped));
  EXPECT_EQ(meta["scenario"]["study"].value("null_control", false), condition == "null");
  EXPECT_EQ(meta["scenario"]["study"].value("negative_control", false),
            condition == "idle-spinners");
  if (condition == "idle-spinners") {
    // No compile: one idle-priority thread per foreground CPU, each pinned, cycling memory.
    EXPECT_EQ(overlapped, 0u);
    EXPECT_EQ(read_csv((dir / "background.csv").string(), kBackgroundColumns).rows.size(), 0u);
    const auto& spinners = meta["background"]["idle_spinners"];
    EXPECT_EQ(spinners["threads"], 2) << "both CPUs of this 2-core machine: " << spinners;
    EXPECT_GT(spinners["cycles"].get<std::uint64_t>(), 0u) << "they ran";
    EXPECT_EQ(spinners["refused"], "");
    EXPECT_EQ(meta["threads"]["background_idle_spinners"]["policy"], "SCHED_IDLE");
    return;
  }
  if (condition == "baseline" || condition == "null") {
    EXPECT_EQ(overlapped, 0u);
    EXPECT_FALSE(fs::exists(dir / "background.csv"));
    return;
  }
  EXPECT_GT(overlapped, 0u) << "continuous compiles run during the measured frames";
  expect_study_round_background(dir, condition);
}

// verdict.csv of the non-intrusiveness study: six conditions beside the baseline x (3 primary
// endpoints of the paced game frame: the frame interval's median, late frames and stutters; 4
// diagnostics of where the time went: CPU phase, critical path, wake-up, GPU span; 4 frame
// diagnostics, 8 workload durations, and submit_to_start_us where a baseline frame had an
// undisturbed start: on lavapipe the poller loses its CPU often enough that none may have).
void expect_non_intrusiveness_metrics(const CsvTable<kVerdictColumns.size()>& verdict) {
  std::map<std::string, std::size_t> rows_per_metric;
  for (std::size_t r = 0; r < verdict.rows.size(); ++r) ++rows_per_metric[verdict.at(r, "metric")];
  const std::size_t with_start = rows_per_metric.count("submit_to_start_us");
  ASSERT_EQ(rows_per_metric.size(), 19u + with_start);
  for (const auto& [metric, rows] : rows_per_metric) EXPECT_EQ(rows, 6u) << metric;
  EXPECT_EQ(rows_per_metric.count("poll_disturbed"), 1u);
  ASSERT_EQ(verdict.rows.size(), 6u * (19u + with_start));
  for (std::size_t r = 0; r < verdict.rows.size(); ++r) {
    const std::string metric = verdict.at(r, "metric");
    const bool primary =
        metric == "frame_interval_us" || metric == "late_frames" || metric == "stutters";
    EXPECT_EQ(verdict.at(r, "role"), primary ? "primary" : "diagnostic") << metric;
  }
}

// One condition of verdict.json: its pacing, where its time went, its host bursts, what its
// compiles cost; the null control's call is the A/A test's.
void expect_non_intrusiveness_condition(const nlohmann::json& summary, const nlohmann::json& c) {
  // Pacing counts are of the frames the verdict used.
  ASSERT_TRUE(c["pacing"].is_object()) << c.dump();
  EXPECT_LE(c["pacing"]["late"].get<std::size_t>(), c["pacing"]["frames"].get<std::size_t>());
  EXPECT_LE(c["pacing"]["stutters"].get<std::size_t>(), c["pacing"]["late"].get<std::size_t>())
      << "the stutter line lies beyond the late line";
  // Where the time went: the six phases' shifts add up to the interval's, a line says it.
  const auto& account = c["time_account"];
  ASSERT_TRUE(account.is_object()) << c.dump();
  ASSERT_EQ(account["phases"].size(), 6u);
  double shifts_us = 0;
  for (const auto& p : account["phases"]) shifts_us += p["shift_us"].get<double>();
  EXPECT_NEAR(shifts_us, account["interval"]["shift_us"].get<double>(), 0.5) << account.dump();
  EXPECT_TRUE(account["run_delay"].is_object()) << "Linux keeps the run delay";
  EXPECT_LE(account["late_overlapping_background"].get<std::size_t>(),
            account["late_frames"].get<std::size_t>());
  EXPECT_LE(account["intervals_sharing_cpu"].get<std::size_t>(),
            account["intervals_with_compiles"].get<std::size_t>());
  if (!c["null_control"].get<bool>() && !c["negative_control"].get<bool>()) {
    EXPECT_GT(account["intervals_with_compiles"].get<std::size_t>(), 0u)
        << "compiles ran, and Linux names their threads' CPUs";
  }
  EXPECT_TRUE(account["line"].get<std::string>().starts_with("frame interval ")) << account["line"];
  EXPECT_NE(summary["summary"].get<std::string>().find(account["line"].get<std::string>()),
            std::string::npos);
  // Host bursts: counted per condition, each named by a cause; the counts add up.
  const auto& bursts = c["host_bursts"];
  ASSERT_TRUE(bursts.is_object()) << "the game frame has a CPU phase: " << c.dump();
  EXPECT_EQ(bursts["frames"].get<std::size_t>(),
            bursts["waited_for_cpu"].get<std::size_t>() + bursts["ran_longer"].get<std::size_t>() +
                bursts["off_cpu"].get<std::size_t>() + bursts["unknown"].get<std::size_t>());
  // Linux has the workers' figures; only a round's last frame, whose jobs' interval no
  // record holds, can go unnamed.
  EXPECT_LE(bursts["unknown"].get<std::size_t>(), 3u) << "one per round at most: " << bursts;
  // What the compiles cost their threads, for a condition that compiled.
  const auto& progress = c["progress"];
  if (progress["compiles"].get<std::size_t>() > 0) {
    ASSERT_TRUE(progress["on_cpu_ms_per_compile"].is_number()) << progress.dump();
    ASSERT_TRUE(progress["kernel_share"].is_number()) << progress.dump();
    EXPECT_GE(progress["kernel_share"].get<double>(), 0.0);
    EXPECT_LE(progress["kernel_share"].get<double>(), 1.5) << "sampled at ticks, near 0..1";
  }
  if (c["negative_control"].get<bool>()) {
    // Idle-priority threads the kernel runs only where the frame leaves a CPU idle: on a
    // neutral harness never intrusive, and the study says so.
    EXPECT_EQ(c["condition"], "idle-spinners");
    EXPECT_EQ(c["active_frames"], c["frames"]) << "every frame of the negative control is evidence";
    EXPECT_NE(decision_of(c), Decision::intrusive) << "a harness fault: " << c.dump();
    EXPECT_FALSE(summary["harness_fault"].get<bool>());
    EXPECT_NE(summary["summary"].get<std::string>().find("negative control not called intrusive"),
              std::string::npos);
  }
  if (c["null_control"].get<bool>()) {
    EXPECT_EQ(c["condition"], "null");
    EXPECT_EQ(c["active_frames"], c["frames"]) << "every frame of the null is evidence";
    EXPECT_EQ(summary["null_false_alarm"].get<bool>(), decision_of(c) == Decision::intrusive);
  }
}

// The control's doses, fewest threads first (4 threads, and one per hardware thread: 2 on a
// 2-core machine); the smallest one detected, where the control was; the dose that must
// intrude, where the frame has one (a paced frame whose workers need more than half its period:
// on a CPU device the period is measured for the device and leaves more slack, so none).
void expect_non_intrusiveness_doses(const nlohmann::json& summary, bool detected) {
  const auto& doses = summary["control_doses"];
  ASSERT_EQ(doses.size(), 2u);
  std::vector<int> threads;
  for (const auto& d : doses) threads.push_back(d["threads"].get<int>());
  EXPECT_TRUE(std::is_sorted(threads.begin(), threads.end()));
  for (int dose : {4, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))})
    EXPECT_NE(std::find(threads.begin(), threads.end(), dose), threads.end()) << dose;
  const auto& must = summary["must_intrude"];
  if (!must.is_null()) {
    EXPECT_GE(must["threads"].get<int>(), 2) << "the workers' CPUs and the poller's";
    EXPECT_NE(must["why"].get<std::string>().find("past the"), std::string::npos);
    EXPECT_EQ(must["detected"].get<bool>(),
              std::any_of(doses.begin(), doses.end(), [&](const nlohmann::json& d) {
                return d["threads"].get<int>() >= must["threads"].get<int>() &&
                       decision_of(d) == Decision::intrusive;
              }));
  }
  if (detected) {
    bool seen = false;
    for (const auto& d : doses)
      if (decision_of(d) == Decision::intrusive && !seen) {
        EXPECT_EQ(summary["detected_from_threads"], d["threads"]) << "the smallest dose detected";
        seen = true;
      }
  } else {
    EXPECT_TRUE(summary["detected_from_threads"].is_null());
  }
}

// Progress beside the cost: the compiles counted are compiles background.csv shows completed
// (how many complete is a timing: at idle priority on a loaded 2-core machine, none may), the
// rate is that count over the measured time, and only a non-intrusive condition is starved.
void expect_non_intrusiveness_progress(const nlohmann::json& summary, const fs::path& study) {
  for (const auto& c : summary["conditions"]) {
    const std::string name = c["condition"].get<std::string>();
    std::size_t completed = 0;
    if (c["null_control"].get<bool>()) {
      EXPECT_EQ(c["progress"]["compiles"], 0) << "the null control compiles nothing";
      continue;
    }
    for (int round = 1; round <= 3; ++round) {
      const auto bg =
          read_csv((study / name / ("round-" + std::to_string(round)) / "background.csv").string(),
                   kBackgroundColumns);
      for (std::size_t t = 0; t < bg.rows.size(); ++t) {
        const std::string outcome = bg.at(t, "outcome");
        completed +=
            bg.at(t, "ran") == "1" && (outcome == "delivered" || outcome.starts_with("compiled") ||
                                       outcome.starts_with("dropped"))
                ? 1
                : 0;
      }
    }
    const auto& progress = c["progress"];
    const auto compiles = progress["compiles"].get<std::size_t>();
    EXPECT_LE(compiles, completed) << name;
    ASSERT_GT(progress["seconds"].get<double>(), 0) << name;
    EXPECT_NEAR(progress["compiles_per_s"].get<double>(),
                static_cast<double>(compiles) / progress["seconds"].get<double>(), 1e-9)
        << name;
    if (c["starved"].get<bool>()) {
      EXPECT_EQ(c["verdict"], "non-intrusive") << name;
    }
  }
}

// verdict.csv's decisions: a diagnostic never decides; a primary endpoint has no power only
// where the control was not detected; the baseline uses every frame.
void expect_non_intrusiveness_decisions(const CsvTable<kVerdictColumns.size()>& verdict,
                                        bool detected) {
  std::size_t primary_rows = 0;
  for (std::size_t r = 0; r < verdict.rows.size(); ++r) {
    const std::string v = verdict.at(r, "verdict");
    const bool control = verdict.at(r, "condition").starts_with("unmanaged");
    EXPECT_EQ(verdict.at(r, "control"), control ? "1" : "0");
    if (verdict.at(r, "role") == "diagnostic") {
      EXPECT_TRUE(v.starts_with("diagnostic: ")) << v << " never decides";
      continue;
    }
    EXPECT_EQ(verdict.at(r, "role"), "primary");
    ++primary_rows;
    // Without the positive control detected every policy's row is "no power"; the null and the
    // negative control keep their own calls (they test the error control and the harness).
    if (!control && !detected && verdict.at(r, "condition") != "null" &&
        verdict.at(r, "condition") != "idle-spinners") {
      EXPECT_EQ(v, "inconclusive (no power)");
    } else {
      const auto decision = parse_decision(v);
      EXPECT_TRUE(decision && is_primary_decision(*decision) && decision != Decision::no_power)
          << v;
    }
    // The baseline uses every frame; a condition only those its background work overlapped.
    EXPECT_EQ(verdict.at(r, "baseline_frames"), "30");
    EXPECT_LE(*verdict.number(r, "frames"), 30.0);
    const auto low = verdict.number(r, "ci_low"), high = verdict.number(r, "ci_high");
    if (low && high) {
      EXPECT_LE(*low, *high);
    }
  }
  EXPECT_EQ(primary_rows, 6u * 3u) << "the paced frame's interval median, late frames, stutters";
}

// The non-intrusiveness preset on lavapipe: seven conditions (a null and a negative control), a
// verdict.csv, background compiles recorded where they ran. Verdicts are not asserted (they are
// timings); their consistency is.
TEST(Background, NonIntrusivenessWritesAVerdict) {
  const fs::path out = fresh_path(temp_path("non-intrusiveness"));
  // A frame's deadline of a minute, not the default 10 s: with two tests at once under a
  // sanitizer a managed lavapipe frame has taken 10.2 s (its idle-priority compile threads get
  // almost no CPU beside the spinning ones, and what lavapipe's queue waits on may be held by
  // them); this test asserts what the study writes, not how fast frames are.
  const auto r =
      run_gpuoverlap("run non-intrusiveness --frames 30 --timeout-ms 60000 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("study non-intrusiveness"), std::string::npos) << r.output;
  const fs::path study = out / "non-intrusiveness";
  // On the CPU device the files' 8 ms period is paced at one the device sustains, measured once
  // from the baseline run unpaced; every condition and round runs at it, and the verdict's
  // lines are drawn from it.
  EXPECT_NE(r.output.find("non-intrusiveness: the device is the CPU: paced at "), std::string::npos)
      << r.output;
  const auto first_meta = read_json_file(study / "baseline" / "round-1" / "meta.json");
  const auto& calibration = first_meta["cpu"]["period_calibration"];
  ASSERT_TRUE(calibration.is_object()) << first_meta["cpu"].dump();
  EXPECT_EQ(calibration["period_ms_in_file"].get<double>(), 8.0);
  EXPECT_EQ(calibration["from"], "non-intrusiveness/baseline/round-1");
  const double period_ms = first_meta["cpu"]["frame_period_ms"].get<double>();
  EXPECT_EQ(period_ms,
            std::max(8.0, std::ceil(1.15 * calibration["unpaced_interval_p50_ms"].get<double>())));
  // Without --share-device every condition and round opens a device of its own.
  std::set<std::string> opened_for;
  for (const char* condition : {"baseline", "null", "idle-spinners", "managed",
                                "commit-high-priority", "unmanaged-4", "unmanaged"})
    for (int round = 1; round <= 3; ++round)
      ASSERT_NO_FATAL_FAILURE(expect_non_intrusiveness_round(study, condition, round, period_ms,
                                                             calibration, opened_for));
  EXPECT_EQ(opened_for.size(), 21u);
  const auto verdict = read_csv((study / "verdict.csv").string(), kVerdictColumns);
  ASSERT_NO_FATAL_FAILURE(expect_non_intrusiveness_metrics(verdict));
  const auto summary = read_json_file(study / "verdict.json");
  // The null control is judged like a condition; its call is the A/A test's, kept as it is.
  EXPECT_TRUE(summary["has_null"].get<bool>());
  ASSERT_TRUE(summary["late_line_us"].is_number());
  EXPECT_GE(summary["late_line_us"].get<double>(), period_ms * 1000 * 1.05);
  EXPECT_EQ(summary["stutter_line_us"].get<double>(), period_ms * 1000 * 1.5);
  // At the calibrated pace the baseline keeps it: pacing is judged, not every frame a stutter.
  EXPECT_LT(2 * summary["baseline_pacing"]["stutters"].get<std::size_t>(),
            summary["baseline_pacing"]["frames"].get<std::size_t>())
      << summary["baseline_pacing"].dump();
  std::size_t nulls = 0;
  for (const auto& c : summary["conditions"]) {
    nulls += c["null_control"].get<bool>() ? 1 : 0;
    ASSERT_NO_FATAL_FAILURE(expect_non_intrusiveness_condition(summary, c));
  }
  EXPECT_EQ(nulls, 1u);
  ASSERT_TRUE(summary["burst_line_us"].is_number());
  ASSERT_TRUE(summary["baseline_host_bursts"].is_object());
  EXPECT_NE(summary["summary"].get<std::string>().find("baseline: "), std::string::npos);
  const bool detected = summary["control_detected"].get<bool>();
  EXPECT_TRUE(summary["has_control"].get<bool>());
  // On a CPU device no rounds are added: the six planned ran, and the verdict says why it
  // stopped.
  ASSERT_NO_FATAL_FAILURE(expect_non_intrusiveness_doses(summary, detected));
  const auto& progress = summary["progress"];
  EXPECT_EQ(progress["rounds_run"], 3);
  EXPECT_EQ(progress["budget_s"], 0.0);
  EXPECT_FALSE(fs::exists(study / "managed" / "round-4"));
  const std::string stop = progress["stop"].get<std::string>();
  // Decided, it may still have wanted rounds for the control's smaller doses (none are added
  // on a CPU device).
  EXPECT_TRUE(progress["decided"].get<bool>() ? stop.starts_with("decided")
                                              : stop.find("no budget") != std::string::npos)
      << stop;
  if (stop != "decided") {
    EXPECT_NE(stop.find("no budget"), std::string::npos) << stop;
  }
  ASSERT_NO_FATAL_FAILURE(expect_non_intrusiveness_progress(summary, study));
  expect_non_intrusiveness_decisions(verdict, detected);
  fs::remove_all(out);
}

// A study of three-dispatches: its baseline and a managed condition of two compile tasks,
// `frames` after one warm-up frame, over `rounds`.
std::string managed_study_toml(const std::string& name, int frames, int rounds) {
  return study_toml("name = \"" + name + "\"\nforeground = \"three-dispatches\"\nframes = " +
                        std::to_string(frames) +
                        "\nwarmup_frames = 1\nrounds = " + std::to_string(rounds) + "\n",
                    {{"managed", "tasks = 2\n"}});
}

// A study whose verdict is undecided gets rounds added, interleaved as the planned ones, up to
// --study-max-rounds; every added round is written and listed like a planned one. Whether
// lavapipe's timings decide early is not asserted; what each outcome implies is.
TEST(Background, AnUndecidedStudyAddsRoundsUntilItDecidesOrReachesItsLimit) {
  StudyRun study;
  ASSERT_NO_FATAL_FAILURE(
      run_study(study, "adaptive", managed_study_toml("adaptive", 12, 2),
                "--study-budget-s 100000 --study-max-rounds 4 --share-device --washout-ms 1"));
  const fs::path& out = study.out;
  const auto verdict = read_json_file(out / "adaptive" / "verdict.json");
  const auto& progress = verdict["progress"];
  const int rounds = progress["rounds_run"].get<int>();
  const std::string stop = progress["stop"].get<std::string>();
  EXPECT_EQ(progress["rounds_planned"], 2);
  EXPECT_EQ(verdict["rounds"], rounds);
  if (progress["decided"].get<bool>()) {
    EXPECT_EQ(stop, "decided");
    EXPECT_LE(rounds, 4);
  } else {
    EXPECT_EQ(rounds, 4) << "undecided: rounds are added up to --study-max-rounds";
    EXPECT_NE(stop.find("max_rounds = 4"), std::string::npos) << stop;
  }
  // Every round that ran is on disk and in run.json, in the interleaved order.
  const auto run = read_json_file(out / "run.json");
  ASSERT_EQ(run["scenarios"].size(), 2u * static_cast<std::size_t>(rounds));
  for (int round = 1; round <= rounds; ++round) {
    const std::string first = round % 2 == 1 ? "baseline" : "managed";
    EXPECT_EQ(run["scenarios"][2 * (round - 1)]["name"],
              "adaptive/" + first + "/round-" + std::to_string(round));
    for (const char* condition : {"baseline", "managed"}) {
      const fs::path scenario = out / "adaptive" / condition / ("round-" + std::to_string(round));
      EXPECT_TRUE(fs::exists(scenario / "frames.csv"));
      // --share-device: one device for the study; before every run but its first, a washout
      // of whole chunks of the foreground alone, whose frames are not the run's.
      const auto opening = read_json_file(scenario / "meta.json")["device_opening"];
      EXPECT_EQ(opening["opened_for"], "adaptive/baseline/round-1");
      const bool first_run = round == 1 && std::string(condition) == "baseline";
      EXPECT_EQ(opening["washout"].is_null(), first_run) << opening.dump();
      if (!first_run) {
        EXPECT_GE(opening["washout"]["frames"].get<int>(), 25);
      }
      const auto frames = read_csv((scenario / "frames.csv").string(), kFrameColumns);
      EXPECT_EQ(frames.rows.size(), 6u) << "12 frames over 2 planned rounds";
    }
  }
  for (int round = 3; round <= rounds; ++round)
    EXPECT_NE(study.result.output.find("adding round " + std::to_string(round)), std::string::npos)
        << study.result.output;
  // The verdict's rows use every round.
  const auto rows = read_csv((out / "adaptive" / "verdict.csv").string(), kVerdictColumns);
  ASSERT_GT(rows.rows.size(), 0u);
  for (std::size_t i = 0; i < rows.rows.size(); ++i)
    EXPECT_LE(*rows.number(i, "units"), static_cast<double>(rounds));
  // report reads the extended study.
  EXPECT_EQ(run_gpuoverlap("report " + out.string()).exit_code, 0);
  fs::remove_all(study.dir);
}

// --study-round-ms: every condition's round measures its frames or for that long. With 1 ms a
// round ends after its first measured frames (how many is a timing; at least one, fewer than
// planned is not asserted for the fastest), each run says why in meta.json, the settings record
// the limit, and the verdict and report read rounds of unequal length.
TEST(Background, ARoundTimeLimitEndsEachConditionsRoundAndTheVerdictReadsIt) {
  StudyRun study;
  ASSERT_NO_FATAL_FAILURE(
      run_study(study, "round-limit", managed_study_toml("limited", 600, 3), "--study-round-ms 1"));
  const fs::path& out = study.out;
  for (const char* condition : {"baseline", "managed"})
    for (int round = 1; round <= 3; ++round) {
      SCOPED_TRACE(std::string(condition) + " round " + std::to_string(round));
      const fs::path scenario = out / "limited" / condition / ("round-" + std::to_string(round));
      const auto meta = read_json_file(scenario / "meta.json");
      EXPECT_EQ(meta["settings"]["measure_limit_ms"], 1);
      const auto frames = read_csv((scenario / "frames.csv").string(), kFrameColumns);
      ASSERT_GE(frames.rows.size(), 1u);
      // The round's frames (200, or 60 with a CPU device's sizes) take far longer than 1 ms.
      ASSERT_TRUE(meta.contains("ended_early")) << meta.dump();
      EXPECT_EQ(meta["ended_early"]["measured_frames"], frames.rows.size());
      EXPECT_EQ(meta["ended_early"]["of"], meta["settings"]["frames"]);
      EXPECT_LT(frames.rows.size(), meta["settings"]["frames"].get<std::size_t>());
      EXPECT_NE(meta["ended_early"]["why"].get<std::string>().find("round_ms"), std::string::npos);
    }
  const auto rows = read_csv((out / "limited" / "verdict.csv").string(), kVerdictColumns);
  ASSERT_GT(rows.rows.size(), 0u);
  EXPECT_EQ(run_gpuoverlap("report " + out.string()).exit_code, 0);
  fs::remove_all(study.dir);
}

// Alternating blocks (alternate_frames) on lavapipe: the blocks run on, off, off, on, ...; no
// compile, managed or unmanaged, starts inside a held block; and the verdict judges each
// alternating condition against exactly the frames of its own held blocks that no compile
// overlapped, as frames.csv lists them. Whether any such frame exists depends on lavapipe's
// speed, so counts are compared, not assumed.
TEST(Background, AlternatingBlocksHoldEveryCompileAndAreTheirOwnBaseline) {
  StudyRun study;
  ASSERT_NO_FATAL_FAILURE(run_study(
      study, "alternating",
      study_toml("name = \"alternating\"\nforeground = \"three-dispatches\"\nframes = 48\n"
                 "warmup_frames = 1\nrounds = 1\n",
                 {{"managed", "tasks = 2\nalternate_frames = 6\n"},
                  {"unmanaged", "unmanaged_threads = 1\nalternate_frames = 6\n"}}),
      "--study-max-rounds 1"));
  const fs::path& out = study.out;
  const auto verdict = read_csv((out / "alternating" / "verdict.csv").string(), kVerdictColumns);
  for (const char* condition : {"managed", "unmanaged"}) {
    SCOPED_TRACE(condition);
    const fs::path run = out / "alternating" / condition;  // one round: no round folders
    const auto frames = read_csv((run / "frames.csv").string(), kFrameColumns);
    ASSERT_EQ(frames.rows.size(), 48u);
    std::size_t held_quiet = 0, running_busy = 0;
    for (std::size_t f = 0; f < frames.rows.size(); ++f) {
      const bool held = background::held_in_block(6, static_cast<std::uint32_t>(f));
      EXPECT_EQ(frames.at(f, "bg_held"), held ? "1" : "0") << "frame " << f;
      const bool busy = frames.at(f, "bg_managed") != "0" || frames.at(f, "bg_unmanaged") != "0";
      if (frames.at(f, "status") != "ok") continue;
      held_quiet += held && !busy;
      running_busy += !held && busy;
    }
    // Frames 6-17 and 30-41 are held (two blocks each). The hold is set before the first of
    // them starts and released after the last ends, so no compile starts from the first's
    // start to the last's end (its start plus cpu_frame_us, which is a little short of it).
    const auto bg = read_csv((run / "background.csv").string(), kBackgroundColumns);
    std::size_t started = 0;
    for (std::size_t b = 0; b < bg.rows.size(); ++b) {
      const auto start = bg.number(b, "start_us");
      if (!start) continue;
      ++started;
      for (std::size_t first = 6; first < 48; first += 24) {
        const double from = *frames.number(first, "cpu_start_us");
        const double to =
            *frames.number(first + 11, "cpu_start_us") + *frames.number(first + 11, "cpu_frame_us");
        EXPECT_FALSE(*start >= from && *start < to)
            << bg.at(b, "label") << " started at " << *start << " us, in the held block from "
            << from << " to " << to;
      }
    }
    EXPECT_GT(started, 0u) << "the condition's background work ran";
    bool seen = false;
    for (std::size_t v = 0; v < verdict.rows.size(); ++v) {
      if (verdict.at(v, "condition") != condition || verdict.at(v, "metric") != "cpu_frame_us")
        continue;
      seen = true;
      EXPECT_EQ(verdict.at(v, "pairing"), "alternating:6");
      EXPECT_EQ(*verdict.number(v, "baseline_frames"), static_cast<double>(held_quiet));
      EXPECT_EQ(*verdict.number(v, "frames"), static_cast<double>(running_busy));
    }
    EXPECT_TRUE(seen);
    EXPECT_EQ(read_json_file(run / "meta.json")["background"]["alternate_frames"], 6);
  }
  // The baseline holds nothing.
  const auto base =
      read_csv((out / "alternating" / "baseline" / "frames.csv").string(), kFrameColumns);
  for (std::size_t f = 0; f < base.rows.size(); ++f) EXPECT_EQ(base.at(f, "bg_held"), "0");
  expect_tools_read_every_scenario(out);
  EXPECT_TRUE(fs::exists(out / "plots" / "alternating" / "verdict.png"));
  // The viewer shows a study's scenario with the study's verdict, every row of it.
  const fs::path shot = study.dir / "managed.png";
  const auto view = run_gpuoverlap_on_display(
      "view " + out.string() + " --scenario alternating/managed --screenshot " + shot.string());
  ASSERT_EQ(view.exit_code, 0) << view.output;
  const auto drawn = read_json_file(shot.string() + ".layout.json");
  EXPECT_EQ(drawn["verdict"]["rows"], verdict.rows.size());
  // Its forest plot: a row per primary endpoint and condition (the diagnostics on request).
  std::size_t forest = 0;
  for (std::size_t v = 0; v < verdict.rows.size(); ++v)
    forest += verdict.at(v, "role") == "primary";
  ASSERT_TRUE(drawn["forest"].is_object()) << drawn.dump();
  EXPECT_EQ(drawn["forest"]["rows"].size(), forest);
  // A point where verdict.csv has the number the row's decision tests, none where it has not.
  for (const auto& row : drawn["forest"]["rows"])
    for (std::size_t v = 0; v < verdict.rows.size(); ++v) {
      if (verdict.at(v, "condition") != row["condition"] ||
          verdict.at(v, "metric") != row["metric"])
        continue;
      const std::string tests = verdict.at(v, "tests");
      EXPECT_EQ(!row["median_x"].is_null(), tests.find("median") != std::string::npos &&
                                                verdict.number(v, "ratio_p50").has_value())
          << row.dump();
      EXPECT_EQ(!row["tail_x"].is_null(), tests.find("tail") != std::string::npos &&
                                              verdict.number(v, "tail_excess").has_value())
          << row.dump();
    }
  // ... and the frame times a player feels, the line report.md gives for the same scenario.
  ASSERT_TRUE(drawn["frame_time"].is_string()) << drawn.dump();
  const std::string frame_time = drawn["frame_time"];
  ASSERT_EQ(frame_time.rfind("Frame time (start to start, ms): p50 ", 0), 0u) << frame_time;
  std::ifstream report_file(out / "report-details.md");
  const std::string report((std::istreambuf_iterator<char>(report_file)),
                           std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("**Frame time** " + frame_time.substr(std::string("Frame time ").size())),
            std::string::npos)
      << frame_time;
  fs::remove_all(study.dir);
}

}  // namespace
}  // namespace gpuoverlap
