// The commands of the command line, one file each (command_<name>.cpp): what main.cpp calls
// once CLI11 has parsed the arguments, and the arguments each takes. Each returns the process's
// exit status (app/exit_status.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "core/result.h"
#include "engine/executor.h"
#include "engine/gpu_api.h"
#include "engine/suite_runner.h"
#include "selftest/selftest.h"

namespace gpuoverlap::commands {

struct RunArguments {
  std::vector<std::string> scenarios;
  bool all_presets = false;
  std::optional<std::uint32_t> frames, warmup;
  // Each --device given: one device (an index or a name substring), "all", or a list "0,2";
  // empty: the default device (queues/device_selection.h).
  std::vector<std::string> devices;
  // With several devices: all at once, in step (engine/concurrent_suite.h), and with
  // concurrency_rounds > 0 each frame scenario as a study of neighbours.
  bool concurrent = false;
  std::uint32_t concurrency_rounds = 0;
  // With --concurrent, each device's threads on a share of the CPUs of its own: by default
  // where every share gets two CPUs or more (Linux), always (--split-cpus: refused where it
  // cannot), or never (--shared-cpus).
  bool split_cpus = false;
  bool shared_cpus = false;
  std::string out;
  std::uint32_t timeout_ms = kDefaultFrameTimeoutMs;
  bool priority_fallback = false;
  std::string api;  // --api: empty for the build's default
  // Run as on a CPU device whatever the API calls the device (run --api both, where one API
  // sees a software driver as the CPU and another as a GPU).
  bool sized_as_cpu_device = false;
  bool validation = false;
  bool sync_validation = false;
  bool no_timestamps = false;
  bool no_shader_clock = false;
  bool share_device = false;
  bool device_per_scenario = false;
  std::optional<std::uint32_t> washout_ms;
  std::string stamp_memory = "uncached";
  std::uint32_t inject_frame_delay_us = 0;
  bool sched_trace = false;
  std::string foreground;  // replaces a study's foreground
  double verdict_margin_pct = 5.0;
  std::optional<double> late_tolerance_ms;  // none: from the baseline's jitter
  double verdict_tail_margin_pct = 1.0;
  std::optional<double> study_budget_s;  // override every study's budget_s
  std::optional<std::uint32_t> study_max_rounds;
  std::optional<std::uint32_t> study_round_ms;  // override every study's round_ms
  double flag_tolerance_us = 10.0;
  double flag_tolerance_pct = 1.0;
  // The stamp poller's CPU (-1: the default, poller_placement.h) and priority; the detection
  // window beyond which a stamp is disturbed (nullopt: from the scenario's own windows).
  std::string poller_core = "auto";
  std::string poller_priority = "normal";
  std::optional<double> poll_window_tolerance_us;
  // Preemption scenarios: the load in a child process; overrides of the files' durations.
  bool load_process = false;
  std::optional<double> duration_ms, target_ms;
  bool full_size = false;  // no smaller defaults on a CPU device
  bool replace = false;    // an existing results folder at --out is emptied first
  // --history [DB]: keep the run in the results history once it completed (DB empty:
  // GPUOVERLAP_DB).
  std::optional<std::string> history;
  // --live: the viewer watches the run (command_run_live sets these; RunSettings::on_frame).
  bool live = false;
  std::string live_screenshot;
  std::uint32_t live_exit_after_frames = 0;
  std::function<void(const Scenario&, const FrameRecord&, std::span<const WorkloadFrameRecord>)>
      on_frame;
  std::function<bool()> stop_requested;  // besides an interrupt: the live window was closed
  std::string live_script;               // --script: the experiment controls as text
  // Live edits (live/live_edits.h): the scenarios as they will run, before any GPU work; the
  // next version after each one; whether the version running should end at this frame.
  std::function<Status(std::vector<Scenario>&)> on_scenarios;
  MoreScenarios next_version;
  std::function<bool()> end_requested;
  std::function<void(const nlohmann::json& device)> on_device;
  std::function<void(const Scenario&, const nlohmann::json& device_facts)> on_start;
};

// `view`: the options given on the command line; unset ones keep the viewer's defaults.
struct ViewArguments {
  std::string results;
  std::string candidate;
  std::optional<std::string> db;  // --db: a results history instead of a folder
  std::optional<std::string> scenario;
  std::optional<std::uint32_t> frame;
  std::optional<Clock> clock;
  std::string screenshot;
  std::uint32_t exit_after_frames = 0;
  int width_px = 1400, height_px = 860;
};

// `api`: --api (empty: the build's default), as for every command that opens a GPU API.
int command_devices(const std::string& api, bool as_json);
// `host`: the CPUs, SMT and scheduling policies this machine gives the background runtime, and
// which conditions of `study` (a study preset or file) it runs.
int command_host(const std::string& study, bool as_json);
int command_list();
int command_validate(const std::vector<std::string>& items, bool explain_plan);
int command_compare(const std::vector<std::string>& baseline_dirs,
                    const std::vector<std::string>& candidate_dirs, const CompareOptions& options,
                    const std::string& csv_path);
int command_report(const std::string& results_dir, const std::string& out_path);
int command_run(const RunArguments& args, const std::string& command_line);
// `run --api both` (or a list): each scenario through each API on one device, a folder per API
// (command_run_apis.cpp).
int command_run_apis(const RunArguments& args, const std::vector<GpuApiKind>& apis,
                     const std::string& command_line);
int command_run_scripted(RunArguments args, const std::string& command_line);
int command_run_live(RunArguments args, const std::string& command_line);
// `poller_core` and `poller_priority` as run's --poller-core and --poller-priority.
// `command_line` is recorded in selftest.json, as run records its own in run.json.
int command_selftest(const std::string& api, const std::string& device_name,
                     SelftestOptions options, bool replace, const std::string& poller_core,
                     const std::string& poller_priority, const std::string& command_line);
int command_view(const ViewArguments& args);

// `gpuoverlap history ingest|list|trend|regressions`: `db` is --db, else GPUOVERLAP_DB.
struct HistoryArguments {
  std::string db;
  std::vector<std::string> results;  // ingest: the results folders
  bool machines = false;             // list: the machines instead of the runs
  // trend: the series (empty: any); regressions: which metrics, how far back, how new.
  std::string scenario, series, metric = "duration_p50_us", clock;
  std::int64_t machine = 0;
  std::string metric_suffix = "_p50_us";
  std::size_t window = 60, newest = 1;
  double alpha = 0.01;
  std::string csv;  // trend: also as CSV to this file ('-': standard output), for plots/plot.py
  // compare: the run's metrics against the last `last` runs of its machine.
  std::size_t last = 10;
  double threshold_pct = 5.0;
};
int command_history_ingest(const HistoryArguments& args);
// `run --history`: checks the location before any GPU work, and keeps the results folder a
// run wrote (what to say, and the status to return).
Status check_history_location(const std::string& db);
int keep_run_in_history(const std::string& db, const std::filesystem::path& results, int status);
int command_history_list(const HistoryArguments& args);
int command_history_trend(const HistoryArguments& args);
int command_history_compare(const HistoryArguments& args);
int command_history_regressions(const HistoryArguments& args);
int command_load_process(const std::string& spec_json, std::size_t device_index,
                         const std::string& settings_json, const std::string& api);

}  // namespace gpuoverlap::commands
