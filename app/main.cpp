// gpuoverlap: the command line. Defines the commands and their options (CLI11), then hands
// the parsed arguments to one command (app/commands.h). Exit status: app/exit_status.h, the same
// for every command.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "core/enum_names.h"
#include "core/redact.h"
#include "engine/concurrent_suite.h"
#include "engine/executor.h"
#include "git_revision.h"
#include "queues/poller_placement.h"
#include "scenarios/cpu_device_sizes.h"
#include "scenarios/preemption_spec.h"
#include "selftest/selftest.h"

namespace {

// The help texts that name the GPU API this build runs on.
#if defined(_WIN32)
#define GPUOVERLAP_API_NAME "D3D12"
constexpr const char* kValidationHelp =
    "Enable the D3D12 debug layer (D3D12GetDebugInterface; its messages go to the debugger "
    "output)";
constexpr const char* kSyncValidationHelp =
    "Vulkan's synchronization validation: not in the D3D12 build (refused)";
constexpr const char* kShaderClockHelp =
    "Do not read a shader clock with the stamps (D3D12 shader model 5.x has none: clk_* columns "
    "stay empty either way)";
#else
#define GPUOVERLAP_API_NAME "Vulkan"
constexpr const char* kValidationHelp =
    "Enable VK_LAYER_KHRONOS_validation; any validation error fails the run";
constexpr const char* kSyncValidationHelp =
    "Also enable its synchronization validation (implies --validation): every missing or too "
    "weak barrier is reported as a SYNC-HAZARD error and fails the run";
constexpr const char* kShaderClockHelp =
    "Do not read VK_KHR_shader_clock with the stamps (clk_* columns stay empty)";
#endif

constexpr const char* kExitStatusHelp =
    "Exit status: 0 ok; 1 it ran and found a problem (a regression, a failed frame or check); 2 "
    "bad input (command line, scenario file, results or output folder), nothing ran; 3 the "
    "environment failed (no " GPUOVERLAP_API_NAME
    " driver or device, results not writable); 130 interrupted (SIGINT, SIGTERM or SIGHUP; what "
    "was measured is written).";

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuoverlap;
  using namespace gpuoverlap::commands;
  // Recorded in every results folder and the history: a password in a database URI is not.
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + without_password(argv[i]);

  CLI::App app{
      "gpuoverlap: measures GPU queue overlap, barrier cost and preemption from inside the work.\n"
      "Each workload stamps its first-thread start and last-thread finish into memory that a CPU\n"
      "thread polls; timestamp queries are recorded beside them. Results: CSV + meta.json."};
  app.set_version_flag("--version", std::string("gpuoverlap ") + GPUOVERLAP_GIT_REVISION);
  app.require_subcommand(1);
  app.footer(kExitStatusHelp);

  bool devices_json = false;
  auto* devices =
      app.add_subcommand("devices", "List Vulkan devices, queue families, priorities and clocks");
  devices->add_flag("--json", devices_json, "Print JSON instead of text");

  bool host_json = false;
  std::string host_study = "background-policies";
  auto* host = app.add_subcommand(
      "host",
      "What this machine gives background work, without a GPU: CPUs and SMT (and whether a "
      "virtual machine may hide it), each scheduling policy of this OS applied on a thread and "
      "read back or refused, and which conditions of a study of policies run here");
  host->add_option("--study", host_study,
                   "The study whose conditions to check (a preset or a file; default: "
                   "background-policies)");
  host->add_flag("--json", host_json, "Print JSON instead of text");

  app.add_subcommand("list", "List the built-in presets with their descriptions");

  std::vector<std::string> validate_items;
  auto* validate =
      app.add_subcommand("validate", "Check scenario files or presets without touching a GPU");
  validate->add_option("scenario", validate_items, "Preset names or scenario files")->required();
  bool validate_explain = false;
  validate->add_flag("--explain", validate_explain,
                     "Also print each dependency's barriers (D3D12 and the Vulkan they become) "
                     "and the submissions and fences of a frame");

  RunArguments run_args;
  auto* run = app.add_subcommand("run", "Run presets or scenario files and write results");
  run->add_option("scenario", run_args.scenarios,
                  "Preset names (see 'gpuoverlap list') or paths to scenario .toml files");
  run->add_flag("--all", run_args.all_presets,
                "Run the preset suite: every built-in preset, each configuration once (the "
                "twelve preemption-<load>-<priority> presets run as part of preemption-matrix)");
  const CpuDeviceSizes cpu_sizes;
  run->add_flag(
      "--full-size", run_args.full_size,
      fmt::format("On a CPU device (lavapipe) keep the files' sizes; by default it runs "
                  "at most {} frames per scenario, {} per study condition, {} ms of "
                  "preemption on a {} ms load, and paces a game frame at {:g}x its "
                  "unpaced frame interval, measured once per study",
                  cpu_sizes.frames, cpu_sizes.study_frames, cpu_sizes.preemption_duration_ms,
                  cpu_sizes.preemption_target_ms, kCpuDevicePeriodHeadroom));
  run->add_option("--verdict-margin-pct", run_args.verdict_margin_pct,
                  "Studies: a condition is intrusive on a metric when its median is worse than "
                  "the baseline's by more than this, with confidence (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  run->add_option("--verdict-tail-margin-pct", run_args.verdict_tail_margin_pct,
                  "Studies: ... or when more of its frames than this (in percentage points) lie "
                  "beyond the baseline's p99 than the baseline's own do (default 1)")
      ->check(CLI::Range(0.0, 100.0));
  run->add_option("--late-tolerance-ms", run_args.late_tolerance_ms,
                  "Studies of a paced frame: a frame is late when its interval exceeds the "
                  "period by more than this (default: the larger of 5 % of the period and the "
                  "baseline's p95 interval less the period, at most half a period)")
      ->check(CLI::Range(0.0, 10000.0));
  run->add_option("--study-budget-s", run_args.study_budget_s,
                  "Studies: while the verdict is undecided, add interleaved rounds until this "
                  "much wall time is spent (overrides the file's budget_s, default 600; 0 adds "
                  "none; on a CPU device 0 unless given)")
      ->check(CLI::Range(0.0, 7 * 24 * 3600.0));
  run->add_option("--study-max-rounds", run_args.study_max_rounds,
                  "Studies: at most this many rounds in all (overrides max_rounds, default 100)")
      ->check(CLI::Range(1u, 1000u));
  run->add_option("--study-round-ms", run_args.study_round_ms,
                  "Studies: each condition's round measures its frames or for this long, "
                  "whichever ends first, so a condition that slows the frames does not lengthen "
                  "the round (overrides round_ms; 0: no limit; on a CPU device 0 unless given)")
      ->check(CLI::Range(0u, kMaxStudyRoundMs));
  run->add_option("--foreground", run_args.foreground,
                  "For a study (e.g. non-intrusiveness): the preset or scenario file measured "
                  "under its conditions, instead of the study's own foreground");
  run->add_option(
         "--frames", run_args.frames,
         "Measured frames per scenario (overrides the file); for a study, per condition over all "
         "its rounds")
      ->check(CLI::Range(1u, 1'000'000u));
  run->add_option("--warmup", run_args.warmup, "Warm-up frames, dropped (overrides the file)")
      ->check(CLI::Range(0u, 1'000'000u));
  run->add_option("--device", run_args.devices,
                  "Device index or case-insensitive name substring (default: first discrete GPU, "
                  "else integrated, else lavapipe); all: every GPU, one after the other; a list "
                  "such as 0,2: those devices. With all or a list each device's results go to "
                  "OUT/gpu<index>/ and OUT/run.json lists them (docs/multi-gpu.md)")
      ->take_all()
      ->expected(1);
  CLI::Option* concurrent = run->add_flag(
      "--concurrent", run_args.concurrent,
      "With several devices: run every scenario on all of them at once, a thread and a poller "
      "(on a CPU of its own) per device, each scenario started together once every device has "
      "finished the one before (docs/multi-gpu.md)");
  run->add_option("--concurrency-rounds", run_args.concurrency_rounds,
                  "With --concurrent: answer whether one device's work disturbs another's. Each "
                  "frame scenario runs in this many rounds (3 or more), each round on all devices "
                  "together and on each device alone while the others wait; each device's "
                  "together-against-alone verdict goes to gpu<index>/<scenario>/verdict.csv, "
                  "and report OUT puts them side by side")
      ->check(CLI::Range(kMinConcurrencyRounds, kMaxConcurrencyRounds))
      ->needs(concurrent);
  CLI::Option* split_cpus =
      run->add_flag("--split-cpus", run_args.split_cpus,
                    "With --concurrent: give each device's threads (frame loop, a game frame's "
                    "workers, background compiles, the driver's) a share of the CPUs left beside "
                    "the pollers, so that CPU-bound scenarios do not compete across devices; a "
                    "game frame's \"cores\" are then its share. The default with --concurrent "
                    "where every share gets two CPUs or more (Linux); this flag refuses to run "
                    "otherwise")
          ->needs(concurrent);
  run->add_flag("--shared-cpus", run_args.shared_cpus,
                "With --concurrent: let every device's threads run on every CPU but the "
                "pollers', as in a run on one device, so that the devices compete for the "
                "cores (what a host running several GPU jobs at once sees)")
      ->needs(concurrent)
      ->excludes(split_cpus);
  run->add_option("--out", run_args.out,
                  "Output directory (default: results/<date-time>/); created and checked "
                  "(writable, free space) before any GPU work; an existing one must be empty");
  run->add_option("--history", run_args.history,
                  "Keep the run in the results history once it completed: a SQLite file or "
                  "postgresql://... (no value: $GPUOVERLAP_DB; docs/history.md)")
      ->expected(0, 1);
  run->add_flag("--replace", run_args.replace,
                "Delete the results already in --out first (only a folder gpuoverlap wrote)");
  run->add_option("--timeout-ms", run_args.timeout_ms,
                  "Deadline per frame from gate release; a frame past it is reported as a timeout")
      ->check(CLI::Range(1u, kMaxFrameTimeoutMs));
  run->add_flag(
      "--priority-fallback", run_args.priority_fallback,
      "When the driver refuses a queue priority, run at the one granted (recorded in meta.json) "
      "instead of stopping");
  run->add_flag(
      "--no-timestamps", run_args.no_timestamps,
      "Record no timestamp queries (poll clock only): an end-of-workload timestamp waits for all "
      "earlier work on its queue and can serialise dispatches that would overlap");
  run->add_flag("--validation", run_args.validation, kValidationHelp);
  run->add_flag("--sync-validation", run_args.sync_validation, kSyncValidationHelp);
  run->add_flag("--no-shader-clock", run_args.no_shader_clock, kShaderClockHelp);
  CLI::Option* share_device = run->add_flag(
      "--share-device", run_args.share_device,
      "Run all conditions and rounds of a study on one device instead of opening one per "
      "scenario, with a washout before each (--washout-ms; docs/background.md)");
  run->add_flag("--device-per-scenario", run_args.device_per_scenario,
                "Create a Vulkan device for every scenario and destroy it after; by default a "
                "frame scenario outside a study runs on an idle device an earlier scenario created "
                "with the same queues, priorities and features (a study's scenarios and preemption "
                "scenarios always create their own; meta.json device_opening.api_device says "
                "which)");
  run->add_option("--washout-ms", run_args.washout_ms,
                  "With --share-device, run the foreground alone (no background work, "
                  "unmeasured) for this long before each condition, so that the last one's load "
                  "does not carry over (default 500, 0 on a CPU device; 0: none)")
      ->check(CLI::Range(0u, kMaxWashoutMs))
      ->needs(share_device);
  run->add_option("--inject-frame-delay-us", run_args.inject_frame_delay_us,
                  "Fault injection, to see compare's frame gate catch it: a game frame's loop "
                  "starts each frame this many µs later than its pace (meta.json cpu "
                  "records it; scenarios without [cpu] ignore it)")
      ->check(CLI::Range(0u, 10'000'000u));
  run->add_option("--stamp-memory", run_args.stamp_memory,
                  "Stamp memory: uncached (default; host-visible, coherent, write-combined) or "
                  "cached (host-cached, coherent: the CPU spins in its cache)")
      ->check(CLI::IsMember({"uncached", "cached"}));
  run->add_option("--flag-tolerance-us", run_args.flag_tolerance_us,
                  "A row's clocks that differ by more than max(this, --flag-tolerance-pct of its "
                  "duration) get a flag in the records (default 10)")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--poller-core", run_args.poller_core,
                  "CPU|auto|none. Pin the stamp poller to this CPU (one of the process's "
                  "affinity mask) and keep the process's other threads off it, so a game "
                  "frame's workers leave it free. auto (default): the mask's quietest CPU (fewest "
                  "interrupts) where "
                  "there are at least 4, else unpinned; none: unpinned. With --concurrent, one "
                  "CPU per device (a list such as 2,3); auto takes the quietest where 3 are left "
                  "beside them");
  run->add_option("--poller-priority", run_args.poller_priority,
                  "The stamp poller's priority: normal (default), high (nice -10 / "
                  "THREAD_PRIORITY_HIGHEST) or realtime (SCHED_FIFO / TIME_CRITICAL: give it a "
                  "core of its own). Where the OS refuses, one line says so and the run goes on "
                  "at what was granted (meta.json \"poller\")")
      ->check(CLI::IsMember(all_names(kPollerPriorityNames)));
  run->add_option("--poll-window-tolerance-us", run_args.poll_window_tolerance_us,
                  "A poll stamp whose detection window is wider is flagged disturbed (records "
                  "poll_disturbed, summary poll_disturbed). Default: 8 x the scenario's p10 "
                  "window (a quiet pass or two), at least 2 us")
      ->check(CLI::Range(0.0, 1e9));
  run->add_flag("--load-process", run_args.load_process,
                "Preemption scenarios: run the load in a second gpuoverlap process (its own "
                "device and queue, as another application), started and stopped by this one");
  run->add_option("--duration-ms", run_args.duration_ms,
                  "Preemption scenarios: how long the urgent job is submitted (overrides "
                  "duration_ms)")
      ->check(CLI::Range(preemption::kMinDurationMs, preemption::kMaxDurationMs));
  run->add_option("--target-ms", run_args.target_ms,
                  "Preemption scenarios: the load's duration alone, its size calibrated to it "
                  "(overrides target_ms)")
      ->check(CLI::Range(preemption::kMinTargetMs, preemption::kMaxTargetMs));
  run->add_option("--flag-tolerance-pct", run_args.flag_tolerance_pct,
                  "Relative part of the flag tolerance, percent of the duration (default 1)")
      ->check(CLI::Range(0.0, 1000.0));
  auto* live_flag = run->add_flag(
      "--live", run_args.live,
      "Watch the run in the viewer: each measured frame as it completes (docs/viewer.md); "
      "closing the window stops the run after the current frame. Needs a display");
  run->add_option("--screenshot", run_args.live_screenshot,
                  "With --live: once the run has ended, write the window to this PNG (and "
                  "FILE.layout.json) and exit")
      ->needs(live_flag);
  run->add_option("--script", run_args.live_script,
                  "Edit the running scenario from this file, as the viewer's controls do (with "
                  "--live or without a window): 'wait N', an edit ('iterations \"Compute B\" 2', "
                  "'undepend C B', ...), 'save FILE.toml', 'end' (docs/viewer.md, \"Scripts\")");
  run->add_option("--exit-after-frames", run_args.live_exit_after_frames,
                  "With --screenshot: window frames rendered after the run ended (default 3)")
      ->needs(live_flag)
      ->check(CLI::Range(1u, 100000u));

  std::string selftest_device;
  SelftestOptions selftest_options;
  std::string selftest_out;
  auto* selftest = app.add_subcommand(
      "selftest",
      "Measure the measurement: poll detection latency, host-GPU round trip, agreement of the "
      "poll, timestamp and shader clocks, stamping overhead, linearity and ordering; each line "
      "passes or fails against a documented tolerance (docs/selftest.md). Writes selftest.csv");
  selftest->add_option("--device", selftest_device,
                       "Device index or case-insensitive name substring (default as for run)");
  selftest->add_option("--out", selftest_out,
                       "Output directory (default: results/<date-time>-selftest/); an existing "
                       "one must be empty");
  bool selftest_replace = false;
  selftest->add_flag("--replace", selftest_replace,
                     "Delete the results already in --out first (only a folder gpuoverlap wrote)");
  selftest->add_option("--frames", selftest_options.frames, "Measured frames per measurement")
      ->check(CLI::Range(3u, 100'000u));
  selftest
      ->add_option("--rounds", selftest_options.ping_pong_rounds,
                   "Round trips per probe (the flag ping-pong and the semaphore)")
      ->check(CLI::Range(1u, 1'000'000u));
  std::string selftest_poller_core = "auto";
  std::string selftest_poller_priority = "normal";
  selftest->add_option(
      "--poller-core", selftest_poller_core,
      "CPU|auto|none: the stamp poller's CPU, kept from the process's other threads "
      "(as for run; default auto)");
  selftest
      ->add_option("--poller-priority", selftest_poller_priority,
                   "The stamp poller's priority: normal (default), high or realtime (as for run)")
      ->check(CLI::IsMember(all_names(kPollerPriorityNames)));
  selftest
      ->add_option("--inject-end-delay-us", selftest_options.injected_end_delay_us,
                   "Fault injection, to see the self-test fail: move every end stamp the poller "
                   "saw this many µs later, unflagged (ordering and clock agreement then fail; "
                   "selftest.json records it)")
      ->check(CLI::Range(0.0, 1e9));
  selftest
      ->add_option("--timeout-ms", selftest_options.frame_timeout_ms,
                   "Deadline per frame and for the ping-pong")
      ->check(CLI::Range(1u, kMaxFrameTimeoutMs));

  std::vector<std::string> baseline_dirs, candidate_dirs;
  std::string baseline_dir, candidate_dir, compare_csv_path, compare_clock = "poll";
  CompareOptions compare_options;
  double compare_threshold_pct = 0;
  auto* compare = app.add_subcommand(
      "compare",
      "Compare a baseline and a candidate; exit 1 when a change beyond the threshold is real: a "
      "CI gate. With several runs per side (--baseline/--candidate) the runs are the unit and "
      "run-to-run variation cannot raise an alarm; with one run per side only frame-to-frame "
      "noise is accounted for");
  compare->add_option("baseline", baseline_dir, "Results directory of the baseline run");
  compare->add_option("candidate", candidate_dir, "Results directory of the candidate run");
  compare
      ->add_option("--baseline", baseline_dirs,
                   "Results directories of baseline runs (several: the runs method; 5 per side, "
                   "interleaved with the candidate's, recommended)")
      ->expected(1, -1);
  compare->add_option("--candidate", candidate_dirs, "Results directories of candidate runs")
      ->expected(1, -1);
  auto* threshold_option =
      compare
          ->add_option("--threshold-pct", compare_threshold_pct,
                       "Smallest relative change of a p50 or p95 that fails (default 10 with one "
                       "run per side, 5 with several)")
          ->check(CLI::Range(0.0, 1000.0));
  compare
      ->add_option("--min-change-us", compare_options.min_change_us,
                   "Smallest absolute change that fails, in µs (default 1)")
      ->check(CLI::Range(0.0, 1e9));
  compare
      ->add_option("--min-change-share-pct", compare_options.min_change_share_pct,
                   "Smallest change of a share of frames (late, stutters) that fails, in "
                   "percentage points (default 1)")
      ->check(CLI::Range(0.0, 100.0));
  compare
      ->add_option("--clock", compare_clock,
                   "Clock to compare: poll (default), ts or clk (shader clock)")
      ->check(CLI::IsMember(all_names(kClockNames)));
  compare->add_option("--csv", compare_csv_path,
                      "Also write the comparison as CSV to this file ('-': standard output)");
  bool compare_against_history = false;
  HistoryArguments compare_history;
  compare->add_flag("--against-history", compare_against_history,
                    "Judge one results folder (the positional) against the last --last runs of "
                    "its machine in the results history (--db; docs/history.md)");
  compare->add_option("--db", compare_history.db,
                      "With --against-history: the history (default: $GPUOVERLAP_DB)");
  compare
      ->add_option("--last", compare_history.last,
                   "With --against-history: how many of the machine's runs (default 10)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{100000}));

  std::string report_dir, report_out;
  auto* report = app.add_subcommand("report",
                                    "Write RESULTS_DIR/report.md (the five answers, then one "
                                    "table per study, preemption matrix, barrier family and "
                                    "the other scenarios) and report-details.md (every "
                                    "scenario: queues, timing tables, gaps, plots, traces)");
  report->add_option("results", report_dir, "Results directory written by gpuoverlap run")
      ->required();
  report->add_option(
      "--out", report_out,
      "Write the report here instead, the details beside it as <name>-details.md ('-': "
      "both to standard output)");

  std::string view_dir, view_scenario, view_clock, view_screenshot;
  std::uint32_t view_frame = 0, view_exit_after = 0;
  int view_width = 1400, view_height = 860;
  auto* view = app.add_subcommand(
      "view",
      "Open the Dear ImGui viewer on a results folder: every frame of every scenario as a "
      "timeline per queue (bars, p5-p95 whiskers, dependency arrows), the frame-time history, "
      "the dependency gaps, the device and queue priorities; or, with --db, a results "
      "history: the runs per machine on a time axis and a series' trend with its change points "
      "(click a run to open its folder). Needs a display (xvfb-run works)");
  std::string view_candidate, view_db;
  view->add_option("results", view_dir, "Results directory written by gpuoverlap run");
  view->add_option("candidate", view_candidate,
                   "A second results directory: shown below the first (A/B), with compare's "
                   "table for the scenario shown");
  auto* view_scenario_option =
      view->add_option("--scenario", view_scenario, "The scenario shown first (its run.json name)");
  auto* view_frame_option = view->add_option(
      "--frame", view_frame, "The frame shown first (default: the medians over all frames)");
  auto* view_clock_option =
      view->add_option("--clock", view_clock,
                       "The clock shown first: poll, ts or clk (default: ts where recorded)")
          ->check(CLI::IsMember(all_names(kClockNames)));
  auto* view_db_option = view->add_option(
      "--db", view_db,
      "Show this results history instead of a folder: a SQLite file or postgresql://... "
      "(docs/history.md, \"In the viewer\")");
  view->add_option("--screenshot", view_screenshot,
                   "Render, write the window to this PNG (and FILE.layout.json: what was drawn "
                   "where) and exit");
  view->add_option("--exit-after-frames", view_exit_after,
                   "With --screenshot: frames rendered before it is taken (default 3)")
      ->check(CLI::Range(1u, 100000u));
  view->add_option("--size", view_width, "Window width in pixels (default 1400)")
      ->check(CLI::Range(400, 8192));
  view->add_option("--height", view_height, "Window height in pixels (default 860)")
      ->check(CLI::Range(300, 8192));

  HistoryArguments history_args;
  auto* history = app.add_subcommand(
      "history",
      "The results history: runs kept in a database (a SQLite file, or PostgreSQL for a team), "
      "one schema on both (docs/history.md). Its place: --db, else the GPUOVERLAP_DB "
      "environment variable");
  history->require_subcommand(1);
  const char* db_help =
      "The history: a SQLite file (made if missing) or postgresql://user@host/dbname (default: "
      "$GPUOVERLAP_DB)";
  auto* history_ingest = history->add_subcommand(
      "ingest",
      "Keep results folders written by gpuoverlap run: the machine, the run and its summaries "
      "per scenario, one transaction per run; a run kept already is left as it is");
  history_ingest->add_option("results", history_args.results, "Results folders")->required();
  history_ingest->add_option("--db", history_args.db, db_help);
  auto* history_list =
      history->add_subcommand("list", "The runs kept, oldest first (or the machines)");
  history_list->add_option("--db", history_args.db, db_help);
  history_list->add_flag("--machines", history_args.machines,
                         "List the machines (GPU, driver, API, OS, CPU) instead");
  auto* history_trend = history->add_subcommand(
      "trend",
      "A series run by run (a metric of a scenario's workload on one clock and machine), with "
      "its change points (E-divisive means, docs/history.md)");
  auto* history_compare = history->add_subcommand(
      "compare",
      "Judge a results folder against the last --last runs of its machine: exit 1 when a "
      "metric moved beyond --threshold-pct from their median and outside all of them");
  history_compare->add_option("results", history_args.results, "Results folder")
      ->required()
      ->expected(1);
  history_compare->add_option("--db", history_args.db, db_help);
  history_compare
      ->add_option("--last", history_args.last, "How many of the machine's runs (default 10)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{100000}));
  history_compare
      ->add_option("--threshold-pct", history_args.threshold_pct,
                   "Smallest change from the runs' median that fails (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  auto* history_regressions = history->add_subcommand(
      "regressions",
      "Change points in every series, newest first, with the run where each began and the step "
      "with its interval; exit 1 when a step up (worse: every metric kept is a time) begins in "
      "the newest --newest runs of its series");
  for (CLI::App* command : {history_trend, history_regressions}) {
    command->add_option("--db", history_args.db, db_help);
    command->add_option("--scenario", history_args.scenario,
                        "The scenario, as run.json names it (default: every one)");
    command->add_option("--series", history_args.series,
                        "The workload, or \"frame\" for the frame-level figures (default: every "
                        "one)");
    command->add_option("--clock", history_args.clock,
                        "poll, ts, clk, or cpu for the frame-level figures (default: every one)");
    command
        ->add_option("--machine", history_args.machine,
                     "The machine's id (history list --machines; default: every one)")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 62));
    command
        ->add_option("--window", history_args.window,
                     "Judge the newest N runs of each series (default 60; 12 to 1000: fewer "
                     "cannot reach the test's level, more costs N^2)")
        ->check(CLI::Range(std::size_t{12}, std::size_t{1000}));
    command
        ->add_option("--alpha", history_args.alpha,
                     "The permutation test's level per split (default 0.01; at least 0.005, the "
                     "smallest p 199 shuffles can give)")
        ->check(CLI::Range(0.005, 0.5));
  }
  history_trend->add_option("--csv", history_args.csv,
                            "Also write the series as CSV to this file ('-': standard output "
                            "alone), which `plots/plot.py history FILE` draws");
  history_trend->add_option("--metric", history_args.metric,
                            "duration_p50_us (default), duration_p99_us, frame_interval_p50_us, "
                            "frame_interval_p99_us");
  history_regressions->add_option(
      "--metric-suffix", history_args.metric_suffix,
      "Judge the metrics whose name ends so (default _p50_us: the medians)");
  history_regressions
      ->add_option("--newest", history_args.newest,
                   "A step up that begins in the newest N runs of its series fails (default 1)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));

  // Internal: the child of run --load-process. Not listed in --help.
  std::string load_spec;
  std::size_t load_device = 0;
  std::string load_settings;
  auto* load_process = app.add_subcommand("load-process", "")->group("");
  load_process->add_option("--spec", load_spec)->required();
  load_process->add_option("--device", load_device)->required();
  load_process->add_option("--settings", load_settings)->required();

  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    command->footer(kExitStatusHelp);
  for (CLI::App* command :
       {history_ingest, history_list, history_trend, history_compare, history_regressions})
    command->footer(kExitStatusHelp);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  // Every failure is meant to come back as a value; this only keeps one that escaped (a bug,
  // or std::bad_alloc) from ending in std::terminate and a core dump.
  try {
    if (devices->parsed()) return command_devices(devices_json);
    if (host->parsed()) return command_host(host_study, host_json);
    if (app.got_subcommand("list")) return command_list();
    if (validate->parsed()) return command_validate(validate_items, validate_explain);
    if (run->parsed())
      return run_args.live                   ? command_run_live(run_args, command_line)
             : !run_args.live_script.empty() ? command_run_scripted(run_args, command_line)
                                             : command_run(run_args, command_line);
    if (selftest->parsed()) {
      selftest_options.out_directory = selftest_out;
      return command_selftest(selftest_device, selftest_options, selftest_replace,
                              selftest_poller_core, selftest_poller_priority, command_line);
    }
    if (compare->parsed() && compare_against_history) {
      if (baseline_dir.empty() || !candidate_dir.empty() || !baseline_dirs.empty() ||
          !candidate_dirs.empty())
        return fail(make_error("compare --against-history: name one results folder, alone"));
      compare_history.results = {baseline_dir};
      if (threshold_option->count() > 0) compare_history.threshold_pct = compare_threshold_pct;
      return command_history_compare(compare_history);
    }
    if (compare->parsed()) {
      // CLI11 has checked the name against the same table.
      compare_options.clock = value_of(kClockNames, compare_clock).value_or(Clock::poll);
      if (threshold_option->count() > 0) compare_options.threshold_pct = compare_threshold_pct;
      // The positional pair is shorthand for one run per side; both forms add up.
      if (!baseline_dir.empty()) baseline_dirs.insert(baseline_dirs.begin(), baseline_dir);
      if (!candidate_dir.empty()) candidate_dirs.insert(candidate_dirs.begin(), candidate_dir);
      return command_compare(baseline_dirs, candidate_dirs, compare_options, compare_csv_path);
    }
    if (report->parsed()) return command_report(report_dir, report_out);
    if (view->parsed()) {
      ViewArguments view_args;
      view_args.results = view_dir;
      view_args.candidate = view_candidate;
      if (view_db_option->count() > 0) view_args.db = view_db;
      view_args.screenshot = view_screenshot;
      view_args.exit_after_frames = view_exit_after;
      view_args.width_px = view_width;
      view_args.height_px = view_height;
      if (view_scenario_option->count() > 0) view_args.scenario = view_scenario;
      if (view_frame_option->count() > 0) view_args.frame = view_frame;
      if (view_clock_option->count() > 0) view_args.clock = value_of(kClockNames, view_clock);
      return command_view(view_args);
    }
    if (history_ingest->parsed()) return command_history_ingest(history_args);
    if (history_list->parsed()) return command_history_list(history_args);
    if (history_trend->parsed()) return command_history_trend(history_args);
    if (history_compare->parsed()) return command_history_compare(history_args);
    if (history_regressions->parsed()) return command_history_regressions(history_args);
    if (load_process->parsed()) return command_load_process(load_spec, load_device, load_settings);
  } catch (const std::exception& e) {
    return fail(
        make_error(std::string("unexpected error: ") + e.what(), ErrorCategory::environment));
  }
  return kExitBadInput;
}
