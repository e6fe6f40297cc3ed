// gpuoverlap: the command line. Parses arguments, resolves scenarios, picks the device and
// hands over to the suite runner. Exit status: see ExitStatus (the same for every command).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iostream>
#include <span>
#include <sstream>
#include <thread>

#include "analysis/compare.h"
#include "analysis/report.h"
#include "analysis/variant_swap.h"
#include "analysis/verdict.h"
#include "backends/backends.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/input_file.h"
#include "core/interrupt.h"
#include "core/output_directory.h"
#include "engine/suite_runner.h"
#include "git_revision.h"
#include "jobs/cpu_spec.h"
#include "live/live_edits.h"
#include "live/live_script.h"
#include "preemption/load_process.h"
#include "preemption/preemption_analysis.h"
#include "scenarios/cpu_device_sizes.h"
#include "scenarios/frame_plan.h"
#include "scenarios/names.h"
#include "scenarios/presets.h"
#include "scenarios/suite_estimate.h"
#include "selftest/selftest.h"
#if GPUOVERLAP_HAS_VIEWER
#include "viewer/live_feed.h"
#include "viewer/window.h"
#endif

namespace {

using namespace gpuoverlap;

// The exit status of every command, documented in --help and docs/usage.md ("Exit status"), so
// that a script can tell a measured problem from a broken pipeline.
enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,       // it ran and found a problem: a regression, a failed frame or check
  kExitBadInput = 2,     // command line, scenario file, results or output folder unusable
  kExitEnvironment = 3,  // no GPU driver or device, or the results could not be written
  kExitInterrupted = 130,
};

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

// One line on stderr (control characters escaped: it may quote a file's content).
int fail(const std::string& reason, ExitStatus status) {
  std::cerr << "gpuoverlap: " << escape_control_characters(reason) << "\n";
  return status;
}

// results/<date-time>, or with -2, -3, ... when a run started in the same second took it.
std::string default_out_directory(const std::string& suffix = "") {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
#if defined(_WIN32)
  localtime_s(&tm, &now);
#else
  localtime_r(&now, &tm);
#endif
  char text[64];
  std::strftime(text, sizeof text, "results/%Y%m%d-%H%M%S", &tm);
  return unused_directory_name(text + suffix).string();
}

Result<std::unique_ptr<GpuApi>> open_api(bool validation, bool synchronization = false) {
  return open_gpu_api({.validation = validation, .synchronization_validation = synchronization});
}

int command_devices(bool as_json) {
  auto api = open_api(false);
  if (!api) return fail(api.error().message, kExitEnvironment);
  nlohmann::json all = nlohmann::json::array();
  std::vector<DeviceCandidate> candidates;
  for (const DeviceFacts& d : (*api)->devices()) candidates.push_back(d.candidate);
  auto chosen = choose_device(candidates, "");
  for (std::size_t i = 0; i < (*api)->devices().size(); ++i) {
    const DeviceFacts& d = (*api)->devices()[i];
    nlohmann::json j = d.description;
    j["index"] = i;
    j["default"] = chosen && chosen->index == i;
    nlohmann::json families = nlohmann::json::array();
    for (std::size_t f = 0; f < d.queue_families.size(); ++f)
      families.push_back({{"index", f},
                          {"flags", d.queue_families[f].flags},
                          {"queues", d.queue_families[f].queues},
                          {"timestamp_valid_bits", d.queue_families[f].timestamp_valid_bits}});
    j["queue_families"] = families;
    j["global_priority"] = d.global_priority;
    j["calibrated_timestamps"] = d.calibrated_timestamps;
    j["shader_clock"] = d.shader_clock;
    j["notes"] = d.notes;
    all.push_back(j);
  }
  if (as_json) {
    std::cout << all.dump(2) << "\n";
    return all.empty() ? kExitEnvironment : kExitOk;
  }
  for (const auto& j : all) {
    std::cout << fmt::format(
        "{}: {} ({}, {} {}, driver {} {}){}\n", j["index"].get<std::size_t>(),
        j["name"].get<std::string>(), j["type"].get<std::string>(), (*api)->name(),
        j["api_version"].get<std::string>(), j["driver_name"].get<std::string>(),
        j["driver_info"].get<std::string>(), j["default"].get<bool>() ? "  <- default" : "");
    for (const auto& f : j["queue_families"])
      std::cout << fmt::format("     family {}: {} {} (timestamp bits {})\n",
                               f["index"].get<std::size_t>(), f["flags"].get<std::string>(),
                               f["queues"].get<unsigned>()
                                   ? "x" + std::to_string(f["queues"].get<unsigned>())
                                   : "(any number of queues)",
                               f["timestamp_valid_bits"].get<unsigned>());
    std::cout << fmt::format(
        "     priorities: {}; clocks: poll ({}), timestamp queries{}{}\n",
        (*api)->devices()[j["index"].get<std::size_t>()].priorities, kCpuClockName,
        j["calibrated_timestamps"].get<bool>() ? " (calibrated)" : " (not calibrated)",
        j["shader_clock"].get<bool>() ? ", shader clock" : "");
    for (const auto& note : j["notes"])
      std::cout << "     unsupported: " << note.get<std::string>() << "\n";
  }
  if (all.empty()) return fail("no " + (*api)->name() + " device found", kExitEnvironment);
  return kExitOk;
}

int command_list() {
  for (const Preset& p : presets()) {
    auto s = resolve_scenarios(std::string(p.name));
    std::cout << fmt::format("{:<24} {}\n", p.name,
                             s ? description_of(p) : "(invalid: " + s.error().message + ")");
  }
  return 0;
}

// `validate --explain`: what a scenario will record, in D3D12 and in Vulkan terms, and how its
// queues are cut into submissions, without touching a GPU.
void explain(const Scenario& s, std::ostream& out) {
  const FramePlan& plan = frame_plan_of(s);
  out << "  dependencies (in recording order of their barriers):\n";
  for (std::size_t i = 0; i < plan.barriers.dependencies.size(); ++i) {
    const DependencyPlan& d = plan.barriers.dependencies[i];
    const DependencySpec& spec = s.workloads[d.consumer].depends_on[plan.dependency_refs[i].second];
    out << fmt::format("    {} -> {}: {}{}{}, recorded on queue '{}'\n",
                       s.workloads[d.producer].name, s.workloads[d.consumer].name,
                       barrier_label(spec.barrier), d.cross_queue ? ", across queues (fence)" : "",
                       d.reads_output ? ", consumer reads the output" : "",
                       s.queues[d.barrier_queue].name);
    for (const PlacedBarrier& b : d.barriers)
      out << fmt::format(
          "      D3D12 {}: {}\n",
          b.placement == Placement::after_producer ? "after producer" : "before consumer",
          describe(b.barrier));
    if (!d.note.empty()) out << "      " << d.note << "\n";
    for (const std::string& line : explain_recording(d)) out << "      " << line << "\n";
  }
  out << "  submissions per frame, in order:\n";
  for (const Segment& segment : plan.segments) {
    std::string names;
    for (std::size_t w : segment.workloads) {
      if (!names.empty()) names += ", ";
      names += s.workloads[w].name;
    }
    std::string waits;
    for (std::size_t p : segment.wait_for) waits += " waits for " + s.workloads[p].name + ";";
    out << fmt::format("    queue '{}': [{}]{}{}\n", s.queues[segment.queue].name, names, waits,
                       segment.signals_fence
                           ? " signals the fence of " + s.workloads[segment.workloads.back()].name
                           : "");
  }
}

std::string describe_background(const background::BackgroundSpec& b) {
  return "background: " + background::describe(b);
}

int command_validate(const std::vector<std::string>& items, bool explain_plan) {
  int status = 0;
  for (const auto& item : items) {
    auto expanded = resolve_scenarios(item);
    if (!expanded) {
      status = fail(expanded.error().message, kExitBadInput);
      continue;
    }
    for (const Scenario& s : *expanded) {
      for (const std::string& warning : s.warnings) std::cerr << warning << "\n";
      const std::string name = expanded->size() > 1 ? s.name : item;
      if (s.preemption) {
        std::cout << fmt::format("{}: ok (preemption: {})\n", name,
                                 preemption::describe(*s.preemption));
        continue;
      }
      std::cout << fmt::format("{}: ok ({} queues, {} workloads{}{})\n", name, s.queues.size(),
                               s.workloads.size(),
                               s.background ? ", " + describe_background(*s.background) : "",
                               s.cpu ? ", cpu: " + jobs::describe(*s.cpu) : "");
      if (explain_plan) explain(s, std::cout);
    }
  }
  return status;
}

int command_compare(const std::vector<std::string>& baseline_dirs,
                    const std::vector<std::string>& candidate_dirs, const CompareOptions& options,
                    const std::string& csv_path) {
  if (baseline_dirs.empty() || candidate_dirs.empty())
    return fail(
        "compare needs a baseline and a candidate: BASELINE CANDIDATE, or --baseline DIR... "
        "--candidate DIR...",
        kExitBadInput);
  if (!csv_path.empty() && csv_path != "-")
    if (Status usable = check_output_file(csv_path); !usable)
      return fail("--csv " + usable.error().message + " ('-' is standard output)", kExitBadInput);
  std::vector<LoadedRun> baseline, candidate;
  for (const auto& [dirs, side, into] : {std::tuple{&baseline_dirs, "baseline", &baseline},
                                         std::tuple{&candidate_dirs, "candidate", &candidate}})
    for (const std::string& dir : *dirs) {
      auto loaded = load_results(dir);
      if (!loaded) return fail(std::string(side) + ": " + loaded.error().message, kExitBadInput);
      into->push_back(std::move(*loaded));
    }
  const CompareResult result = compare_runs(baseline, candidate, options);
  std::cout << compare_table(result, options);
  if (csv_path == "-")
    std::cout << compare_csv(result);
  else if (!csv_path.empty())
    if (Status s = write_file_atomically(csv_path, compare_csv(result)); !s)
      return fail(s.error().message, kExitEnvironment);
  if (result.rows.empty() && result.unmatched.empty())
    return fail("nothing to compare (no ok frames in the baseline)", kExitBadInput);
  if (!result.unmatched.empty())
    return fail("the candidate lacks what the baseline measured (see above)", kExitFailed);
  if (result.changed) return fail("changes beyond the threshold (see CHANGED above)", kExitFailed);
  return kExitOk;
}

int command_report(const std::string& results_dir, const std::string& out_path) {
  const std::filesystem::path target = out_path.empty()
                                           ? std::filesystem::path(results_dir) / "report.md"
                                           : std::filesystem::path(out_path);
  // The details page sits beside the page: report.md -> report-details.md.
  const std::filesystem::path details_target =
      target.parent_path() / (target.stem().string() + "-details" +
                              (target.has_extension() ? target.extension().string() : ".md"));
  if (out_path != "-")
    for (const std::filesystem::path& path : {target, details_target})
      if (Status usable = check_output_file(path); !usable)
        return fail(usable.error().message + " ('--out -' is standard output)", kExitBadInput);
  auto run = load_results(results_dir);
  if (!run) return fail(run.error().message, kExitBadInput);
  if (out_path == "-") {
    const ReportPages pages = markdown_report(*run);
    std::cout << pages.page << "\n---\n\n" << pages.details;
    return kExitOk;
  }
  const ReportPages pages = markdown_report(*run, details_target.filename().string());
  // The details first: the page links to them.
  if (Status s = write_file_atomically(details_target, pages.details); !s)
    return fail(s.error().message, kExitEnvironment);
  if (Status s = write_file_atomically(target, pages.page); !s)
    return fail(s.error().message, kExitEnvironment);
  std::cout << target.string() << "\n" << details_target.string() << "\n";
  return kExitOk;
}

struct RunArguments {
  std::vector<std::string> scenarios;
  bool all_presets = false;
  std::optional<std::uint32_t> frames, warmup;
  std::string device;
  std::string out;
  std::uint32_t timeout_ms = kDefaultFrameTimeoutMs;
  bool priority_fallback = false;
  bool validation = false;
  bool sync_validation = false;
  bool no_timestamps = false;
  bool no_shader_clock = false;
  bool share_device = false;
  std::optional<std::uint32_t> washout_ms;
  std::string stamp_memory = "uncached";
  std::string foreground;  // replaces a study's foreground
  double verdict_margin_pct = 5.0;
  double verdict_tail_margin_pct = 1.0;
  std::optional<double> study_budget_s;  // override every study's budget_s
  std::optional<std::uint32_t> study_max_rounds;
  std::optional<std::uint32_t> study_round_ms;  // override every study's round_ms
  double flag_tolerance_us = 10.0;
  double flag_tolerance_pct = 1.0;
  // Preemption scenarios: the load in a child process; overrides of the files' durations.
  bool load_process = false;
  std::optional<double> duration_ms, target_ms;
  bool full_size = false;  // no smaller defaults on a CPU device
  bool replace = false;    // an existing results folder at --out is emptied first
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

// --load-process, --duration-ms and --target-ms on every preemption scenario, checked again.
Status apply_preemption_overrides(const RunArguments& args, std::vector<Scenario>& scenarios) {
  for (Scenario& s : scenarios) {
    if (!s.preemption) continue;
    preemption::PreemptionSpec& spec = *s.preemption;
    if (args.load_process) spec.process = preemption::ProcessMode::separate;
    if (args.duration_ms) spec.duration_ms = *args.duration_ms;
    if (args.target_ms) spec.target_ms = *args.target_ms;
    if (Status v = preemption::validate(spec); !v)
      return v.error().with_context("scenario '" + s.name + "': ");
  }
  const bool any = std::any_of(scenarios.begin(), scenarios.end(),
                               [](const Scenario& s) { return s.preemption.has_value(); });
  if (!any && (args.load_process || args.duration_ms || args.target_ms))
    return make_error(
        "--load-process, --duration-ms and --target-ms apply to preemption "
        "scenarios only (see 'gpuoverlap list')");
  return ok_status();
}

// The device for a command that runs work: chosen, announced on stderr.
Result<DeviceChoice> pick_device(const GpuApi& api, const std::string& wanted) {
  std::vector<DeviceCandidate> candidates;
  for (const DeviceFacts& d : api.devices()) candidates.push_back(d.candidate);
  auto chosen = choose_device(candidates, wanted);
  if (!chosen) return chosen.error();
  const DeviceFacts& device = api.devices()[chosen->index];
  std::cerr << fmt::format("device {}: {} ({}; driver {} {})\n", chosen->index,
                           device.candidate.name, chosen->reason, device.driver_name,
                           device.driver_info);
  return chosen;
}

// After a device was abandoned with work possibly still running on it, tearing down the
// instance or unloading the driver under it can crash. Every result file is already written
// (fsync + rename), so the process ends here.
int finish(const ScenarioExecutor& executor, int status) {
  if (executor.abandoned_device()) {
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(status);
  }
  return status;
}

// Why no device could be used, as an exit status: a --device that names none is bad input; no
// device at all is the environment.
int device_failure(const GpuApi& api, const Error& error) {
  return fail(error.message, api.devices().empty() ? kExitEnvironment : kExitBadInput);
}

// The output folder before any GPU work (core/output_directory.h). On a later failure before
// anything is measured, a folder this created and left empty is removed again.
struct PreparedOutput {
  std::filesystem::path path;
  bool existed = false;
  void discard_if_empty() const {
    std::error_code ec;
    if (!existed && std::filesystem::is_empty(path, ec)) std::filesystem::remove(path, ec);
  }
};

Result<PreparedOutput> prepare_output(const std::filesystem::path& path, bool replace,
                                      std::uint64_t needed_bytes) {
  std::error_code ec;
  PreparedOutput out{path, std::filesystem::exists(path, ec)};
  GPUOVERLAP_TRY(
      prepare_output_directory({.path = path, .replace = replace, .needed_bytes = needed_bytes}));
  return out;
}

int command_run(const RunArguments& args, const std::string& command_line) {
  if (args.scenarios.empty() && !args.all_presets)
    return fail("run: name at least one preset or scenario file, or pass --all", kExitBadInput);
  // Every scenario is validated before any GPU work.
  std::vector<Scenario> scenarios;
  auto add = [&](Scenario&& s) -> Status {
    for (const auto& other : scenarios)
      if (other.name == s.name)
        return make_error("two scenarios are named '" + s.name +
                          "'; each needs its own output directory");
    scenarios.push_back(std::move(s));
    return ok_status();
  };
  if (args.all_presets) {
    auto suite = suite_scenarios();
    if (!suite) return fail(suite.error().message, kExitBadInput);
    if (!suite->covered.empty())
      std::cerr << fmt::format("--all: {} presets run once, as part of a matrix: {}\n",
                               suite->covered.size(), fmt::join(suite->covered, ", "));
    for (Scenario& s : suite->scenarios)
      if (Status added = add(std::move(s)); !added)
        return fail(added.error().message, kExitBadInput);
  }
  for (const auto& name : args.scenarios) {
    auto expanded = resolve_scenarios(name, args.all_presets ? std::string() : args.foreground);
    if (!expanded) return fail(expanded.error().message, kExitBadInput);
    for (Scenario& s : *expanded)
      if (Status added = add(std::move(s)); !added)
        return fail(added.error().message, kExitBadInput);
  }
  for (const Scenario& s : scenarios)
    for (const std::string& warning : s.warnings) std::cerr << warning << "\n";
  // --frames counts a study condition's frames over all its planned rounds.
  if (args.frames)
    for (Scenario& s : scenarios) s.frames = frames_per_round(*args.frames, s.rounds);
  for (Scenario& s : scenarios) {
    if (args.study_round_ms && !s.study.empty()) s.study_round_ms = *args.study_round_ms;
    if (s.rounds <= 1) continue;  // a study of one round is never extended
    if (args.study_budget_s) s.study_budget_s = *args.study_budget_s;
    if (args.study_max_rounds) s.study_max_rounds = std::max(*args.study_max_rounds, s.rounds);
  }
  if (Status s = apply_preemption_overrides(args, scenarios); !s)
    return fail(s.error().message, kExitBadInput);
  auto output = prepare_output(args.out.empty() ? default_out_directory() : args.out, args.replace,
                               estimated_results_bytes(scenarios));
  if (!output) return fail(output.error().message, kExitBadInput);
  auto api = open_api(args.validation, args.sync_validation);
  if (!api) {
    output->discard_if_empty();
    return fail(api.error().message, kExitEnvironment);
  }
  auto chosen = pick_device(**api, args.device);
  if (!chosen) {
    output->discard_if_empty();
    return device_failure(**api, chosen.error());
  }
  const bool cpu_device =
      (*api)->devices()[chosen->index].candidate.device_class == DeviceClass::cpu;
  SizeProfile sizes = files_sizes(args.full_size ? "--full-size" : "the device is not the CPU");
  if (cpu_device && !args.full_size) {
    sizes = apply_cpu_device_sizes(scenarios, {.frames = args.frames.has_value(),
                                               .warmup = args.warmup.has_value(),
                                               .duration_ms = args.duration_ms.has_value(),
                                               .target_ms = args.target_ms.has_value(),
                                               .study_budget = args.study_budget_s.has_value(),
                                               .study_round = args.study_round_ms.has_value()});
    if (!sizes.log_line.empty()) std::cerr << sizes.log_line << "\n";
  }

  SuiteOptions options;
  options.out_directory = output->path;
  options.warmup_frames = args.warmup;
  options.run.frame_timeout_ms = args.timeout_ms;
  options.run.priority_fallback = args.priority_fallback;
  options.run.timestamp_queries = !args.no_timestamps;
  options.run.shader_clock = !args.no_shader_clock;
  options.run.study_shares_device = args.share_device;
  // No GPU clock to settle on the CPU device, where a washout chunk takes over a second.
  options.run.washout_ms = args.washout_ms.value_or(cpu_device ? 0 : kDefaultWashoutMs);
  options.run.stamp_memory =
      args.stamp_memory == "cached" ? StampMemory::cached : StampMemory::uncached;
  options.agreement = {args.flag_tolerance_us, args.flag_tolerance_pct / 100.0};
  options.run.should_stop = interrupt_requested;
  if (args.stop_requested)
    options.run.should_stop = [stop = args.stop_requested] {
      return interrupt_requested() || stop();
    };
  options.run.on_frame = args.on_frame;
  options.run.on_start = args.on_start;
  options.run.end_requested = args.end_requested;
  if (args.on_scenarios)
    if (Status usable = args.on_scenarios(scenarios); !usable) {
      output->discard_if_empty();
      return fail(usable.error().message, kExitBadInput);
    }
  if (args.on_device)
    args.on_device({{"api", (*api)->name()},
                    {"name", (*api)->devices()[chosen->index].candidate.name},
                    {"driver_name", (*api)->devices()[chosen->index].driver_name},
                    {"driver_info", (*api)->devices()[chosen->index].driver_info}});
  install_interrupt_handler();
  options.show_progress = isatty(STDERR_FILENO) != 0;
  options.command_line = command_line;
  options.extra_meta["device_choice"] = chosen->reason;
  options.extra_meta["sizes"] = sizes.meta;
  const std::unique_ptr<ScenarioExecutor> executor = (*api)->executor(chosen->index);
  const VerdictSettings verdict_settings{.p50_margin = args.verdict_margin_pct / 100.0,
                                         .tail_margin = args.verdict_tail_margin_pct / 100.0};
  // An undecided study gets another round while its budget lasts (analysis/verdict.h).
  const SuiteOutcome outcome =
      run_suite(*executor, scenarios, options, std::cerr, [&](const SuiteOutcome& so_far) {
        std::vector<Scenario> more = next_study_rounds(so_far, verdict_settings, std::cerr);
        if (more.empty() && args.next_version) more = args.next_version(so_far);
        return more;
      });
  std::cout << summary_table(outcome);
  std::cout << preemption_summary_table(outcome);
  std::cout << variant_swap_lines(outcome);
  Status verdicts =
      write_study_verdicts(outcome, options.out_directory, verdict_settings, std::cout);
  if (const std::string session = live_session_csv(outcome, options.out_directory);
      !session.empty() && verdicts)
    verdicts = write_file_atomically(options.out_directory / "live-session.csv", session);
  std::cout << "results: " << options.out_directory.string() << "\n";
  int status = kExitOk;
  if (!verdicts) status = fail(verdicts.error().message, kExitEnvironment);
  if ((*api)->validation_errors() > 0) {
    status = fail(fmt::format("{} {} validation errors, {} of them synchronization hazards "
                              "(see above)",
                              (*api)->validation_errors(), (*api)->name(), (*api)->sync_hazards()),
                  kExitFailed);
  } else if (interrupt_requested()) {
    status = fail("interrupted; the frames measured so far are written", kExitInterrupted);
  } else if (outcome.failure) {
    status = fail(outcome.failure->message, kExitFailed);
  }
  return finish(*executor, status);
}

// A run whose scenario can be edited while it runs (`run --live`, `run --script`): its edits,
// its script if any, and the hooks that end a version at a frame boundary and start the next
// (docs/viewer.md, "Changing the experiment").
struct EditSession {
  live::LiveEdits edits;
  std::optional<live::ScriptRunner> script;

  // --script FILE, checked whole before anything runs.
  Status load_script(const std::string& path) {
    auto text = read_input_file(path, 1u << 20);
    if (!text) return text.error();
    auto steps = live::parse_script(*text, path);
    if (!steps) return steps.error();
    script.emplace(std::move(*steps), edits, std::cerr);
    return ok_status();
  }

  // Sets the run's hooks; the run's own on_frame (the live window's feed) still sees every
  // frame, first.
  void attach(RunArguments& args) {
    args.on_scenarios = [this](std::vector<Scenario>& scenarios) -> Status {
      if (scenarios.size() != 1 || !scenarios[0].study.empty() || scenarios[0].preemption) {
        const std::string why =
            "the experiment can be edited when the run is one frame scenario (not a study, a "
            "matrix, a preemption scenario or several scenarios)";
        if (script) return make_error("--script: " + why);
        edits.refuse_all(why);
        return ok_status();
      }
      scenarios[0].live = Scenario::LiveVersion{};
      edits.start(scenarios[0]);
      if (script) script->start();
      return ok_status();
    };
    args.end_requested = [this] { return edits.pending(); };
    args.next_version = [this](const SuiteOutcome& so_far) -> std::vector<Scenario> {
      std::uint64_t frames = 0;
      for (const ScenarioOutcome& s : so_far.scenarios)
        if (s.timeline) frames += s.timeline->frames.size();
      if (auto next = edits.take_next_or_close(frames)) return {std::move(*next)};
      return {};
    };
    args.on_frame = [this, window = args.on_frame](const Scenario& s, const FrameRecord& f,
                                                   std::span<const WorkloadFrameRecord> r) {
      if (window) window(s, f, r);
      if (script) script->frame_measured(s.name);
    };
  }

  // Once the run has ended (on the thread that ran it).
  void finish() {
    edits.close("the run has ended");
    if (script) script->run_ended();
  }
};

// run --script without --live: the same session, no window.
int command_run_scripted(RunArguments args, const std::string& command_line) {
  EditSession session;
  if (Status loaded = session.load_script(args.live_script); !loaded)
    return fail(loaded.error().message, kExitBadInput);
  session.attach(args);
  const int status = command_run(args, command_line);
  session.finish();
  return status;
}

// run --live: the run on a thread of its own, the viewer's window on this one (GLFW wants the
// main thread). The window takes each measured frame from a LiveFeed; closing it stops the run
// after the current frame. Its controls (and --script) edit the running scenario through an
// EditSession. The run's results are written as without --live.
int command_run_live(RunArguments args, const std::string& command_line) {
#if GPUOVERLAP_HAS_VIEWER
  std::string why;
  if (!viewer::display_available(why))
    return fail("run --live: no display (" + why +
                    "); the viewer needs one: set DISPLAY, or run under xvfb-run (run without "
                    "--live needs none)",
                kExitBadInput);
  EditSession session;
  if (!args.live_script.empty())
    if (Status loaded = session.load_script(args.live_script); !loaded)
      return fail(loaded.error().message, kExitBadInput);
  viewer::LiveFeed feed;
  std::atomic<bool> window_closed{false};
  args.on_frame = [&feed](const Scenario& s, const FrameRecord& f,
                          std::span<const WorkloadFrameRecord> r) { feed.add_frame(s, f, r); };
  session.attach(args);
  args.stop_requested = [&window_closed] { return window_closed.load(); };
  args.on_device = [&feed](const nlohmann::json& device) { feed.set_device(device); };
  args.on_start = [&feed](const Scenario& s, const nlohmann::json& facts) {
    feed.begin_scenario(s, facts);
  };
  int run_status = kExitEnvironment;
  std::thread runner;
  viewer::ViewOptions options;
  options.live = &feed;
  options.edits = &session.edits;
  // The run starts once the window is open; a window that cannot open runs nothing.
  options.on_window_open = [&] {
    runner = std::thread([&] {
      run_status = command_run(args, command_line);
      session.finish();
      feed.finish(run_status);
    });
  };
  if (!args.live_screenshot.empty()) options.screenshot = args.live_screenshot;
  options.exit_after_frames = args.live_exit_after_frames;
  std::ostringstream messages;
  const int view_status = viewer::run_viewer(options, std::cout, messages);
  window_closed = true;
  const bool ran = runner.joinable();
  if (ran) runner.join();
  std::istringstream lines(messages.str());
  for (std::string line; std::getline(lines, line);)
    std::cerr << escape_control_characters(line) << "\n";
  if (!ran) return view_status != kExitOk ? view_status : kExitEnvironment;
  return run_status != kExitOk ? run_status : view_status;
#else
  (void)args, (void)command_line;
  return fail("run --live: this build has no viewer (Dear ImGui is not packaged for mingw-w64)",
              kExitEnvironment);
#endif
}

int command_selftest(const std::string& device_name, SelftestOptions options, bool replace) {
  if (options.out_directory.empty())
    options.out_directory = std::filesystem::path(default_out_directory("-selftest"));
  auto output = prepare_output(options.out_directory, replace, 16ull << 20);
  if (!output) return fail(output.error().message, kExitBadInput);
  auto api = open_api(false);
  if (!api) {
    output->discard_if_empty();
    return fail(api.error().message, kExitEnvironment);
  }
  auto chosen = pick_device(**api, device_name);
  if (!chosen) {
    output->discard_if_empty();
    return device_failure(**api, chosen.error());
  }
  options.should_stop = interrupt_requested;
  install_interrupt_handler();
  const std::unique_ptr<ScenarioExecutor> executor = (*api)->executor(chosen->index);
  const SelftestOutcome outcome = run_selftest(*executor, options, std::cerr);
  const std::string table = selftest_table(outcome.rows);
  std::cout << "\n" << table;
  const nlohmann::json device = (*api)->devices()[chosen->index].description;
  nlohmann::json summary = {
      {"device", device},
      {"tool", {{"name", "gpuoverlap"}, {"git_revision", GPUOVERLAP_GIT_REVISION}}},
      {"frames", options.frames},
      {"passed", outcome.passed()},
      {"failure", outcome.failure ? nlohmann::json(outcome.failure->message) : nullptr}};
  Status written =
      write_file_atomically(options.out_directory / "selftest.csv", selftest_csv(outcome.rows));
  if (written) written = write_file_atomically(options.out_directory / "selftest.txt", table);
  if (written)
    written =
        write_file_atomically(options.out_directory / "selftest.json", summary.dump(2) + "\n");
  std::cout << "results: " << options.out_directory.string() << "\n";
  int status = kExitOk;
  if (!written) {
    status = fail(written.error().message, kExitEnvironment);
  } else if (interrupt_requested()) {
    status = fail("interrupted; the checks measured so far are written", kExitInterrupted);
  } else if (outcome.failure) {
    status = fail(outcome.failure->message, kExitFailed);
  } else if (!outcome.passed()) {
    status =
        fail("some checks failed (see the table; docs/selftest.md explains each)", kExitFailed);
  }
  return finish(*executor, status);
}

// `gpuoverlap load-process` (internal, started by run --load-process): the load of a
// preemption scenario on its own device, driven through stdin/stdout by the parent
// (preemption/load_process.h). Its own messages go to stderr.
int command_load_process(const std::string& spec_json, std::size_t device_index,
                         const std::string& settings_json) {
  preemption::ParentLink parent;
  auto report_failure = [](const std::string& reason) {
    preemption::ParentLink::send("failed", nlohmann::json(reason));
    return fail("load process: " + reason, kExitFailed);
  };
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(spec_json);
  } catch (const nlohmann::json::exception& e) {
    return report_failure(std::string("--spec is not JSON: ") + e.what());
  }
  nlohmann::json settings_parsed;
  try {
    settings_parsed = nlohmann::json::parse(settings_json);
  } catch (const nlohmann::json::exception& e) {
    return report_failure(std::string("--settings is not JSON: ") + e.what());
  }
  auto settings = run_settings_from_json(settings_parsed);
  if (!settings) return report_failure(settings.error().message);
  auto spec = preemption::spec_from_json(parsed);
  if (!spec) return report_failure(spec.error().message);
  const Scenario load_only =
      preemption::make_scenario(*spec, preemption::Role::load_only, "load-process");
  auto api = open_api(false);
  if (!api) return report_failure(api.error().message);
  if (device_index >= (*api)->devices().size())
    return report_failure("no device " + std::to_string(device_index));
  const std::unique_ptr<ScenarioExecutor> executor = (*api)->executor(device_index);
  auto timeline = executor->run_load_process(load_only, *settings, parent);
  if (!timeline) return finish(*executor, report_failure(timeline.error().message));
  preemption::ParentLink::send("result", preemption::load_process_result(*timeline));
  return finish(*executor, timeline->failure ? 1 : 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

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
  run->add_flag("--full-size", run_args.full_size,
                fmt::format("On a CPU device (lavapipe) keep the files' sizes; by default it runs "
                            "at most {} frames per scenario, {} per study condition, {} ms of "
                            "preemption on a {} ms load",
                            cpu_sizes.frames, cpu_sizes.study_frames,
                            cpu_sizes.preemption_duration_ms, cpu_sizes.preemption_target_ms));
  run->add_option("--verdict-margin-pct", run_args.verdict_margin_pct,
                  "Studies: a condition is intrusive on a metric when its median is worse than "
                  "the baseline's by more than this, with confidence (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  run->add_option("--verdict-tail-margin-pct", run_args.verdict_tail_margin_pct,
                  "Studies: ... or when more of its frames than this (in percentage points) lie "
                  "beyond the baseline's p99 than the baseline's own do (default 1)")
      ->check(CLI::Range(0.0, 100.0));
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
  run->add_option("--device", run_args.device,
                  "Device index or case-insensitive name substring (default: first discrete GPU, "
                  "else integrated, else lavapipe)");
  run->add_option("--out", run_args.out,
                  "Output directory (default: results/<date-time>/); created and checked "
                  "(writable, free space) before any GPU work; an existing one must be empty");
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
  run->add_option("--washout-ms", run_args.washout_ms,
                  "With --share-device, run the foreground alone (no background work, "
                  "unmeasured) for this long before each condition, so that the last one's load "
                  "does not carry over (default 500, 0 on a CPU device; 0: none)")
      ->check(CLI::Range(0u, kMaxWashoutMs))
      ->needs(share_device);
  run->add_option("--stamp-memory", run_args.stamp_memory,
                  "Stamp memory: uncached (default; host-visible, coherent, write-combined) or "
                  "cached (host-cached, coherent: the CPU spins in its cache)")
      ->check(CLI::IsMember({"uncached", "cached"}));
  run->add_option("--flag-tolerance-us", run_args.flag_tolerance_us,
                  "A row's clocks that differ by more than max(this, --flag-tolerance-pct of its "
                  "duration) get a flag in records.csv (default 10)")
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
  selftest->add_option("--rounds", selftest_options.ping_pong_rounds, "Ping-pong rounds")
      ->check(CLI::Range(1u, 1'000'000u));
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
      ->add_option("--clock", compare_clock,
                   "Clock to compare: poll (default), ts or clk (shader clock)")
      ->check(CLI::IsMember(all_names(kClockNames)));
  compare->add_option("--csv", compare_csv_path,
                      "Also write the comparison as CSV to this file ('-': standard output)");

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
      "the dependency gaps, the device and queue priorities. Needs a display (xvfb-run works)");
  std::string view_candidate;
  view->add_option("results", view_dir, "Results directory written by gpuoverlap run")->required();
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  // Every failure is meant to come back as a value; this only keeps one that escaped (a bug,
  // or std::bad_alloc) from ending in std::terminate and a core dump.
  try {
    if (devices->parsed()) return command_devices(devices_json);
    if (app.got_subcommand("list")) return command_list();
    if (validate->parsed()) return command_validate(validate_items, validate_explain);
    if (run->parsed())
      return run_args.live                   ? command_run_live(run_args, command_line)
             : !run_args.live_script.empty() ? command_run_scripted(run_args, command_line)
                                             : command_run(run_args, command_line);
    if (selftest->parsed()) {
      selftest_options.out_directory = selftest_out;
      return command_selftest(selftest_device, selftest_options, selftest_replace);
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
#if GPUOVERLAP_HAS_VIEWER
      viewer::ViewOptions options;
      options.results = view_dir;
      if (!view_candidate.empty()) options.candidate = view_candidate;
      if (view_scenario_option->count() > 0) options.scenario = view_scenario;
      if (view_frame_option->count() > 0) options.frame = view_frame;
      if (view_clock_option->count() > 0) options.clock = value_of(kClockNames, view_clock);
      if (!view_screenshot.empty()) options.screenshot = view_screenshot;
      options.exit_after_frames = view_exit_after;
      options.width_px = view_width;
      options.height_px = view_height;
      // Its messages quote untrusted names (run.json's, the command line's): escaped, as
      // every other command's.
      std::ostringstream messages;
      const int status = viewer::run_viewer(options, std::cout, messages);
      std::istringstream lines(messages.str());
      for (std::string line; std::getline(lines, line);)
        std::cerr << escape_control_characters(line) << "\n";
      return status;
#else
      (void)view_scenario_option, (void)view_frame_option, (void)view_clock_option;
      return fail("view: this build has no viewer (Dear ImGui is not packaged for mingw-w64)",
                  kExitEnvironment);
#endif
    }
    if (load_process->parsed()) return command_load_process(load_spec, load_device, load_settings);
  } catch (const std::exception& e) {
    return fail(std::string("unexpected error: ") + e.what(), kExitEnvironment);
  }
  return kExitBadInput;
}
