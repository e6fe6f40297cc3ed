// Background processing's runtime end to end on lavapipe: the workflow presets bind what they
// commit, each condition's compile threads run under the policy it names (as the OS reads it
// back, and as `host` says beforehand), the gaps dispatch keeps compiles out of the frame's CPU
// phase, and the background-policies study runs every policy this host has.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "all_presets.h"
#include "analysis/csv_table.h"
#include "core/cpu_affinity.h"
#include "core/kept_memory.h"
#include "results_tools.h"
#include "run_binary.h"
#include "run_checks.h"
#include "timeline/export.h"

namespace gpuoverlap {
namespace {

namespace fs = std::filesystem;

// The spec's workflows ran during training frames, before the measured ones, converged, and
// every compile they generated was delivered to the (live) pipeline.
// The workflow presets bind what they commit (bind_committed): half the measured frames run
// the build-time pipelines, then the workflow trains and commits, and every later frame runs
// the committed variant of each compute workload.
TEST_F(AllPresets, BackgroundWorkflowsConvergeBetweenBeforeAndAfterAndTheirVariantsAreBound) {
  ASSERT_EQ(result_->exit_code, 0) << result_->output;
  for (const char* p : {"bgp-benchmark-priming", "bgp-single-frame-analysis"}) {
    SCOPED_TRACE(p);
    const auto meta = read_json_file(*out_ / p / "meta.json");
    const auto& outcome = meta["background"]["workflow_outcome"];
    EXPECT_TRUE(outcome["converged"].get<bool>());
    EXPECT_GE(outcome["passes"].get<int>(), 1);
    EXPECT_LE(outcome["passes"].get<int>(), meta["background"]["max_passes"].get<int>());
    EXPECT_EQ(outcome["commit_wait_ms"].size(), outcome["passes"].get<std::size_t>());
    const std::uint32_t before = meta["background"]["before_frames"].get<std::uint32_t>();
    EXPECT_EQ(before, kFrames / 2) << "half the measured frames by default";

    const auto records = read_csv((*out_ / p / "records.csv.gz").string(), kRecordColumns);
    std::optional<double> first_after_t0_us;
    std::map<std::string, std::string> bound;  // workload -> the variant its after frames ran
    for (std::size_t r = 0; r < records.rows.size(); ++r) {
      const std::uint32_t frame = static_cast<std::uint32_t>(records.unsigned_integer(r, "frame"));
      const std::string& variant = records.at(r, "variant");
      if (frame < before) {
        EXPECT_EQ(variant, "") << "frame " << frame << " ran before the workflow";
        continue;
      }
      if (frame == before) first_after_t0_us = *records.number(r, "frame_t0_us");
      ASSERT_EQ(records.at(r, "kind"), "compute");
      EXPECT_NE(variant, "") << "frame " << frame << " after the commit";
      auto [it, inserted] = bound.emplace(records.at(r, "workload"), variant);
      EXPECT_EQ(it->second, variant) << "one committed variant for all the after frames";
    }
    ASSERT_TRUE(first_after_t0_us.has_value());
    ASSERT_EQ(bound.size(), 3u);

    const auto bg = read_csv((*out_ / p / "background.csv").string(), kBackgroundColumns);
    ASSERT_GT(bg.rows.size(), 0u);
    expect_compiles_on_threads(bg);
    std::size_t boosted = 0;
    std::set<std::string> labels;
    for (std::size_t r = 0; r < bg.rows.size(); ++r) {
      EXPECT_EQ(bg.at(r, "outcome"), "delivered") << bg.at(r, "label");
      EXPECT_EQ(bg.at(r, "kind"), "managed");
      labels.insert(bg.at(r, "label"));
      // A bound variant is a compile that finished before the first frame that ran it.
      const std::string label = bg.at(r, "label");
      for (const auto& [workload, variant] : bound) {
        if (label.rfind("compile #" + variant + " " + workload + " (", 0) == 0) {
          EXPECT_LT(*bg.number(r, "finish_us"), *first_after_t0_us) << label;
        }
      }
      boosted += bg.at(r, "boosted") == "1" ? 1 : 0;
    }
    for (const auto& [workload, variant] : bound) {
      const std::string prefix = "compile #" + variant + " " + workload + " (iterations ";
      EXPECT_TRUE(std::any_of(labels.begin(), labels.end(),
                              [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }))
          << workload << " ran variant " << variant << ", which no compile of its own made";
    }
    const auto& swaps = meta["background"]["swaps"];
    ASSERT_TRUE(swaps.is_array());
    std::size_t measured_swaps = 0;
    for (const auto& swap : swaps)
      if (!swap["measured_frame"].is_null()) {
        ++measured_swaps;
        EXPECT_EQ(swap["measured_frame"].get<std::uint32_t>(), before);
        EXPECT_EQ(std::to_string(swap["compile"].get<std::uint64_t>()),
                  bound[swap["workload"].get<std::string>()]);
      }
    EXPECT_EQ(measured_swaps, 3u);
    if (std::string(p) == "bgp-single-frame-analysis") {
      EXPECT_GT(boosted, 0u) << "COMMIT_RESULTS_HIGH_PRIORITY";
      EXPECT_EQ(meta["scenario"]["background"]["developer_mode"], true);
    } else {
      EXPECT_EQ(boosted, 0u);
    }
  }
}

// One measured frame leaves no room for a before part: the commit comes first, and the suite
// goes on; an explicit before_frames that leaves nothing after is refused and says why.
TEST(Background, BindingWithOneFrameCommitsFirstAndATooLargeBeforeIsRefused) {
  const fs::path out = fresh_path(temp_path("bind-one-frame"));
  const CommandResult one =
      run_gpuoverlap("run bgp-benchmark-priming three-dispatches --frames 1 --out " + out.string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto meta = read_json_file(out / "bgp-benchmark-priming" / "meta.json");
  EXPECT_EQ(meta["background"]["before_frames"].get<int>(), 0);
  const auto records =
      read_csv((out / "bgp-benchmark-priming" / "records.csv.gz").string(), kRecordColumns);
  ASSERT_EQ(records.rows.size(), 3u);
  for (std::size_t r = 0; r < records.rows.size(); ++r) EXPECT_NE(records.at(r, "variant"), "");
  EXPECT_TRUE(fs::exists(out / "three-dispatches" / "records.csv.gz")) << "the suite went on";
  fs::remove_all(out);

  const fs::path file = temp_path("bind-before.toml");
  {
    std::ofstream toml(file);
    toml << "name = \"bind-before\"\nframes = 4\n[queues.direct]\ntype = \"direct\"\n"
            "[[workload]]\nname = \"A\"\nqueue = \"direct\"\ngroups = 1\niterations = 4\n"
            "[background]\naction = \"commit_results\"\ntasks = 1\nbind_committed = true\n"
            "before_frames = 4\n";
  }
  const CommandResult refused = run_gpuoverlap("run " + file.string() + " --out " + out.string());
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("before_frames = 4 leaves no measured frame after the commit"),
            std::string::npos)
      << refused.output;
  fs::remove_all(out);
  fs::remove(file);
}

// A study's condition runs its compile threads under the policy it names, as the OS reads it
// back; the baseline has no compile threads, the spec's default reads SCHED_IDLE.
TEST(Background, EachConditionsCompileThreadsRunUnderItsPolicy) {
#if defined(_WIN32)
  const std::string other = "background";
#else
  const std::string other = "batch-nice19";
#endif
  StudyRun study;
  ASSERT_NO_FATAL_FAILURE(run_study(
      study, "policies",
      study_toml("name = \"policies\"\nforeground = \"three-dispatches\"\nframes = 6\n"
                 "warmup_frames = 1\nrounds = 3\nbudget_s = 0\n",
                 {{"spec", "tasks = 2\n"}, {"other", "tasks = 2\npolicy = \"" + other + "\"\n"}})));
  const fs::path& out = study.out;
  const auto spec = read_json_file(out / "policies" / "spec" / "round-1" / "meta.json");
  EXPECT_EQ(spec["background"]["policy"], "idle");
  EXPECT_TRUE(spec["background"]["processor"]["policy_refused"].is_null());
  const auto other_meta = read_json_file(out / "policies" / "other" / "round-1" / "meta.json");
  EXPECT_EQ(other_meta["background"]["policy"], other);
  EXPECT_FALSE(other_meta["background"]["processor"]["idle_priority"].get<bool>());
#if !defined(_WIN32)
  EXPECT_EQ(spec["threads"]["background_idle"]["policy"], "SCHED_IDLE");
  EXPECT_EQ(other_meta["threads"]["background_idle"]["policy"], "SCHED_BATCH");
  EXPECT_EQ(other_meta["threads"]["background_idle"]["nice"], 19);
  EXPECT_TRUE(other_meta["background"]["processor"]["policy_refused"].is_null());
#endif
  fs::remove_all(study.dir);
}

// dispatch = "gaps": the runtime starts a compile only outside the frame's CPU phase, read from
// the records themselves: no start in background.csv falls between a frame's release
// (frames.csv cpu_start_us) and the end of its jobs (+ cpu_phase_us). The compile threads run
// at normal priority here so that they get CPU time on a loaded 2-core machine.
TEST(Background, GapsStartNoCompileWhileTheFramesCpuPhaseRuns) {
  StudyRun study;
  ASSERT_NO_FATAL_FAILURE(
      run_study(study, "gaps",
                study_toml("name = \"gaps\"\nforeground = \"game-frame\"\nframes = 24\n"
                           "warmup_frames = 2\nbudget_s = 0\n",
                           {{"gaps", "policy = \"normal\"\ndispatch = \"gaps\"\n"}})));
  const fs::path& out = study.out;
  const fs::path run = out / "gaps" / "gaps";
  const auto meta = read_json_file(run / "meta.json");
  EXPECT_EQ(meta["background"]["dispatch"], "gaps");
  const auto frames = read_csv((run / "frames.csv").string(), kFrameColumns);
  const auto bg = read_csv((run / "background.csv").string(), kBackgroundColumns);
  ASSERT_GT(frames.rows.size(), 0u);
  std::vector<std::pair<double, double>> phases;
  for (std::size_t f = 0; f < frames.rows.size(); ++f) {
    ASSERT_TRUE(frames.number(f, "cpu_start_us") && frames.number(f, "cpu_phase_us"));
    const double start = *frames.number(f, "cpu_start_us");
    phases.emplace_back(start, start + *frames.number(f, "cpu_phase_us"));
  }
  std::size_t starts_among_frames = 0;
  for (std::size_t t = 0; t < bg.rows.size(); ++t) {
    const auto start = bg.number(t, "start_us");
    if (!start || bg.at(t, "ran") != "1") continue;
    if (*start < phases.front().first || *start > phases.back().second) continue;
    ++starts_among_frames;
    for (const auto& [from, to] : phases)
      EXPECT_FALSE(*start > from + 1.0 && *start < to - 1.0)
          << "compile " << bg.at(t, "id") << " started at " << *start << " us, inside the CPU "
          << "phase " << from << "-" << to << " us";
  }
  EXPECT_GT(starts_among_frames, 0u) << "compiles started between the measured frames";
  fs::remove_all(study.dir);
}

// `host` says before any run what the policy study will find: each policy of this OS applied
// on a thread and read back, and the study's conditions this host runs, as `validate` says.
TEST(Background, HostSaysWhatEachPolicyGetsAndWhichConditionsRunHere) {
  const auto r = run_gpuoverlap("host --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto host = nlohmann::json::parse(r.output);
  std::map<std::string, std::string> read_back;
  for (const auto& p : host["policies"]) {
    EXPECT_EQ(p["result"], "set") << p.dump();
    read_back[p["policy"].get<std::string>()] = p["read_back"].get<std::string>();
  }
#if defined(_WIN32)
  EXPECT_EQ(read_back.size(), 4u);
#else
  // idle and normal keep the nice value the process had (a niced test runner's).
  errno = 0;
  const int nice_now = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  const std::string inherited = "nice " + std::to_string(nice_now);
  EXPECT_EQ(read_back,
            (std::map<std::string, std::string>{{"idle", "SCHED_IDLE, " + inherited},
                                                {"batch-nice19", "SCHED_BATCH, nice 19"},
                                                {"nice19", "SCHED_OTHER, nice 19"},
                                                {"normal", "SCHED_OTHER, " + inherited}}));
#endif
  EXPECT_TRUE(host["host"]["smt"].is_object());
  const auto& study = host["study"];
  EXPECT_EQ(study["name"], "background-policies");
  EXPECT_EQ(study["runs_here"].size() + study["not_run"].size(), 16u) << study.dump();
  const auto validated = run_gpuoverlap("validate background-policies");
  ASSERT_EQ(validated.exit_code, 0) << validated.output;
  for (const auto& n : study["not_run"])
    EXPECT_NE(validated.output.find("background-policies/" + n["condition"].get<std::string>() +
                                    ": not run on this host: " + n["why"].get<std::string>()),
              std::string::npos)
        << validated.output;
  const auto text = run_gpuoverlap("host");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("background policies, each tried on a thread of its own"),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("study background-policies: " +
                             std::to_string(study["runs_here"].size()) + " of 16 conditions run"),
            std::string::npos)
      << text.output;
  const auto not_a_study = run_gpuoverlap("host --study default");
  EXPECT_EQ(not_a_study.exit_code, 2) << not_a_study.output;
  EXPECT_NE(not_a_study.output.find("not a study"), std::string::npos) << not_a_study.output;
}

// A condition of the background-policies study and what its compile threads read back.
struct PolicyExpectation {
  std::string condition, policy;
  std::optional<int> nice;
};

// One round's meta.json of a condition of the background-policies study that ran: its compile
// threads under the policy it names, the allocator's thresholds, the commit waited for at the
// end, and where the condition reserves CPUs, the frame's threads off them.
void expect_policy_round(const nlohmann::json& meta, const PolicyExpectation& e,
                         const std::set<std::string>& not_run) {
  const auto& threads = meta["threads"]["background_idle"];
  const auto& processor = meta["background"]["processor"];
  EXPECT_TRUE(processor["policy_refused"].is_null()) << processor.dump();
#if !defined(_WIN32)
  EXPECT_EQ(threads["policy"], e.policy) << threads.dump();
  EXPECT_EQ(threads["nice"], *e.nice) << threads.dump();
#endif
  EXPECT_EQ(threads.value("threads_unlike_the_first", 0), 0) << threads.dump();
  // glibc's thresholds are the whole process's: the keep condition holds them raised, every
  // other condition of the study runs with the defaults fixed, whatever ran before it. (A
  // sanitizer's malloc ignores them: the keep condition is then not run, nothing fixed.)
  if (!not_run.contains("idle-keep-memory")) {
    EXPECT_EQ(meta["allocator"], e.condition == "idle-keep-memory"
                                     ? "kept (mmap 32 MiB, trim 1 GiB)"
                                     : "glibc defaults, fixed (mmap 128 KiB, trim 128 KiB)");
  }
  if (e.condition == "cgroup-idle") {
    EXPECT_EQ(threads["cgroup"], processor["cgroup"]) << "every compile thread joined it";
  }
  // The commit asked for before measured frame 24 (after the 9 frames here, so at their
  // end): the frame loop blocked on it until its event or its 1 s deadline, and said which.
  const auto& wait = meta["background"]["commit_wait"];
  ASSERT_TRUE(wait.is_object()) << meta["background"].dump();
  EXPECT_TRUE(wait["requested_before_frame"].is_null()) << wait.dump();
  EXPECT_EQ(wait["at_end"], true) << wait.dump();
  EXPECT_EQ(wait["timeout_ms"], 1000) << wait.dump();
  // (No bound between blocked_ms and to_event_ms: the wake-up after the signal counts in
  // the first, and on a loaded machine it has none.)
  if (wait["signalled"] == true) {
    EXPECT_TRUE(wait["to_event_ms"].is_number()) << wait.dump();
  } else {
    EXPECT_TRUE(wait["to_event_ms"].is_null()) << wait.dump();
    EXPECT_GE(wait["blocked_ms"].get<double>(), 990.0) << "its deadline, waited out";
  }
  if (e.condition == "normal-reserved-2" || e.condition == "idle-siblings") {
    // The compile threads on the CPUs given to them, the frame's threads off them.
    EXPECT_EQ(threads["cpus"], processor["cpus"]);
    EXPECT_EQ(meta["cpu"]["keep_off_cpus"], processor["foreground_off_cpus"]);
    const auto off = parse_cpus(processor["foreground_off_cpus"].get<std::string>());
    ASSERT_TRUE(off.has_value());
    for (const char* kind : {"frame_loop", "job_workers"}) {
      // Every worker's CPUs where they differ (cpus_of_all), else the first's.
      const auto& seen = meta["threads"][kind];
      const auto cpus = parse_cpus(seen.value("cpus_of_all", seen["cpus"].get<std::string>()));
      ASSERT_TRUE(cpus.has_value()) << kind;
      for (int cpu : *off) EXPECT_EQ(std::count(cpus->begin(), cpus->end(), cpu), 0) << kind;
    }
  }
}

// The background-policies preset on lavapipe, end to end: each condition this host can run
// reads back what its compile threads got from the OS; those it cannot run are named as not
// run (never run under another setting); report, compare, plot.py and the viewer read it.
TEST(Background, ThePolicyStudyRunsEveryPolicyThisHostHasAndEveryToolReadsIt) {
  const fs::path out = fresh_path(temp_path("background-policies"));
  // The preset as shipped, but each commit waited for at most 1 s: after the frames only the
  // compile threads of this process run, yet on a CI machine other tests may hold both cores,
  // and an idle thread then gets none. A wait that runs out is a result, recorded as such.
  std::string preset;
  {
    std::ifstream in(fs::path(GPUOVERLAP_SOURCE_DIR) / "scenarios" / "presets" /
                     "background-policies.toml");
    preset.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::size_t replaced = 0;
  for (std::size_t at = preset.find("commit_timeout_ms = 10000"); at != std::string::npos;
       at = preset.find("commit_timeout_ms = 10000", at), ++replaced)
    preset.replace(at, 25, "commit_timeout_ms = 1000");
  ASSERT_GE(replaced, 7u);
  fs::create_directories(out);
  const fs::path study_file = out / "background-policies.toml";
  std::ofstream(study_file) << preset;
  // A minute per frame's deadline: under a sanitizer beside another test a frame with
  // idle-priority compiles has taken over the default 10 s; the test reads the files, not speed.
  const auto r =
      run_gpuoverlap("run " + study_file.string() + " --frames 9 --timeout-ms 60000 --out " +
                     (out / "results").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path study = out / "results" / "background-policies";
  const auto verdict = read_json_file(study / "verdict.json");
  std::set<std::string> not_run;
  for (const auto& n : verdict["not_run"]) {
    not_run.insert(n["condition"].get<std::string>());
    EXPECT_NE(r.output.find("background-policies/" + n["condition"].get<std::string>() +
                            ": not run on this host: " + n["why"].get<std::string>()),
              std::string::npos)
        << r.output;
  }
#if defined(_WIN32)
  for (const char* other_os : {"batch-nice19", "nice19"}) EXPECT_TRUE(not_run.contains(other_os));
#else
  for (const char* other_os : {"background", "eco"}) EXPECT_TRUE(not_run.contains(other_os));
#endif
    // The policies that set no nice value keep the process's (a niced test runner's).
#if defined(_WIN32)
  const int inherited = 0;
#else
  errno = 0;
  const int inherited = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
#endif
  for (const PolicyExpectation& e :
       {PolicyExpectation{"idle", "SCHED_IDLE", inherited},
        PolicyExpectation{"batch-nice19", "SCHED_BATCH", 19},
        PolicyExpectation{"nice19", "SCHED_OTHER", 19},
        PolicyExpectation{"normal", "SCHED_OTHER", inherited},
        PolicyExpectation{"idle-keep-memory", "SCHED_IDLE", inherited},
        PolicyExpectation{"idle-gaps", "SCHED_IDLE", inherited},
        PolicyExpectation{"cgroup-idle", "SCHED_OTHER", inherited},
        PolicyExpectation{"normal-reserved-2", "SCHED_OTHER", inherited},
        PolicyExpectation{"idle-siblings", "SCHED_IDLE", inherited}}) {
    SCOPED_TRACE(e.condition);
    if (not_run.contains(e.condition)) {
      EXPECT_FALSE(fs::exists(study / e.condition));
      continue;
    }
    for (int round = 1; round <= 3; ++round)
      ASSERT_NO_FATAL_FAILURE(expect_policy_round(
          read_json_file(study / e.condition / ("round-" + std::to_string(round)) / "meta.json"), e,
          not_run));
  }
  // Every condition that ran is judged, with its progress.
  std::set<std::string> judged;
  for (const auto& c : verdict["conditions"]) {
    judged.insert(c["condition"].get<std::string>());
    EXPECT_TRUE(c["progress"]["compiles_per_s"].is_number()) << c.dump();
    // Every managed policy waited on a commit in each of its rounds; the control did not.
    const auto& progress = c["progress"];
    const std::size_t waits = progress["commit_to_event_ms"].size() +
                              progress["commits_not_signalled"].get<std::size_t>();
    EXPECT_EQ(progress["commits_asked_at_end"].get<std::size_t>(), waits) << c.dump();
    const bool managed = !c.value("control", false) && !c.value("null_control", false) &&
                         !c.value("negative_control", false);
    std::size_t rounds = 0;
    for (const auto& entry : fs::directory_iterator(study / c["condition"].get<std::string>()))
      rounds += entry.path().filename().string().starts_with("round-") ? 1 : 0;
    EXPECT_EQ(waits, managed ? rounds : 0u) << c.dump();
    if (managed) {
      EXPECT_NE(verdict["summary"].get<std::string>().find("a commit waited for: "),
                std::string::npos);
    }
  }
  // What every host of this OS runs (glibc's allocator on Linux); the rest depends on the host's
  // CPUs, cgroup delegation and SMT, and is named as not run where it lacks them.
#if defined(_WIN32)
  for (const char* always :
       {"idle", "background", "eco", "normal", "idle-gaps", "unmanaged-4", "unmanaged"})
#else
  for (const char* always :
       {"idle", "batch-nice19", "nice19", "normal", "idle-gaps", "unmanaged-4", "unmanaged"})
#endif
    EXPECT_TRUE(judged.contains(always)) << always;
  // Memory is kept where glibc's malloc is this build's (the binary under test is built alike).
  EXPECT_EQ(judged.contains("idle-keep-memory"), kept_memory_unsupported_reason().empty());
  for (const auto& n : verdict["not_run"]) {
    const std::string name = n["condition"], why = n["why"];
    if (name == "normal-reserved-2")
      EXPECT_NE(why.find("fewer than two"), std::string::npos) << why;
    else if (name == "idle-siblings")
      EXPECT_NE(why.find("shows a second hardware thread"), std::string::npos) << why;
    else if (name == "cgroup-idle")
      EXPECT_NE(why.find("cgroup_idle: "), std::string::npos) << why;
    else if (name == "idle-keep-memory")
      EXPECT_NE(why.find(kept_memory_unsupported_reason()), std::string::npos) << why;
    else
      EXPECT_NE(why.find("is not a policy of this OS"), std::string::npos) << name << ": " << why;
  }
  const fs::path results = out / "results";
  expect_tools_read_every_scenario(results);
  const std::string page = read_text_file(results / "report.md");
  EXPECT_NE(page.find("`background-policies` on this machine and kernel"), std::string::npos)
      << page;
  EXPECT_TRUE(fs::exists(results / "plots" / "background-policies" / "policies.png"));
  EXPECT_NE(page.find("](plots/background-policies/policies.png)"), std::string::npos);
  const auto same = run_gpuoverlap("compare " + results.string() + " " + results.string());
  EXPECT_EQ(same.exit_code, 0) << same.output;
  fs::remove_all(out);
}

}  // namespace
}  // namespace gpuoverlap
