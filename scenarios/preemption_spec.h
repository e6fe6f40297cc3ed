// What a preemption scenario asks for (docs/preemption.md): a long load on
// the DIRECT queue at normal priority, and a small urgent compute job submitted every
// `period_ms` on a COMPUTE queue of the chosen priority for `duration_ms`. Plain data, parsed
// by scenarios/ from a `[preemption]` table; no GPU API.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "core/result.h"
#include "queues/queue_model.h"

namespace gpuoverlap {

struct Scenario;

namespace preemption {

// big_dispatch: one dispatch with far more threads than the GPU holds at once.
// slow_shader: few threads (one group of 1024), each looping very long.
// many_draws: many full-screen draws into a small target, in one submission.
// graphics_and_compute: many_draws and big_dispatch in one submission, each half the target.
enum class LoadKind { big_dispatch, slow_shader, many_draws, graphics_and_compute };
// same: load and urgent job in one process (one device, two queues). separate: the load runs
// in a child gpuoverlap process with its own device and queue, as another application would.
enum class ProcessMode { same, separate };
inline constexpr EnumNames<LoadKind, 4> kLoadKindNames{
    {{LoadKind::big_dispatch, "big-dispatch"},
     {LoadKind::slow_shader, "slow-shader"},
     {LoadKind::many_draws, "many-draws"},
     {LoadKind::graphics_and_compute, "graphics-and-compute"}}};
inline constexpr EnumNames<ProcessMode, 2> kProcessModeNames{
    {{ProcessMode::same, "same"}, {ProcessMode::separate, "separate"}}};

std::string_view to_string(LoadKind kind);
std::optional<LoadKind> parse_load_kind(std::string_view text);
std::string_view to_string(ProcessMode mode);
std::optional<ProcessMode> parse_process_mode(std::string_view text);
inline constexpr LoadKind kAllLoads[] = {LoadKind::big_dispatch, LoadKind::slow_shader,
                                         LoadKind::many_draws, LoadKind::graphics_and_compute};

// The size of one part of a load. Compute: `groups` x 1024 threads, `iterations` noise
// evaluations each. Graphics: `draws` full-screen draws into a 1024 x `rows` target, each
// pixel doing `iterations` evaluations.
struct LoadSize {
  std::uint32_t groups = 1;
  std::uint32_t iterations = 1;
  std::uint32_t draws = 0;  // 0: a compute part
  std::uint32_t rows = 0;   // graphics only
  bool operator==(const LoadSize&) const = default;
};
std::string describe(const LoadSize& size);

// Upper bounds of a load's parts, so that neither a bad file nor a runaway calibration can
// make one submission run for minutes. Groups: kMaxComputeGroups (workloads/workload.h), further
// limited by the device's maxComputeWorkGroupCount. Iterations: a slow shader's 1024 threads
// need far more than a workload's kMaxIterations to run 100 ms on a big GPU.
inline constexpr std::uint32_t kMaxLoadIterations = 1u << 26;
inline constexpr std::uint32_t kMaxDraws = 1u << 16;
inline constexpr std::uint32_t kDrawRows = 16;  // a draw covers 1024 x 16 pixels
// Ranges of the spec's times, shared by validate(), the parser (which names the line) and
// the command line's overrides.
inline constexpr double kMinTargetMs = 1, kMaxTargetMs = 2000;
inline constexpr double kMinPeriodMs = 0.5, kMaxPeriodMs = 1000;
inline constexpr double kMinDurationMs = 10, kMaxDurationMs = 600'000;
inline constexpr std::uint32_t kMaxBaselineLoads = 100;
inline constexpr std::uint32_t kMaxUrgentGroups = 64;
inline constexpr std::uint32_t kMaxUrgentIterations = 1u << 16;
// "Preempts" (NVIDIA's Pascal claim of compute preemption): p99 latency under this.
inline constexpr double kPreemptsLatencyUs = 100;

struct PreemptionSpec {
  LoadKind load = LoadKind::big_dispatch;
  // The load's duration alone on the device; its size is calibrated to it at the start of
  // the run unless given explicitly (groups, iterations, draws below).
  double target_ms = 100;
  std::optional<std::uint32_t> groups, iterations, draws;
  QueuePriority priority = QueuePriority::normal;  // the urgent job's COMPUTE queue
  double period_ms = 11.1;                         // a 90 Hz compositor
  double duration_ms = 3000;                       // how long the urgent job is submitted
  std::uint32_t urgent_groups = 1;                 // x 1024 threads
  std::uint32_t urgent_iterations = 16;
  // Loads measured alone after calibration (the reference of the load's slowdown).
  std::uint32_t baseline_loads = 3;
  ProcessMode process = ProcessMode::same;
};

// Which queues a process creates for a preemption scenario.
enum class Role { both, urgent_only, load_only };

// Workload names of the scenario made for a spec: the load's parts, then the urgent job.
inline constexpr std::string_view kLoadWorkload = "load";
inline constexpr std::string_view kLoadComputeWorkload = "load-compute";  // graphics_and_compute
inline constexpr std::string_view kUrgentWorkload = "urgent";

// Checks ranges; messages name the key. Used by the parser and by the load child on the spec
// it receives.
Status validate(const PreemptionSpec& spec);

// The queues and workloads a process running `role` of the spec creates: queue "load" (DIRECT,
// normal) with the load's parts, queue "urgent" (COMPUTE, spec.priority) with the urgent job.
// Workload sizes are the parts' upper bounds (resources are allocated for them; a run may
// use less). Scenario::preemption is set.
Scenario make_scenario(const PreemptionSpec& spec, Role role, const std::string& name);

// The scenario as it ran: its load parts (the first workloads, in order) at the sizes they
// ran at (calibrated), not the bounds they were allocated for. Graphics parts show their rows
// as groups. A copy: the scenario given is not changed.
Scenario as_run(const Scenario& scenario, const std::vector<LoadSize>& load_sizes);

// One line for logs and `validate`: the load, its target, the urgent job's period, priority
// and duration, and the process mode.
std::string describe(const PreemptionSpec& spec);

nlohmann::json to_json(const PreemptionSpec& spec);
Result<PreemptionSpec> spec_from_json(const nlohmann::json& json);

// One probe of the calibration: the size measured and how long it ran alone.
struct CalibrationStep {
  std::size_t part = 0;  // index of the load part (workload order)
  LoadSize size;
  double measured_ms = 0;
};

// What the run chose and measured besides the records (ScenarioTimeline::preemption).
struct PreemptionRunInfo {
  std::vector<LoadSize> load_sizes;  // per load part (workload order), as run
  std::vector<CalibrationStep> calibration;
  bool calibrated = false;       // false: the sizes were given explicitly
  std::string calibration_note;  // e.g. a bound that stopped it short of the target
  // Set when the sizes were not calibrated in this run but taken from the calibration of this
  // load (same kind, target and explicit sizes) by an earlier scenario of the same command on
  // the same device, which this names: a matrix calibrates each load once. The load runs on
  // its own queue at normal priority in every cell, so the urgent job's priority does not
  // change what it costs alone. `calibration` is then empty.
  std::string sizes_from;
  // Load submissions 0 .. baseline_loads-1 ran alone (no urgent job): the slowdown's reference.
  std::uint32_t baseline_loads = 0;
  QueuePriority priority_granted = QueuePriority::normal;
  ProcessMode process = ProcessMode::same;
  std::int64_t load_process_id = 0;  // the child's pid (separate), else 0
  std::string load_process_exit;     // how the child ended ("exit 0", "killed after deadline", ...)
};
nlohmann::json to_json(const PreemptionRunInfo& info);
// Reads what to_json wrote (the load process sends its run facts this way).
Result<PreemptionRunInfo> run_info_from_json(const nlohmann::json& json);

}  // namespace preemption
}  // namespace gpuoverlap
