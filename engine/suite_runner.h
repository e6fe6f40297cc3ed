// Runs scenarios one after the other through an executor and writes each one's results as
// soon as it is measured (OUT/<scenario>/records.csv, summary.csv, meta.json), plus
// OUT/run.json listing what ran. API neutral: the executor is injected.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/executor.h"
#include "scenarios/scenario.h"
#include "timeline/clock_agreement.h"
#include "timeline/export.h"

namespace gpuoverlap {

struct SuiteOptions {
  std::filesystem::path out_directory;
  std::optional<std::uint32_t> frames;         // overrides the scenario's frames
  std::optional<std::uint32_t> warmup_frames;  // overrides the scenario's warmup_frames
  // What every scenario runs with, as the executor gets it; its frames and warm-up frames are
  // each scenario's own (or the overrides above).
  RunSettings run;
  AgreementTolerance agreement;  // rows whose clocks differ by more are flagged
  // A poll stamp whose detection window is wider is disturbed (mark_poll_disturbance);
  // nullopt: the default, from the scenario's own windows.
  std::optional<double> poll_window_tolerance_us;
  // The device is the CPU (lavapipe): a paced game frame runs at a period the device sustains,
  // measured once per study (or scenario) before its first run, from its baseline run unpaced
  // (scenarios/cpu_device_sizes.h); meta.json's cpu.period_calibration records it. Off for
  // devices run at once (the probe would run outside their lockstep) and live sessions.
  bool cpu_device_pacing = false;
  bool show_progress = false;  // a live "\r" progress line (terminals only)
  bool write_run_json = true;  // OUT/run.json (the self-test writes its own index instead)
  std::string command_line;    // recorded in meta.json
  nlohmann::json extra_meta = nlohmann::json::object();  // merged into every meta.json
  // Called before each scenario, before its line is logged and its wall time starts, with its
  // index in this run (a study's added rounds count on) and the scenario. It may block: a run on
  // several devices at once waits there for the other devices (engine/concurrent_suite.h).
  // What it returns is merged into the scenario's meta.json (null: nothing).
  std::function<nlohmann::json(std::size_t index, const Scenario& scenario)> before_scenario;
};

struct ScenarioOutcome {
  Scenario scenario;  // as it ran: a preemption load at its calibrated size (preemption::as_run)
  std::filesystem::path directory;
  std::vector<SummaryRow> summary;
  std::optional<ScenarioTimeline> timeline;  // what was measured, as written
  std::optional<Error> failure;              // set when the scenario failed or stopped early
  bool written = false;                      // its files exist
  double seconds = 0;        // wall time of its run (device setup included), not the writing
  double write_seconds = 0;  // writing its results folder
  // CPU time a hypervisor took from the machine's CPUs during the run, summed over them
  // (core/cpu_steal.h; meta.json's poll_window.cpu_steal is its share); nullopt off Linux.
  std::optional<double> host_steal_ms;
  // Refused before its first GPU work for a feature this runtime or device lacks
  // (ErrorCategory::unsupported): nothing was measured, and the suite went on.
  bool unsupported() const {
    return failure && failure->category == ErrorCategory::unsupported && !written;
  }
};

struct SuiteOutcome {
  std::vector<ScenarioOutcome> scenarios;
  // The first failure; the suite stops there. A scenario refused as unsupported is no
  // failure of the suite: it is recorded (ScenarioOutcome::unsupported) and the next one runs.
  std::optional<Error> failure;
};

// Asked each time the scenarios run out, with everything measured so far: more scenarios to
// run (a study's next round while its verdict is undecided), or none to finish. Contract: the
// scenarios it returns are validated.
using MoreScenarios = std::function<std::vector<Scenario>(const SuiteOutcome&)>;

// One device's part of a run on several devices (`run --device all` or a list).
struct DeviceRun {
  std::size_t index = 0;            // the API's device index
  std::filesystem::path directory;  // its results folder, OUT/gpu<index>: a results folder alone
  nlohmann::json device;            // as its meta.json's "device"
  SuiteOutcome outcome;
};
// OUT/run.json of a run on several devices: `devices` (index, folder, device, status) and every
// scenario of every device relative to OUT ("gpu0/default"), so that a reader of OUT sees them
// all; each device's folder has its own run.json as well. `failure`: the first device's that
// failed; the other devices ran on.
// `concurrent`: the run's "concurrent" entry (run --concurrent: its rounds, the studies of
// neighbours, the scenarios run together only), null for a run one device after another.
Status write_devices_run_json(const std::filesystem::path& out, const std::string& started_at,
                              const std::string& command_line, const std::vector<DeviceRun>& runs,
                              const nlohmann::json& concurrent = nullptr);
// The same index from its parts, for a run whose folders are not DeviceRuns of this process
// (run --api both: one run per API): `devices` entries, every scenario entry relative to OUT,
// the first failure (null: none).
Status write_run_index_json(const std::filesystem::path& out, const std::string& started_at,
                            const std::string& command_line, const nlohmann::json& devices,
                            const nlohmann::json& concurrent, const nlohmann::json& scenarios,
                            const nlohmann::json& failure);

// The time now in UTC as results record it ("2026-11-26T09:17:22Z": started_at, finished_at).
std::string utc_now_iso8601();
// The host as results record it (meta.json's "host"): its name, kernel, CPU model, logical
// CPUs and the CPUs this process may run on. The history's machine fingerprint reads it.
nlohmann::json host_description();

// Contract: scenarios are validated. Progress and per-scenario lines go to `log`.
SuiteOutcome run_suite(ScenarioExecutor& executor, const std::vector<Scenario>& scenarios,
                       const SuiteOptions& options, std::ostream& log,
                       const MoreScenarios& more = {});

// A `run --live` session's versions (Scenario::live), one row each: version, scenario,
// directory (relative to `out`), first_session_frame (the session's measured frames before
// it), frames, ended ("all frames", "edit": the next version's edits took effect, "end": the
// run was ended there, or the failure) and changes (the edits it started with, "; "-joined).
// Empty when no scenario is a live version.
std::string live_session_csv(const SuiteOutcome& outcome, const std::filesystem::path& out);

// The end-of-run table: per scenario and workload, p50 start/end/duration on each clock.
std::string summary_table(const SuiteOutcome& outcome);
// The preemption scenarios' latency table (preemption/preemption_analysis.h); empty without.
std::string preemption_summary_table(const SuiteOutcome& outcome);

}  // namespace gpuoverlap
