#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <set>
#include <sstream>
#include <thread>

#include "barriers/d3d12_names.h"
#include "core/input_file.h"
#include "scenarios/frame_plan.h"
#include "scenarios/names.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {

std::uint64_t output_bytes(const Scenario& scenario, std::size_t w) {
  const WorkloadSpec& spec = scenario.workloads[w];
  if (spec.target)
    return subresource_bytes(scenario.textures[spec.target->texture], spec.target->mip);
  switch (spec.kind) {
    case WorkloadKind::copy:
      return spec.bytes;
    case WorkloadKind::graphics:  // its own R32F render target
      return std::uint64_t{kRenderTargetWidth} * spec.groups * 4;
    case WorkloadKind::compute:
      break;
  }
  return std::uint64_t{workload_shape(scenario, w).threads} * 4;
}

WorkloadShape workload_shape(const Scenario& scenario, std::size_t w) {
  const WorkloadSpec& spec = scenario.workloads[w];
  if (!spec.target) return groups_shape(spec.groups);
  const TextureSpec& texture = scenario.textures[spec.target->texture];
  const std::uint32_t width = mip_size(texture.width, spec.target->mip);
  return {width * mip_size(texture.height, spec.target->mip), width};
}

std::vector<std::size_t> Scenario::workloads_on(std::size_t queue) const {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < workloads.size(); ++i)
    if (workloads[i].queue == queue) indices.push_back(i);
  return indices;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  Error error_at(const toml::node* node, const std::string& reason) const {
    if (node && node->source().begin.line > 0)
      return make_error(escape_control_characters(
          source_ + ":" + std::to_string(node->source().begin.line) + ": " + reason));
    return make_error(escape_control_characters(source_ + ": " + reason));
  }

  Status only_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                   const std::string& where) const {
    for (const auto& [key, value] : table) {
      bool known = false;
      for (auto a : allowed) known = known || key.str() == a;
      if (!known) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return error_at(&value, "unknown key '" + std::string(key.str()) + "' in " + where +
                                    " (allowed: " + list + ")");
      }
    }
    return ok_status();
  }

  Result<std::string> string_field(const toml::table& table, std::string_view key,
                                   const std::string& where, bool required,
                                   const toml::node* owner) const {
    const toml::node* node = table.get(key);
    if (!node) {
      if (required) return error_at(owner, where + " needs '" + std::string(key) + "'");
      return std::string{};
    }
    if (!node->is_string())
      return error_at(node, "'" + std::string(key) + "' in " + where + " must be a string");
    return std::string(*node->value<std::string_view>());
  }

  // Integer in [min, max]; `fallback` when absent.
  Result<std::uint32_t> int_field(const toml::table& table, std::string_view key,
                                  const std::string& where, std::int64_t min, std::int64_t max,
                                  std::uint32_t fallback) const {
    const toml::node* node = table.get(key);
    if (!node) return fallback;
    if (!node->is_integer())
      return error_at(node, "'" + std::string(key) + "' in " + where + " must be an integer");
    const std::int64_t v = *node->value<std::int64_t>();
    if (v < min || v > max)
      return error_at(node, "'" + std::string(key) + "' in " + where + " is " + std::to_string(v) +
                                ", must be in [" + std::to_string(min) + ", " +
                                std::to_string(max) + "]");
    return static_cast<std::uint32_t>(v);
  }

  // A name that becomes a directory (scenario, study, condition): scenarios/names.h.
  Result<std::string> directory_name(const toml::table& table, std::string_view key,
                                     const std::string& where, const toml::node* owner) const {
    auto name = string_field(table, key, where, true, owner);
    if (!name) return name.error();
    if (const std::string problem = directory_name_problem(*name); !problem.empty())
      return error_at(table.get(key), "name '" + printable_name(*name) + "' " + problem);
    return name;
  }

  Result<bool> bool_field(const toml::table& t, std::string_view key, const std::string& where,
                          bool fallback) const {
    const toml::node* node = t.get(key);
    if (!node) return fallback;
    if (!node->is_boolean())
      return error_at(node, "'" + std::string(key) + "' in " + where + " must be true or false");
    return *node->value<bool>();
  }

  // [background]: docs/scenario-format.md, "Background work".
  // In a study (`in_study`), a policy of the other OS is not a mistake in the file: the study
  // reports that condition as not run here (why_not_here), so one preset serves both.
  Result<background::BackgroundSpec> parse_background(const toml::node& node,
                                                      const std::string& where,
                                                      bool in_study = false) const {
    using namespace background;
    const toml::table* t = node.as_table();
    if (!t) return error_at(&node, where + " must be a table");
    GPUOVERLAP_TRY(only_keys(*t,
                             {"mode",
                              "action",
                              "action_every_frame",
                              "tasks",
                              "continuous",
                              "max_concurrent",
                              "policy",
                              "developer_mode",
                              "unmanaged_threads",
                              "workflow",
                              "training_frames",
                              "max_passes",
                              "converge_after_passes",
                              "commit_timeout_ms",
                              "create_pipelines",
                              "bind_committed",
                              "before_frames",
                              "fold_iterations",
                              "alternate_frames",
                              "cpus",
                              "allocator",
                              "cgroup_idle",
                              "dispatch",
                              "commit_at_frame"},
                             where));
    BackgroundSpec spec;
    GPUOVERLAP_TRY(named_field(*t, "mode", where, &node, parse_processing_mode,
                               names_list(kProcessingModeNames), spec.mode));
    GPUOVERLAP_TRY(named_field(*t, "action", where, &node, parse_measurements_action,
                               names_list(kMeasurementsActionNames), spec.action));
    GPUOVERLAP_TRY(named_field(*t, "workflow", where, &node, parse_workflow,
                               names_list(kWorkflowNames), spec.workflow));
    GPUOVERLAP_TRY(named_field(*t, "policy", where, &node, parse_thread_policy,
                               names_list(kThreadPolicyNames), spec.policy));
    if (!available_here(spec.policy) && !in_study) {
      std::string here;
      for (ThreadPolicy p : thread_policies_here())
        here += (here.empty() ? "" : ", ") + std::string(to_string(p));
      return error_at(t->get("policy"), "'policy' in " + where + ": '" +
                                            std::string(to_string(spec.policy)) +
                                            "' is not a policy of this OS (here: " + here + ")");
    }
    GPUOVERLAP_TRY(named_field(
        *t, "allocator", where, &node,
        [](std::string_view text) { return value_of(kAllocatorNames, text); },
        names_list(kAllocatorNames), spec.allocator));
    GPUOVERLAP_TRY(named_field(
        *t, "dispatch", where, &node,
        [](std::string_view text) { return value_of(kDispatchNames, text); },
        names_list(kDispatchNames), spec.dispatch));
    if (const toml::node* cpus = t->get("cpus")) {
      auto placement = parse_placement(*cpus, where, in_study);
      if (!placement) return placement.error();
      spec.cpus = *placement;
    }
    struct IntKey {
      std::string_view key;
      std::int64_t min, max;
      std::uint32_t* out;
    };
    for (const IntKey& k : {IntKey{"tasks", 0, 100'000, &spec.tasks},
                            IntKey{"max_concurrent", 1, 64, &spec.max_concurrent},
                            IntKey{"training_frames", 1, 100'000, &spec.training_frames},
                            IntKey{"max_passes", 1, 1000, &spec.max_passes},
                            IntKey{"converge_after_passes", 0, 1000, &spec.converge_after_passes},
                            IntKey{"commit_timeout_ms", 1, 3'600'000, &spec.commit_timeout_ms},
                            IntKey{"before_frames", 0, 10'000'000, &spec.before_frames},
                            IntKey{"alternate_frames", 0, 1'000'000, &spec.alternate_frames}}) {
      auto v = int_field(*t, k.key, where, k.min, k.max, *k.out);
      if (!v) return v.error();
      *k.out = *v;
    }
    if (t->get("commit_at_frame")) {
      auto v = int_field(*t, "commit_at_frame", where, 0, 10'000'000, 0);
      if (!v) return v.error();
      spec.commit_at_frame = *v;
    }
    if (const toml::node* threads = t->get("unmanaged_threads")) {
      if (threads->is_string() && *threads->value<std::string_view>() == "cores") {
        spec.unmanaged_threads = std::max(1u, std::thread::hardware_concurrency());
      } else {
        auto v = int_field(*t, "unmanaged_threads", where, 0, 1024, 0);
        if (!v)
          return error_at(threads, "'unmanaged_threads' in " + where +
                                       " must be an integer in [0, 1024] or \"cores\" (one per "
                                       "hardware thread)");
        spec.unmanaged_threads = *v;
      }
    }
    for (auto [key, out] :
         {std::pair<std::string_view, bool*>{"action_every_frame", &spec.action_every_frame},
          {"continuous", &spec.continuous},
          {"create_pipelines", &spec.create_pipelines},
          {"bind_committed", &spec.bind_committed},
          {"fold_iterations", &spec.fold_iterations},
          {"cgroup_idle", &spec.cgroup_idle},
          {"developer_mode", &spec.developer_mode}}) {
      auto v = bool_field(*t, key, where, *out);
      if (!v) return v.error();
      *out = *v;
    }
    // Combinations the runtime or the workflow would refuse, refused before any GPU work.
    const bool restricted = spec.mode == ProcessingMode::disable_background_work ||
                            spec.mode == ProcessingMode::disable_profiling_by_system ||
                            spec.action == MeasurementsAction::commit_results_high_priority;
    if (restricted && !spec.developer_mode)
      return error_at(&node, where + ": mode '" + std::string(to_string(spec.mode)) +
                                 "' with action '" + std::string(to_string(spec.action)) +
                                 "' needs developer_mode = true (DISABLE_BACKGROUND_WORK, "
                                 "DISABLE_PROFILING_BY_SYSTEM and COMMIT_RESULTS_HIGH_PRIORITY "
                                 "are restricted to developer mode)");
    if (spec.workflow != Workflow::none) {
      if (t->get("mode") || t->get("action") || t->get("action_every_frame"))
        return error_at(&node, where + ": workflow '" + std::string(to_string(spec.workflow)) +
                                   "' sets the mode and action itself; remove mode, action and "
                                   "action_every_frame");
      if (spec.workflow == Workflow::single_frame_analysis && !spec.developer_mode)
        return error_at(&node, where +
                                   ": workflow 'single-frame-analysis' uses "
                                   "COMMIT_RESULTS_HIGH_PRIORITY and "
                                   "DISABLE_PROFILING_BY_SYSTEM; it needs developer_mode = true");
    }
    const bool commits = spec.workflow != Workflow::none ||
                         spec.action == MeasurementsAction::commit_results ||
                         spec.action == MeasurementsAction::commit_results_high_priority;
    if (spec.bind_committed && !commits && spec.unmanaged_threads == 0)
      return error_at(t->get("bind_committed"),
                      where +
                          ": bind_committed binds what a commit completes, and nothing "
                          "commits: set a workflow, or action = \"commit_results\" or "
                          "\"commit_results_high_priority\"");
    if (t->get("before_frames") && !spec.bind_committed)
      return error_at(t->get("before_frames"),
                      where + ": before_frames applies only with bind_committed = true");
    // A held block stops the commit's work too: a commit the foreground waits for, or a
    // workflow's, would wait for the block to end or change what the held block measures.
    if (spec.alternate_frames > 0 && (spec.bind_committed || spec.workflow != Workflow::none))
      return error_at(t->get("alternate_frames"),
                      where +
                          ": alternate_frames holds the background work in every other block, "
                          "which a workflow or bind_committed would wait on; use it without "
                          "them");
    // The CPU phase's hold spans the next frame's jobs with two frames in flight, where a
    // commit the frame loop waits for (a workflow's, bind_committed's) would wait on compiles
    // the hold keeps from starting.
    if (spec.dispatch == Dispatch::gaps && (spec.bind_committed || spec.workflow != Workflow::none))
      return error_at(t->get("dispatch"),
                      where +
                          ": dispatch = \"gaps\" holds compiles during the frame's CPU phase, "
                          "which a workflow or bind_committed would wait on; use it without "
                          "them");
    // The wait asks for a commit of its own, which a workflow's or bind_committed's commits
    // would overlap, and a held block would stop its compiles for a block.
    if (spec.commit_at_frame &&
        (spec.bind_committed || spec.workflow != Workflow::none || spec.alternate_frames > 0))
      return error_at(t->get("commit_at_frame"),
                      where +
                          ": commit_at_frame asks for a commit of its own and times it, which a "
                          "workflow, bind_committed or alternate_frames would change; use it "
                          "without them");
    if (spec.unmanaged_threads > 0) {
      for (std::string_view key :
           {"mode", "action", "action_every_frame", "workflow", "max_concurrent", "policy",
            "developer_mode", "bind_committed", "cpus", "allocator", "cgroup_idle", "dispatch",
            "commit_at_frame"})
        if (t->get(key))
          return error_at(t->get(key),
                          where + ": '" + std::string(key) +
                              "' does not apply with unmanaged_threads (the positive control "
                              "runs its compiles outside the processor)");
    }
    return spec;
  }

  // [background]'s cpus: "any", "reserved:N", "siblings", a list as text ("0-3,8") or an
  // array of CPU numbers. Checked against the CPUs this process may use, except in a study,
  // where a condition that does not fit this host is reported as not run (why_not_here);
  // whether this machine shows SMT siblings is a fact of the host, not a mistake in the file.
  Result<background::CpuPlacement> parse_placement(const toml::node& node, const std::string& where,
                                                   bool in_study) const {
    using namespace background;
    std::string text;
    if (const auto* array = node.as_array()) {
      std::vector<int> cpus;
      for (const toml::node& cpu : *array) {
        const auto value = cpu.value<std::int64_t>();
        if (!cpu.is_integer() || !value || *value < 0 || *value > 4095)
          return error_at(&cpu,
                          "'cpus' in " + where + ": each CPU must be an integer in [0, 4095]");
        cpus.push_back(static_cast<int>(*value));
      }
      std::sort(cpus.begin(), cpus.end());
      text = describe_cpus(cpus);
    } else if (node.is_string()) {
      text = std::string(*node.value<std::string_view>());
    }
    const std::string forms =
        "\"any\", \"reserved:N\" (N >= 1 CPUs taken from the frame's workers), \"siblings\", or "
        "a list of CPUs (\"0-3,8\" or [0, 1, 2, 3, 8])";
    auto placement = parse_cpu_placement(text);
    if (!placement)
      return error_at(
          &node, "'cpus' in " + where + ": '" + printable_name(text) + "' is not one of " + forms);
    if (!in_study)
      if (auto why = placement_misfit_here(*placement))
        return error_at(&node, "'cpus' in " + where + ": " + *why);
    return *placement;
  }

  // [cpu]: docs/scenario-format.md, "The CPU side of a frame". Every key is checked here,
  // before any GPU work; the work per worker and the chain must fit in a paced frame.
  Result<jobs::CpuFrameSpec> parse_cpu(const toml::node& node, const std::string& where) const {
    using namespace jobs;
    const toml::table* t = node.as_table();
    if (!t) return error_at(&node, where + " must be a table");
    GPUOVERLAP_TRY(only_keys(
        *t,
        {"workers", "jobs_per_frame", "jobs_per_worker", "cpu_ms_per_frame", "cpu_ms_per_worker",
         "critical_jobs", "wait", "spin_us", "frame_period_ms", "frames_in_flight", "pin_workers"},
        where));
    CpuFrameSpec spec;
    // Workers: "cores" (the default) or a count.
    spec.workers_from_cores = true;
    if (const toml::node* workers = t->get("workers")) {
      if (workers->is_string() && *workers->value<std::string_view>() == "cores") {
        spec.workers_from_cores = true;
      } else {
        auto v = int_field(*t, "workers", where, 1, kMaxWorkers, 1);
        if (!v)
          return error_at(workers, fmt::format("'workers' in {} must be an integer in [1, {}] or "
                                               "\"cores\" (the usable cores less the poller's)",
                                               where, kMaxWorkers));
        spec.workers = *v;
        spec.workers_from_cores = false;
      }
    }
    if (spec.workers_from_cores) spec.workers = std::max(1u, usable_cpus() - 1);
    for (auto [total, per_worker] :
         {std::pair<std::string_view, std::string_view>{"jobs_per_frame", "jobs_per_worker"},
          {"cpu_ms_per_frame", "cpu_ms_per_worker"}})
      if (t->get(total) && t->get(per_worker))
        return error_at(t->get(per_worker),
                        fmt::format("{}: give '{}' or '{}', not both", where, total, per_worker));
    if (t->get("jobs_per_worker")) {
      auto v = int_field(*t, "jobs_per_worker", where, 1, 10'000, 1);
      if (!v) return v.error();
      spec.jobs_per_worker = *v;
      spec.jobs_per_frame = *v * spec.workers;
      if (spec.jobs_per_frame > kMaxJobsPerFrame)
        return error_at(
            t->get("jobs_per_worker"),
            fmt::format("{}: {} jobs per worker on {} workers is {} jobs a frame, "
                        "more than {}",
                        where, *v, spec.workers, spec.jobs_per_frame, kMaxJobsPerFrame));
    } else {
      auto v = int_field(*t, "jobs_per_frame", where, 1, kMaxJobsPerFrame, spec.jobs_per_frame);
      if (!v) return v.error();
      spec.jobs_per_frame = *v;
    }
    // Milliseconds: positive and finite (TOML's nan and inf fail the range).
    auto positive_ms = [&](std::string_view key, double fallback) -> Result<double> {
      auto v = number_field(*t, key, where, 0, 10'000, fallback);
      if (!v) return v.error();
      if (*v <= 0)
        return error_at(t->get(key), fmt::format("'{}' in {} must be more than 0", key, where));
      return *v;
    };
    if (t->get("cpu_ms_per_worker")) {
      auto v = positive_ms("cpu_ms_per_worker", 1);
      if (!v) return v.error();
      spec.cpu_ms_per_worker = *v;
      spec.cpu_ms_per_frame = *v * spec.workers;
    } else {
      auto v = positive_ms("cpu_ms_per_frame", spec.cpu_ms_per_frame);
      if (!v) return v.error();
      spec.cpu_ms_per_frame = *v;
    }
    auto critical = int_field(*t, "critical_jobs", where, 0, 1000, spec.critical_jobs);
    if (!critical) return critical.error();
    spec.critical_jobs = *critical;
    if (spec.critical_jobs > spec.jobs_per_frame)
      return error_at(t->get("critical_jobs") ? t->get("critical_jobs") : &node,
                      fmt::format("{}: critical_jobs ({}) are some of the frame's jobs, and it "
                                  "has {}",
                                  where, spec.critical_jobs, spec.jobs_per_frame));
    GPUOVERLAP_TRY(named_field(*t, "wait", where, &node, parse_wait_mode,
                               names_list(kWaitModeNames), spec.wait));
    if (t->get("spin_us") && spec.wait != WaitMode::spin_then_sleep)
      return error_at(t->get("spin_us"),
                      where + ": spin_us applies only with wait = \"spin_then_sleep\"");
    auto spin = number_field(*t, "spin_us", where, 0, 1'000'000, spec.spin_us);
    if (!spin) return spin.error();
    spec.spin_us = *spin;
    auto period = number_field(*t, "frame_period_ms", where, 0, 10'000, spec.frame_period_ms);
    if (!period) return period.error();
    spec.frame_period_ms = *period;
    auto in_flight =
        int_field(*t, "frames_in_flight", where, 1, kMaxFramesInFlight, spec.frames_in_flight);
    if (!in_flight) return in_flight.error();
    spec.frames_in_flight = *in_flight;
    auto pin = bool_field(*t, "pin_workers", where, spec.pin_workers);
    if (!pin) return pin.error();
    spec.pin_workers = *pin;
    if (spec.frame_period_ms > 0) {
      if (spec.cpu_ms_per_worker_share() > spec.frame_period_ms)
        return error_at(&node,
                        fmt::format("{}: each worker's share of the CPU work ({:.3g} ms: {:.3g} "
                                    "ms on {} workers) is longer than frame_period_ms ({:g}): "
                                    "no frame could keep its pace",
                                    where, spec.cpu_ms_per_worker_share(), spec.cpu_ms_per_frame,
                                    spec.workers, spec.frame_period_ms));
      if (spec.critical_path_ms() > spec.frame_period_ms)
        return error_at(&node, fmt::format("{}: the chain of {} critical jobs ({:.3g} ms) is "
                                           "longer than frame_period_ms ({:g})",
                                           where, spec.critical_jobs, spec.critical_path_ms(),
                                           spec.frame_period_ms));
    }
    return spec;
  }

  Result<toml::table> parse_toml(std::string_view text) const {
    try {
      return toml::parse(text, source_);
    } catch (const toml::parse_error& e) {
      return make_error(
          escape_control_characters(source_ + ":" + std::to_string(e.source().begin.line) +
                                    ": TOML syntax: " + std::string(e.description())));
    }
  }

  Result<Scenario> parse(std::string_view text) {
    auto parsed = parse_toml(text);
    if (!parsed) return parsed.error();
    const toml::table& root = *parsed;
    Scenario s;
    s.source = source_;
    if (root.get("preemption"))
      return make_error(source_ +
                        ": this is a preemption scenario ([preemption]); run it by name or path");
    if (root.get("foreground") || root.get("condition"))
      return make_error(source_ +
                        ": this is a study (it has 'foreground' or [[condition]]), not a "
                        "scenario; run it by name or path and it expands into its conditions");
    GPUOVERLAP_TRY(
        only_keys(root,
                  {"name", "description", "frames", "warmup_frames", "barrier", "split_policy",
                   "timestamps", "queues", "texture", "workload", "background", "cpu"},
                  "the scenario"));
    auto name = directory_name(root, "name", "the scenario", nullptr);
    if (!name) return name.error();
    s.name = *name;
    auto description = string_field(root, "description", "the scenario", false, nullptr);
    if (!description) return description.error();
    s.description = *description;
    auto frames = int_field(root, "frames", "the scenario", 1, kMaxFrames, kDefaultFrames);
    if (!frames) return frames.error();
    s.frames = *frames;
    auto warmup =
        int_field(root, "warmup_frames", "the scenario", 0, kMaxFrames, kDefaultWarmupFrames);
    if (!warmup) return warmup.error();
    s.warmup_frames = *warmup;
    auto barrier = string_field(root, "barrier", "the scenario", false, nullptr);
    if (!barrier) return barrier.error();
    if (!barrier->empty()) {
      auto kind = parse_barrier_kind(*barrier);
      if (!kind) return error_at(root.get("barrier"), barrier_error(*barrier));
      s.default_barrier = *kind;
    }
    auto policy = string_field(root, "split_policy", "the scenario", false, nullptr);
    if (!policy) return policy.error();
    if (!policy->empty()) {
      auto parsed = parse_split_policy(*policy);
      if (!parsed)
        return error_at(root.get("split_policy"), "unknown split_policy '" + *policy + "' (" +
                                                      names_list(kSplitPolicyNames) + ")");
      s.default_split_policy = *parsed;
    }
    auto timestamps = bool_field(root, "timestamps", "the scenario", true);
    if (!timestamps) return timestamps.error();
    s.timestamps = *timestamps;
    GPUOVERLAP_TRY(parse_queues(root, s));
    GPUOVERLAP_TRY(parse_textures(root, s));
    GPUOVERLAP_TRY(parse_workloads(root, s));
    GPUOVERLAP_TRY(check_graph(s));
    if (const toml::node* node = root.get("background")) {
      auto spec = parse_background(*node, "[background]");
      if (!spec) return spec.error();
      s.background = *spec;
    }
    if (const toml::node* node = root.get("cpu")) {
      auto spec = parse_cpu(*node, "[cpu]");
      if (!spec) return spec.error();
      s.cpu = *spec;
    }
    return s;
  }

  // A number (integer or float) in [min, max]; `fallback` when absent.
  Result<double> number_field(const toml::table& t, std::string_view key, const std::string& where,
                              double min, double max, double fallback) const {
    const toml::node* node = t.get(key);
    if (!node) return fallback;
    if (!node->is_number())
      return error_at(node, "'" + std::string(key) + "' in " + where + " must be a number");
    // An integer is range-checked as an integer: value<double>() is empty for one a double
    // cannot hold exactly (above 2^53), and a huge one must not round into the range.
    double v = 0;
    if (const auto integer = node->value_exact<std::int64_t>()) {
      if (static_cast<double>(*integer) < min || static_cast<double>(*integer) > max)
        return error_at(node, fmt::format("'{}' in {} is {}, must be in [{}, {}]", key, where,
                                          *integer, min, max));
      v = static_cast<double>(*integer);
    } else {
      v = node->as_floating_point()->get();
    }
    if (!(v >= min && v <= max))
      return error_at(
          node, fmt::format("'{}' in {} is {}, must be in [{}, {}]", key, where, v, min, max));
    return v;
  }

  // A key that names one value or, as an array, several (a preemption matrix). Absent: the
  // fallback alone.
  template <typename Value, typename Parse>
  Result<std::vector<Value>> names_field(const toml::table& t, std::string_view key,
                                         const std::string& where, Parse parse,
                                         const std::string& names, Value fallback) const {
    const toml::node* node = t.get(key);
    if (!node) return std::vector<Value>{fallback};
    std::vector<const toml::node*> items;
    if (const toml::array* a = node->as_array()) {
      if (a->empty()) return error_at(node, "'" + std::string(key) + "' in " + where + " is empty");
      for (const toml::node& item : *a) items.push_back(&item);
    } else {
      items.push_back(node);
    }
    std::vector<Value> out;
    for (const toml::node* item : items) {
      const auto text = item->value<std::string_view>();
      if (!text)
        return error_at(item, "'" + std::string(key) + "' in " + where +
                                  " must be a string or an array of strings");
      const auto parsed = parse(*text);
      if (!parsed)
        return error_at(item, "unknown " + std::string(key) + " '" + std::string(*text) + "' in " +
                                  where + " (" + names + ")");
      if (std::find(out.begin(), out.end(), *parsed) != out.end())
        return error_at(item,
                        "'" + std::string(*text) + "' appears twice in '" + std::string(key) + "'");
      out.push_back(*parsed);
    }
    return out;
  }

  // A file with [preemption]: docs/preemption.md. Arrays in load, priority or process make a
  // matrix: one scenario per combination, named "<name>/<load>-<priority>[-<process>]".
  Result<std::vector<Scenario>> parse_preemption_text(std::string_view text) {
    using namespace preemption;
    auto parsed = parse_toml(text);
    if (!parsed) return parsed.error();
    const toml::table& root = *parsed;
    GPUOVERLAP_TRY(only_keys(root, {"name", "description", "preemption"}, "a preemption scenario"));
    auto name = directory_name(root, "name", "the scenario", nullptr);
    if (!name) return name.error();
    auto description = string_field(root, "description", "the scenario", false, nullptr);
    if (!description) return description.error();
    const toml::node* node = root.get("preemption");
    const toml::table* t = node ? node->as_table() : nullptr;
    if (!t) return error_at(node, "[preemption] must be a table");
    const std::string where = "[preemption]";
    GPUOVERLAP_TRY(
        only_keys(*t,
                  {"load", "priority", "process", "target_ms", "period_ms", "duration_ms", "groups",
                   "iterations", "draws", "urgent_groups", "urgent_iterations", "baseline_loads"},
                  where));
    if (!t->get("load"))
      return error_at(node, "[preemption] needs 'load' (" + names_list(kLoadKindNames) +
                                ", or an array of them)");
    auto loads = names_field(*t, "load", where, parse_load_kind, names_list(kLoadKindNames),
                             LoadKind::big_dispatch);
    if (!loads) return loads.error();
    auto priorities = names_field(*t, "priority", where, parse_queue_priority,
                                  names_list(kQueuePriorityNames), QueuePriority::normal);
    if (!priorities) return priorities.error();
    auto processes = names_field(*t, "process", where, parse_process_mode,
                                 names_list(kProcessModeNames), ProcessMode::same);
    if (!processes) return processes.error();
    PreemptionSpec base;
    auto target = number_field(*t, "target_ms", where, kMinTargetMs, kMaxTargetMs, base.target_ms);
    if (!target) return target.error();
    base.target_ms = *target;
    auto period = number_field(*t, "period_ms", where, kMinPeriodMs, kMaxPeriodMs, base.period_ms);
    if (!period) return period.error();
    base.period_ms = *period;
    auto duration =
        number_field(*t, "duration_ms", where, kMinDurationMs, kMaxDurationMs, base.duration_ms);
    if (!duration) return duration.error();
    base.duration_ms = *duration;
    auto optional_int = [&](std::string_view key, std::uint32_t max,
                            std::optional<std::uint32_t>& out) -> Status {
      if (!t->get(key)) return ok_status();
      auto v = int_field(*t, key, where, 1, max, 1);
      if (!v) return v.error();
      out = *v;
      return ok_status();
    };
    GPUOVERLAP_TRY(optional_int("groups", kMaxComputeGroups, base.groups));
    GPUOVERLAP_TRY(optional_int("iterations", kMaxLoadIterations, base.iterations));
    GPUOVERLAP_TRY(optional_int("draws", kMaxDraws, base.draws));
    auto urgent_groups = int_field(*t, "urgent_groups", where, 1, kMaxUrgentGroups, 1);
    if (!urgent_groups) return urgent_groups.error();
    base.urgent_groups = *urgent_groups;
    auto urgent_iterations = int_field(*t, "urgent_iterations", where, 1, kMaxUrgentIterations, 16);
    if (!urgent_iterations) return urgent_iterations.error();
    base.urgent_iterations = *urgent_iterations;
    auto baseline = int_field(*t, "baseline_loads", where, 1, kMaxBaselineLoads, 3);
    if (!baseline) return baseline.error();
    base.baseline_loads = *baseline;
    const bool matrix = loads->size() > 1 || priorities->size() > 1 || processes->size() > 1;
    std::vector<Scenario> out;
    for (LoadKind load : *loads)
      for (QueuePriority priority : *priorities)
        for (ProcessMode process : *processes) {
          PreemptionSpec spec = base;
          spec.load = load;
          spec.priority = priority;
          spec.process = process;
          if (Status v = validate(spec); !v)
            return error_at(node,
                            v.error().message + " (load " + std::string(to_string(load)) + ")");
          std::string scenario_name = *name;
          if (matrix) {
            scenario_name +=
                "/" + std::string(to_string(load)) + "-" + std::string(to_string(priority));
            if (processes->size() > 1) scenario_name += "-" + std::string(to_string(process));
          }
          Scenario s = make_scenario(spec, Role::both, scenario_name);
          s.description = *description;
          s.source = source_;
          out.push_back(std::move(s));
        }
    return out;
  }

  Result<StudySpec> parse_study_text(std::string_view text) {
    auto parsed = parse_toml(text);
    if (!parsed) return parsed.error();
    const toml::table& root = *parsed;
    StudySpec study;
    study.source = source_;
    GPUOVERLAP_TRY(
        only_keys(root,
                  {"name", "description", "foreground", "frames", "warmup_frames", "rounds",
                   "budget_s", "max_rounds", "round_ms", "condition", "in_run_all"},
                  "the study"));
    auto in_run_all = bool_field(root, "in_run_all", "the study", true);
    if (!in_run_all) return in_run_all.error();
    study.in_run_all = *in_run_all;
    auto rounds = int_field(root, "rounds", "the study", 1, 1000, 1);
    if (!rounds) return rounds.error();
    study.rounds = *rounds;
    auto budget =
        number_field(root, "budget_s", "the study", 0, 7 * 24 * 3600.0, kDefaultStudyBudgetS);
    if (!budget) return budget.error();
    study.budget_s = *budget;
    auto max_rounds = int_field(root, "max_rounds", "the study", study.rounds, 1000,
                                std::max(study.rounds, kDefaultStudyMaxRounds));
    if (!max_rounds) return max_rounds.error();
    study.max_rounds = *max_rounds;
    auto round_ms = int_field(root, "round_ms", "the study", 0, kMaxStudyRoundMs, 0);
    if (!round_ms) return round_ms.error();
    study.round_ms = *round_ms;
    auto name = directory_name(root, "name", "the study", nullptr);
    if (!name) return name.error();
    study.name = *name;
    auto description = string_field(root, "description", "the study", false, nullptr);
    if (!description) return description.error();
    study.description = *description;
    auto foreground = string_field(root, "foreground", "the study", true, nullptr);
    if (!foreground) return foreground.error();
    study.foreground = *foreground;
    if (root.get("frames")) {
      auto frames = int_field(root, "frames", "the study", 1, kMaxFrames, kDefaultFrames);
      if (!frames) return frames.error();
      study.frames = *frames;
    }
    if (root.get("warmup_frames")) {
      auto warmup =
          int_field(root, "warmup_frames", "the study", 0, kMaxFrames, kDefaultWarmupFrames);
      if (!warmup) return warmup.error();
      study.warmup_frames = *warmup;
    }
    const toml::array* conditions = root["condition"].as_array();
    if (!conditions || conditions->empty())
      return error_at(root.get("condition"),
                      "a study needs [[condition]] tables (one without [background]: the "
                      "baseline)");
    std::set<std::string> names;
    std::size_t baselines = 0;
    for (const toml::node& node : *conditions) {
      const toml::table* t = node.as_table();
      if (!t) return error_at(&node, "each condition must be a table ([[condition]])");
      GPUOVERLAP_TRY(only_keys(*t, {"name", "background", "control"}, "a condition"));
      auto cname = directory_name(*t, "name", "a condition", &node);
      if (!cname) return cname.error();
      if (!names.insert(*cname).second)
        return error_at(t->get("name"), "two conditions are named '" + *cname + "'");
      ConditionSpec condition{*cname, std::nullopt, false};
      if (const toml::node* control = t->get("control")) {
        const auto* text = control->as_string();
        if (!text || text->get() != "null")
          return error_at(control,
                          "condition '" + *cname +
                              "': control must be \"null\" (the baseline's settings run as a "
                              "condition of their own, an A/A test); a positive control is a "
                              "[condition.background] with unmanaged_threads");
        if (t->get("background"))
          return error_at(control, "condition '" + *cname +
                                       "': a null control has no [condition.background] (it "
                                       "runs the baseline's settings)");
        condition.null_control = true;
      } else if (const toml::node* bg = t->get("background")) {
        auto spec = parse_background(*bg, "[condition.background] of '" + *cname + "'", true);
        if (!spec) return spec.error();
        condition.background = *spec;
      } else {
        ++baselines;
      }
      study.conditions.push_back(std::move(condition));
    }
    if (baselines != 1)
      return error_at(conditions,
                      "a study needs exactly one condition without [background] and without "
                      "control = \"null\" (the baseline every other condition is compared "
                      "with); "
                      "this one has " +
                          std::to_string(baselines));
    return study;
  }

 private:
  static std::string barrier_error(const std::string& text) {
    return "unknown barrier '" + text +
           "' (none | legacy | split | uav | enhanced | enhanced-split)";
  }

  // A field naming one value of a set: parsed by `parse`, listed by `names` on error; `out`
  // is left alone when the key is absent.
  template <typename Value, typename Parse>
  Status named_field(const toml::table& t, std::string_view key, const std::string& where,
                     const toml::node* owner, Parse parse, const std::string& names,
                     Value& out) const {
    auto text = string_field(t, key, where, false, owner);
    if (!text) return text.error();
    if (text->empty()) return ok_status();
    auto parsed = parse(*text);
    if (!parsed)
      return error_at(t.get(key), "unknown " + std::string(key) + " '" + *text + "' in " + where +
                                      " (" + names + ")");
    out = *parsed;
    return ok_status();
  }

  // A D3D12 name field of a dependency table (masks join names with '|').
  template <typename Value, typename Parse>
  Status d3d12_field(const toml::table& t, std::string_view key, const std::string& where,
                     const toml::node* owner, Parse parse, const std::string& names,
                     std::optional<Value>& out) const {
    return named_field(t, key, where, owner, parse, names + "; masks join names with '|'", out);
  }

  // The table form of a dependency: { workload = ..., barrier = ..., and that barrier's
  // details }. Keys that do not belong to the chosen barrier kind are errors, not ignored.
  Status parse_dependency_table(const toml::table& t, const toml::node& node,
                                const std::string& named, BarrierRequest& request,
                                std::string& producer) {
    const std::string where = "a dependency of " + named;
    GPUOVERLAP_TRY(only_keys(t,
                             {"workload", "barrier", "split_policy", "reads_output", "state_before",
                              "state_after", "type", "sync_before", "sync_after", "access_before",
                              "access_after", "layout_before", "layout_after", "subresources"},
                             where));
    auto name = string_field(t, "workload", where, true, &node);
    if (!name) return name.error();
    producer = *name;
    auto barrier = string_field(t, "barrier", where, false, &node);
    if (!barrier) return barrier.error();
    if (!barrier->empty()) {
      auto parsed = parse_barrier_kind(*barrier);
      if (!parsed) return error_at(t.get("barrier"), barrier_error(*barrier));
      request.kind = *parsed;
    }
    auto policy = string_field(t, "split_policy", where, false, &node);
    if (!policy) return policy.error();
    if (!policy->empty()) {
      auto parsed = parse_split_policy(*policy);
      if (!parsed)
        return error_at(t.get("split_policy"), "unknown split_policy '" + *policy + "' (" +
                                                   names_list(kSplitPolicyNames) + ")");
      if (!is_split(request.kind))
        return error_at(t.get("split_policy"),
                        "split_policy applies to split and enhanced-split barriers, not '" +
                            std::string(to_string(request.kind)) + "'");
      request.split_policy = *parsed;
    }
    if (const toml::node* reads = t.get("reads_output")) {
      if (!reads->is_boolean())
        return error_at(reads, "'reads_output' in " + where + " must be true or false");
      request.reads_output = *reads->value<bool>();
    }
    GPUOVERLAP_TRY(d3d12_field(t, "state_before", where, &node, parse_resource_states,
                               resource_state_names(), request.state_before));
    GPUOVERLAP_TRY(d3d12_field(t, "state_after", where, &node, parse_resource_states,
                               resource_state_names(), request.state_after));
    GPUOVERLAP_TRY(d3d12_field(t, "type", where, &node, parse_barrier_type,
                               "global | buffer | texture", request.type));
    GPUOVERLAP_TRY(d3d12_field(t, "sync_before", where, &node, parse_barrier_sync,
                               barrier_sync_names(), request.sync_before));
    GPUOVERLAP_TRY(d3d12_field(t, "sync_after", where, &node, parse_barrier_sync,
                               barrier_sync_names(), request.sync_after));
    GPUOVERLAP_TRY(d3d12_field(t, "access_before", where, &node, parse_barrier_access,
                               barrier_access_names(), request.access_before));
    GPUOVERLAP_TRY(d3d12_field(t, "access_after", where, &node, parse_barrier_access,
                               barrier_access_names(), request.access_after));
    GPUOVERLAP_TRY(d3d12_field(t, "layout_before", where, &node, parse_barrier_layout,
                               barrier_layout_names(), request.layout_before));
    GPUOVERLAP_TRY(d3d12_field(t, "layout_after", where, &node, parse_barrier_layout,
                               barrier_layout_names(), request.layout_after));
    if (const toml::node* sub = t.get("subresources")) {
      if (request.kind == BarrierKind::none || request.kind == BarrierKind::uav)
        return error_at(sub, "subresources in " + where +
                                 " name what a transition covers; barrier '" +
                                 std::string(to_string(request.kind)) + "' has none");
      auto parsed = parse_subresources(*sub, where);
      if (!parsed) return parsed.error();
      request.subresources = *parsed;
    }
    const bool legacy_fields = request.state_before || request.state_after;
    const bool enhanced_fields = request.type || request.sync_before || request.sync_after ||
                                 request.access_before || request.access_after ||
                                 request.layout_before || request.layout_after;
    if (legacy_fields && request.kind != BarrierKind::legacy && request.kind != BarrierKind::split)
      return error_at(&node, "state_before/state_after in " + where +
                                 " describe legacy transitions; barrier is '" +
                                 std::string(to_string(request.kind)) + "'");
    if (enhanced_fields && !is_enhanced(request.kind))
      return error_at(&node, "type/sync_*/access_*/layout_* in " + where +
                                 " describe enhanced barriers; barrier is '" +
                                 std::string(to_string(request.kind)) + "'");
    return ok_status();
  }

  // subresources = { mips = [first, count], slices = [first, count] }: either key may be left
  // out (all mips, all slices). Whether the range fits the texture is the barrier planner's
  // rule (subresource-range), where the texture is known.
  Result<SubresourceRequest> parse_subresources(const toml::node& node, const std::string& where) {
    const std::string what = "'subresources' in " + where;
    const toml::table* table = node.as_table();
    if (!table)
      return error_at(&node, what +
                                 " must be a table: { mips = [first, count], slices = [first, "
                                 "count] }");
    GPUOVERLAP_TRY(only_keys(*table, {"mips", "slices"}, what));
    SubresourceRequest request;
    for (const char* key : {"mips", "slices"}) {
      const toml::node* value = table->get(key);
      if (!value) continue;
      const toml::array* pair = value->as_array();
      const std::string named = "'" + std::string(key) + "' of " + what;
      if (!pair || pair->size() != 2 || !(*pair)[0].is_integer() || !(*pair)[1].is_integer())
        return error_at(value, named + " must be [first, count], two integers");
      const std::int64_t first = *(*pair)[0].value<std::int64_t>();
      const std::int64_t count = *(*pair)[1].value<std::int64_t>();
      if (first < 0 || first >= kMaxSubresourceSpan)
        return error_at(value, named + ": first is " + std::to_string(first) +
                                   "; it must be 0 to " + std::to_string(kMaxSubresourceSpan - 1));
      if (count < 1 || count > kMaxSubresourceSpan)
        return error_at(value, named + ": count is " + std::to_string(count) +
                                   "; it must be 1 to " + std::to_string(kMaxSubresourceSpan));
      const SubresourceRequest::Span span{static_cast<std::uint32_t>(first),
                                          static_cast<std::uint32_t>(count)};
      (std::string_view(key) == "mips" ? request.mips : request.slices) = span;
    }
    return request;
  }

  Status parse_queues(const toml::table& root, Scenario& s) {
    const toml::node* queues_node = root.get("queues");
    if (!queues_node)
      return error_at(nullptr, "the scenario needs at least one [queues.NAME] table");
    const toml::table* queues = queues_node->as_table();
    if (!queues) return error_at(queues_node, "'queues' must be a table of [queues.NAME] tables");
    for (const auto& [key, value] : *queues) {
      const std::string where = "[queues." + printable_name(key.str()) + "]";
      if (const std::string problem = label_problem(key.str()); !problem.empty())
        return error_at(&value, "queue name '" + printable_name(key.str()) + "' " + problem);
      const toml::table* q = value.as_table();
      if (!q) return error_at(&value, where + " must be a table");
      GPUOVERLAP_TRY(only_keys(*q, {"type", "priority"}, where));
      QueueSpec spec;
      spec.name = std::string(key.str());
      auto type = string_field(*q, "type", where, true, &value);
      if (!type) return type.error();
      auto parsed_type = parse_queue_type(*type);
      if (!parsed_type)
        return error_at(q->get("type"),
                        "unknown queue type '" + *type + "' (" + names_list(kQueueTypeNames) + ")");
      spec.type = *parsed_type;
      auto priority = string_field(*q, "priority", where, false, &value);
      if (!priority) return priority.error();
      if (!priority->empty()) {
        auto parsed = parse_queue_priority(*priority);
        if (!parsed)
          return error_at(q->get("priority"), "unknown priority '" + *priority + "' (" +
                                                  names_list(kQueuePriorityNames) + ")");
        spec.priority = *parsed;
      }
      s.queues.push_back(std::move(spec));
    }
    if (s.queues.empty())
      return error_at(queues_node, "the scenario needs at least one [queues.NAME] table");
    // toml++ keeps tables sorted by key; the file's order is the one users expect in the
    // output, so restore it from the source lines.
    std::vector<std::pair<std::uint32_t, QueueSpec>> ordered;
    for (auto& q : s.queues)
      ordered.emplace_back(queues->get(q.name)->source().begin.line, std::move(q));
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    s.queues.clear();
    for (auto& [line, q] : ordered) s.queues.push_back(std::move(q));
    return ok_status();
  }

  // A copy's keys (`bytes`, `target`): it has no shader, so what sizes a dispatch or a draw
  // does not apply. It reads its upload buffer, or with `depends_on` (a readback) its one
  // producer's output, whose size finish_readbacks gives it. Into a declared texture's
  // subresource (`target`) it moves exactly that subresource's bytes.
  Status parse_copy(const toml::table& w, const std::string& named, const Scenario& s,
                    WorkloadSpec& spec) {
    for (const char* key : {"groups", "iterations"})
      if (const toml::node* given = w.get(key))
        return error_at(given, named + " is a copy: '" + key +
                                   "' does not apply (a copy moves 'bytes' from its upload "
                                   "buffer, or from what it depends on, into its output)");
    spec.groups = spec.iterations = 0;  // no threads: nothing reads them for a copy
    if (const toml::node* source = w.get("depends_on")) {
      if (const toml::node* target = w.get("target"))
        return error_at(target, named +
                                    " reads back what it depends on into a buffer: 'target' "
                                    "does not apply (a copy writes a texture from its upload "
                                    "buffer only)");
      const toml::array* list = source->as_array();
      if (list && list->size() != 1)
        return error_at(source, named +
                                    " is a copy: it reads back one workload's output, so "
                                    "'depends_on' names exactly one");
      return ok_status();  // its bytes are its source's (finish_readbacks)
    }
    if (const toml::node* target = w.get("target")) {
      GPUOVERLAP_TRY(parse_written_target(*target, named, s, spec));
      if (spec.target->discard)
        return error_at(target, named +
                                    " is a copy: 'discard' does not apply (D3D12 discards "
                                    "into a render-target, depth or unordered-access "
                                    "layout, and a copy writes in COPY_DEST)");
      const TextureSpec& texture = s.textures[spec.target->texture];
      if (is_depth(texture.format))
        return error_at(target, named + " copies into '" + texture.name +
                                    "', which is d32: a depth texture is written by draws "
                                    "only (copies write color textures and buffers)");
      spec.bytes = subresource_bytes(texture, spec.target->mip);
      if (const toml::node* given = w.get("bytes");
          given && given->value<std::int64_t>() != static_cast<std::int64_t>(spec.bytes))
        return error_at(given, named + " copies into mip " + std::to_string(spec.target->mip) +
                                   " of '" + texture.name + "', which takes " +
                                   std::to_string(spec.bytes) +
                                   " bytes: leave 'bytes' out or give exactly that");
      return ok_status();
    }
    static_assert(kMaxCopyBytes <= UINT32_MAX, "int_field reads 32-bit values");
    auto bytes = int_field(w, "bytes", named, kMinCopyBytes, kMaxCopyBytes,
                           static_cast<std::uint32_t>(kDefaultCopyBytes));
    if (!bytes) return bytes.error();
    if (*bytes % 4 != 0)
      return error_at(w.get("bytes"), "'bytes' of " + named + " is " + std::to_string(*bytes) +
                                          ", not a whole number of 4-byte words");
    spec.bytes = *bytes;
    return ok_status();
  }

  // `target` of a workload that writes a declared texture's subresource (a draw, a dispatch,
  // a copy), with the rule every writer shares.
  Status parse_written_target(const toml::node& target, const std::string& named, const Scenario& s,
                              WorkloadSpec& spec) {
    auto parsed = parse_target(target, s, named);
    if (!parsed) return parsed.error();
    const TextureSpec& texture = s.textures[parsed->texture];
    // Each frame starts with the texture's subresources restored on one queue; a writer on
    // another would race that restore. Several writers may write one subresource, each
    // after a read of the one before (the planner's target-rewrite rule).
    for (const WorkloadSpec& other : s.workloads)
      if (other.target && other.target->texture == parsed->texture && other.queue != spec.queue)
        return error_at(&target, named + " writes '" + texture.name + "' on queue '" +
                                     s.queues[spec.queue].name + "', '" + other.name +
                                     "' on queue '" + s.queues[other.queue].name +
                                     "': a texture's writers share one queue");
    spec.target = *parsed;
    return ok_status();
  }

  // A dispatch's or a draw's keys: `groups`, `iterations` and `target`.
  Status parse_shader_work(const toml::table& w, const std::string& named, const Scenario& s,
                           WorkloadSpec& spec) {
    // A dispatch's groups are bounded by the workgroups one dispatch may run, a draw's rows
    // by a render target's height.
    auto groups = int_field(w, "groups", named, 1,
                            spec.kind == WorkloadKind::compute ? kMaxComputeGroups : kMaxGroups,
                            kDefaultGroups);
    if (!groups) return groups.error();
    spec.groups = *groups;
    auto iterations = int_field(w, "iterations", named, 1, kMaxIterations, kDefaultIterations);
    if (!iterations) return iterations.error();
    spec.iterations = *iterations;
    if (const toml::node* target = w.get("target")) {
      const bool dispatch = spec.kind == WorkloadKind::compute;
      if (w.get("groups"))
        return error_at(w.get("groups"),
                        named +
                            (dispatch ? " writes a texture: it runs a thread per pixel of"
                                      : " renders into a texture: its pixels are") +
                            " the target mip's, so 'groups' does not apply");
      GPUOVERLAP_TRY(parse_written_target(*target, named, s, spec));
      const TextureTarget* parsed = &*spec.target;
      const TextureSpec& texture = s.textures[parsed->texture];
      if (dispatch) {
        // An unordered-access store of one float: perlin.hlsl's RWTexture2D<float>, whose
        // SPIR-V names the R32f format (glslang cannot leave it unknown).
        if (texture.format != TextureFormat::r32f)
          return error_at(target, named + " is a dispatch writing '" + texture.name +
                                      "', which is " + std::string(to_string(texture.format)) +
                                      ": a dispatch writes r32f textures only (a draw renders "
                                      "into any format)");
        const std::uint64_t pixels = std::uint64_t{mip_size(texture.width, parsed->mip)} *
                                     mip_size(texture.height, parsed->mip);
        if (pixels / kThreadsPerDispatchGroup > kMaxDispatchWorkgroupsX)
          return error_at(
              target, named + " writes mip " + std::to_string(parsed->mip) + " of '" +
                          texture.name + "', " + std::to_string(pixels) + " pixels: more than " +
                          std::to_string(kMaxDispatchWorkgroupsX) + " groups of " +
                          std::to_string(kThreadsPerDispatchGroup) + " threads in one dispatch");
        if (pixels % kThreadsPerDispatchGroup != 0)
          return error_at(target, named + " writes mip " + std::to_string(parsed->mip) + " of '" +
                                      texture.name + "', " + std::to_string(pixels) +
                                      " pixels: a dispatch runs a thread per pixel in groups "
                                      "of " +
                                      std::to_string(kThreadsPerDispatchGroup) +
                                      ", so the mip's pixels must be a multiple of that");
      }
    }

    return ok_status();
  }

  // [[texture]]: name, format, width, height, mips, slices (resources/texture.h).
  Status parse_textures(const toml::table& root, Scenario& s) {
    const toml::node* node = root.get("texture");
    if (!node) return ok_status();
    const toml::array* array = node->as_array();
    if (!array) return error_at(node, "'texture' must be an array of [[texture]] tables");
    if (array->size() > kMaxTexturesPerScenario)
      return error_at(node, "at most " + std::to_string(kMaxTexturesPerScenario) +
                                " textures per scenario, got " + std::to_string(array->size()));
    for (const toml::node& element : *array) {
      const toml::table* t = element.as_table();
      if (!t) return error_at(&element, "each [[texture]] must be a table");
      const std::string where = "[[texture]] #" + std::to_string(s.textures.size() + 1);
      GPUOVERLAP_TRY(
          only_keys(*t, {"name", "format", "width", "height", "mips", "slices", "heap"}, where));
      TextureSpec spec;
      auto name = string_field(*t, "name", where, true, &element);
      if (!name) return name.error();
      if (const std::string problem = label_problem(*name); !problem.empty())
        return error_at(t->get("name"),
                        where + ": name '" + printable_name(*name) + "' " + problem);
      for (const auto& other : s.textures)
        if (other.name == *name)
          return error_at(t->get("name"), "duplicate texture name '" + *name + "'");
      spec.name = *name;
      const std::string named = "texture '" + spec.name + "'";
      auto format = string_field(*t, "format", named, false, &element);
      if (!format) return format.error();
      if (!format->empty()) {
        auto parsed = parse_texture_format(*format);
        if (!parsed)
          return error_at(t->get("format"), "unknown format '" + *format + "' (" +
                                                names_list(kTextureFormatNames) + ")");
        spec.format = *parsed;
      }
      for (const char* key : {"width", "height"})
        if (!t->get(key)) return error_at(&element, named + " needs '" + key + "'");
      auto width = int_field(*t, "width", named, 1, kMaxTextureSize, 1);
      if (!width) return width.error();
      auto height = int_field(*t, "height", named, 1, kMaxTextureSize, 1);
      if (!height) return height.error();
      spec.width = *width;
      spec.height = *height;
      const std::uint32_t full = full_mip_count(spec.width, spec.height);
      auto mips = int_field(*t, "mips", named, 1, full, 1);
      if (!mips) return mips.error();
      auto slices = int_field(*t, "slices", named, 1, kMaxTextureSlices, 1);
      if (!slices) return slices.error();
      spec.mips = *mips;
      spec.slices = *slices;
      if (texture_bytes(spec) > kMaxTextureBytes)
        return error_at(&element, named + " takes " + std::to_string(texture_bytes(spec) >> 20) +
                                      " MiB; at most " + std::to_string(kMaxTextureBytes >> 20) +
                                      " MiB per texture");
      auto heap = string_field(*t, "heap", named, false, &element);
      if (!heap) return heap.error();
      if (t->get("heap")) {
        if (const std::string problem = label_problem(*heap); !problem.empty())
          return error_at(t->get("heap"),
                          named + ": heap name '" + printable_name(*heap) + "' " + problem);
        // A hand-over makes the whole texture undefined and brings it back in one barrier; a
        // texture of several subresources would need one per subresource state.
        if (spec.subresources() != 1)
          return error_at(t->get("heap"), named + " is placed in heap '" + *heap + "' with " +
                                              std::to_string(spec.mips) + " mip(s) and " +
                                              std::to_string(spec.slices) +
                                              " slice(s): a texture in a heap has one of each");
        spec.heap = *heap;
      }
      s.textures.push_back(std::move(spec));
      heap_nodes_.push_back(t->get("heap"));
    }
    // A heap of one texture aliases nothing: most likely a misspelt heap name.
    for (std::size_t i = 0; i < s.textures.size(); ++i) {
      const std::string& heap = s.textures[i].heap;
      if (heap.empty()) continue;
      const auto sharing = std::count_if(s.textures.begin(), s.textures.end(),
                                         [&](const TextureSpec& t) { return t.heap == heap; });
      if (sharing == 1)
        return error_at(heap_nodes_[i], "texture '" + s.textures[i].name +
                                            "' is the only one in heap '" + heap +
                                            "': textures in one heap alias each other, so a heap "
                                            "holds two or more");
    }
    return ok_status();
  }

  // target = { texture = NAME, mip = M, slice = S, discard = BOOL } on a draw or a dispatch
  // (mip and slice default to 0, discard to false).
  Result<TextureTarget> parse_target(const toml::node& node, const Scenario& s,
                                     const std::string& named) {
    const std::string where = "'target' of " + named;
    const toml::table* t = node.as_table();
    if (!t)
      return error_at(&node, where + " must be a table: { texture = NAME, mip = M, slice = S }");
    GPUOVERLAP_TRY(only_keys(*t, {"texture", "mip", "slice", "discard"}, where));
    auto texture = string_field(*t, "texture", where, true, &node);
    if (!texture) return texture.error();
    TextureTarget target{s.textures.size(), 0, 0};
    for (std::size_t i = 0; i < s.textures.size(); ++i)
      if (s.textures[i].name == *texture) target.texture = i;
    if (target.texture == s.textures.size())
      return error_at(t->get("texture"),
                      where + " names undeclared texture '" + printable_name(*texture) + "'");
    const TextureSpec& spec = s.textures[target.texture];
    auto mip = int_field(
        *t, "mip",
        where + " (texture '" + spec.name + "' has " + std::to_string(spec.mips) + " mips)", 0,
        spec.mips - 1, 0);
    if (!mip) return mip.error();
    auto slice = int_field(
        *t, "slice",
        where + " (texture '" + spec.name + "' has " + std::to_string(spec.slices) + " slices)", 0,
        spec.slices - 1, 0);
    if (!slice) return slice.error();
    target.mip = *mip;
    target.slice = *slice;
    if (const toml::node* discard = t->get("discard")) {
      const auto* value = discard->as_boolean();
      if (!value) return error_at(discard, where + ": 'discard' must be true or false");
      target.discard = value->get();
    }
    return target;
  }

  Status parse_workloads(const toml::table& root, Scenario& s) {
    const toml::node* node = root.get("workload");
    if (!node) return error_at(nullptr, "the scenario needs at least one [[workload]]");
    const toml::array* array = node->as_array();
    if (!array || array->empty())
      return error_at(node, "'workload' must be a non-empty array of [[workload]] tables");
    if (array->size() > kMaxWorkloadsPerScenario)
      return error_at(node, "at most " + std::to_string(kMaxWorkloadsPerScenario) +
                                " workloads per scenario, got " + std::to_string(array->size()));
    // Dependencies are resolved after every name is known.
    struct PendingDependency {
      std::string producer;
      BarrierRequest barrier;
      const toml::node* node;
    };
    std::vector<std::vector<PendingDependency>> pending;
    for (const toml::node& element : *array) {
      const toml::table* w = element.as_table();
      if (!w) return error_at(&element, "each [[workload]] must be a table");
      const std::string where = "[[workload]] #" + std::to_string(s.workloads.size() + 1);
      GPUOVERLAP_TRY(only_keys(
          *w, {"name", "queue", "kind", "groups", "iterations", "target", "depends_on", "bytes"},
          where));
      WorkloadSpec spec;
      auto name = string_field(*w, "name", where, true, &element);
      if (!name) return name.error();
      if (const std::string problem = label_problem(*name); !problem.empty())
        return error_at(w->get("name"),
                        where + ": name '" + printable_name(*name) + "' " + problem);
      for (const auto& other : s.workloads)
        if (other.name == *name)
          return error_at(w->get("name"), "duplicate workload name '" + *name + "'");
      spec.name = *name;
      const std::string named = "workload '" + spec.name + "'";
      auto queue = string_field(*w, "queue", named, true, &element);
      if (!queue) return queue.error();
      bool found = false;
      for (std::size_t q = 0; q < s.queues.size(); ++q)
        if (s.queues[q].name == *queue) {
          spec.queue = q;
          found = true;
        }
      if (!found)
        return error_at(w->get("queue"),
                        named + " uses undeclared queue '" + printable_name(*queue) + "'");
      auto kind = string_field(*w, "kind", named, false, &element);
      if (!kind) return kind.error();
      if (!kind->empty()) {
        auto parsed = parse_workload_kind(*kind);
        if (!parsed)
          return error_at(w->get("kind"),
                          "unknown kind '" + *kind + "' (" + names_list(kWorkloadKindNames) + ")");
        spec.kind = *parsed;
      }
      if (spec.kind == WorkloadKind::graphics && s.queues[spec.queue].type != QueueType::direct)
        return error_at(w->get("kind"), named + " is graphics but queue '" + *queue +
                                            "' is a compute queue (only direct queues draw)");
      if (spec.kind == WorkloadKind::copy) {
        GPUOVERLAP_TRY(parse_copy(*w, named, s, spec));
      } else {
        if (const toml::node* given = w->get("bytes"))
          return error_at(given, named + " is not a copy: 'bytes' sizes a copy only");
        GPUOVERLAP_TRY(parse_shader_work(*w, named, s, spec));
      }

      pending.emplace_back();
      if (const toml::node* deps = w->get("depends_on")) {
        const toml::array* list = deps->as_array();
        if (!list) return error_at(deps, "'depends_on' of " + named + " must be an array");
        for (const toml::node& dep : *list) {
          PendingDependency d{{}, {}, &dep};
          d.barrier.kind = s.default_barrier;
          d.barrier.split_policy = s.default_split_policy;
          if (dep.is_string()) {
            d.producer = std::string(*dep.value<std::string_view>());
          } else if (const toml::table* t = dep.as_table()) {
            GPUOVERLAP_TRY(parse_dependency_table(*t, dep, named, d.barrier, d.producer));
          } else {
            return error_at(&dep, "each dependency of " + named +
                                      " is a workload name or { workload = ..., barrier = ... }");
          }
          pending.back().push_back(std::move(d));
        }
      }
      lines_.push_back(&element);
      s.workloads.push_back(std::move(spec));
    }

    for (std::size_t c = 0; c < s.workloads.size(); ++c) {
      const std::string named = "workload '" + s.workloads[c].name + "'";
      for (const PendingDependency& d : pending[c]) {
        std::size_t producer = s.workloads.size();
        for (std::size_t p = 0; p < s.workloads.size(); ++p)
          if (s.workloads[p].name == d.producer) producer = p;
        if (producer == s.workloads.size())
          return error_at(
              d.node, named + " depends on unknown workload '" + printable_name(d.producer) + "'");
        if (producer == c) return error_at(d.node, named + " depends on itself");
        for (const auto& existing : s.workloads[c].depends_on)
          if (existing.producer == producer)
            return error_at(d.node, named + " lists '" + d.producer + "' twice in depends_on");
        s.workloads[c].depends_on.push_back({producer, d.barrier});
        dependency_nodes_.resize(s.workloads.size());
        dependency_nodes_[c].push_back(d.node);
      }
    }
    return finish_readbacks(s);
  }

  // Readback copies (a copy with depends_on) take their bytes from their source: a dispatch's
  // output buffer, a draw's render target or declared texture's subresource, an upload copy's
  // output. Their own output is a readback buffer in host memory, which no workload reads.
  Status finish_readbacks(Scenario& s) {
    for (std::size_t c = 0; c < s.workloads.size(); ++c) {
      WorkloadSpec& copy = s.workloads[c];
      const std::string named = "workload '" + copy.name + "'";
      for (std::size_t i = 0; i < copy.depends_on.size(); ++i) {
        const WorkloadSpec& producer = s.workloads[copy.depends_on[i].producer];
        if (is_readback(producer))
          return error_at(dependency_nodes_[c][i],
                          named + " depends on '" + producer.name +
                              "', a readback: its output is read by the CPU, not by workloads");
      }
      if (!is_readback(copy)) continue;
      const DependencySpec& source = copy.depends_on.front();
      if (source.barrier.reads_output == false || source.barrier.kind == BarrierKind::none)
        return error_at(dependency_nodes_[c][0],
                        named + " is a copy that reads back '" + s.workloads[source.producer].name +
                            "': it reads that output, behind a barrier (not 'none', and "
                            "reads_output stays true)");
      copy.bytes = output_bytes(s, source.producer);
      const toml::node* given = lines_[c]->as_table()->get("bytes");
      if (given && given->value<std::int64_t>() != static_cast<std::int64_t>(copy.bytes))
        return error_at(given, named + " reads back '" + s.workloads[source.producer].name +
                                   "', whose output takes " + std::to_string(copy.bytes) +
                                   " bytes: leave 'bytes' out or give exactly that");
    }
    return ok_status();
  }

  // Cycles of dependencies first (the most useful message), then producers declared after
  // their consumer on one queue, then the frame plan: barrier rules and waits across queues
  // that could never be signalled.
  Status check_graph(Scenario& s) {
    enum Mark { unvisited, active, done };
    std::vector<Mark> marks(s.workloads.size(), unvisited);
    std::vector<std::size_t> stack;
    std::function<Status(std::size_t)> visit = [&](std::size_t w) -> Status {
      marks[w] = active;
      stack.push_back(w);
      for (const auto& d : s.workloads[w].depends_on) {
        if (marks[d.producer] == active) {
          std::string cycle;
          bool in = false;
          for (std::size_t v : stack) {
            in = in || v == d.producer;
            if (in) cycle += s.workloads[v].name + " -> ";
          }
          cycle += s.workloads[d.producer].name;
          return error_at(lines_[d.producer], "dependency cycle: " + cycle);
        }
        if (marks[d.producer] == unvisited) GPUOVERLAP_TRY(visit(d.producer));
      }
      stack.pop_back();
      marks[w] = done;
      return ok_status();
    };
    for (std::size_t w = 0; w < s.workloads.size(); ++w)
      if (marks[w] == unvisited) GPUOVERLAP_TRY(visit(w));

    for (std::size_t c = 0; c < s.workloads.size(); ++c) {
      const WorkloadSpec& consumer = s.workloads[c];
      for (const auto& d : consumer.depends_on) {
        const WorkloadSpec& producer = s.workloads[d.producer];
        if (producer.queue == consumer.queue && d.producer > c)
          return error_at(lines_[c],
                          "workload '" + consumer.name + "' depends on '" + producer.name +
                              "', which is declared after it on the same queue; "
                              "declare producers first (work is recorded in file order)");
      }
    }

    // A texture in a heap holds it from a write on (the hand-over before its first write): one
    // nothing writes would never hold it.
    for (std::size_t t = 0; t < s.textures.size(); ++t)
      if (!s.textures[t].heap.empty() &&
          std::none_of(s.workloads.begin(), s.workloads.end(),
                       [&](const WorkloadSpec& w) { return w.target && w.target->texture == t; }))
        return error_at(heap_nodes_[t], "texture '" + s.textures[t].name + "' in heap '" +
                                            s.textures[t].heap +
                                            "' is not written by any workload: a texture in a "
                                            "heap takes its memory at its first write");

    // Barrier rules and fences: the frame plan the executor will follow.
    attach_frame_plan(s);
    for (const FrameFinding& f : s.plan->findings) {
      const WorkloadSpec& consumer = s.workloads[f.consumer];
      const std::string producer =
          f.dependency < consumer.depends_on.size()
              ? s.workloads[consumer.depends_on[f.dependency].producer].name
              : std::string("?");
      const std::string about = f.dependency == FrameFinding::kNoDependency
                                    ? "workload '" + consumer.name + "'"
                                    : "dependency '" + producer + "' -> '" + consumer.name + "'";
      const std::string text = "scenario '" + s.name + "', " + about + ": " + f.finding.message +
                               " [" + f.finding.rule + "]";
      const toml::node* node = f.consumer < dependency_nodes_.size() &&
                                       f.dependency < dependency_nodes_[f.consumer].size()
                                   ? dependency_nodes_[f.consumer][f.dependency]
                                   : lines_[f.consumer];
      if (f.finding.severity == BarrierFinding::Severity::error) return error_at(node, text);
      const std::uint32_t line = node ? node->source().begin.line : 0;
      s.warnings.push_back(source_ + (line ? ":" + std::to_string(line) : std::string()) +
                           ": warning: " + text);
    }
    return ok_status();
  }

  std::string source_;
  std::vector<std::vector<const toml::node*>> dependency_nodes_;  // [consumer][dependency]
  std::vector<const toml::node*> lines_;                          // per workload, for messages
  std::vector<const toml::node*> heap_nodes_;  // per texture: its heap key (null: none)
};

}  // namespace

Result<Scenario> parse_scenario(std::string_view toml_text, const std::string& source_name) {
  Parser parser(source_name);
  return parser.parse(toml_text);
}

namespace {

// True when the TOML text has any of the top-level keys; false for a syntax error, which the
// parser of the file's kind then reports with its line.
bool has_top_level_key(std::string_view toml_text, std::initializer_list<std::string_view> keys) {
  try {
    const toml::table root = toml::parse(toml_text);
    for (std::string_view key : keys)
      if (root.get(key)) return true;
    return false;
  } catch (const toml::parse_error&) {
    return false;
  }
}

}  // namespace

bool is_study(std::string_view toml_text) {
  return has_top_level_key(toml_text, {"foreground", "condition"});
}

bool is_preemption(std::string_view toml_text) {
  return has_top_level_key(toml_text, {"preemption"});
}

Result<std::vector<Scenario>> parse_preemption(std::string_view toml_text,
                                               const std::string& source_name) {
  Parser parser(source_name);
  return parser.parse_preemption_text(toml_text);
}

Result<StudySpec> parse_study(std::string_view toml_text, const std::string& source_name) {
  Parser parser(source_name);
  return parser.parse_study_text(toml_text);
}

std::uint32_t frames_per_round(std::uint32_t total, std::uint32_t rounds) {
  return rounds <= 1 ? total : (total + rounds - 1) / rounds;
}

std::vector<Scenario> expand_study(const StudySpec& study, const Scenario& foreground) {
  std::vector<Scenario> out;
  // A condition this host cannot give what it asks is reported, never run under another
  // setting; checked once, before any round.
  std::vector<std::pair<std::string, std::string>> not_run;
  std::set<std::string> skipped;
  bool fixes_allocator = false;
  for (const ConditionSpec& c : study.conditions)
    if (c.background) {
      if (auto why = background::why_not_here(*c.background)) {
        not_run.emplace_back(c.name, *why);
        skipped.insert(c.name);
      } else if (c.background->allocator == background::Allocator::keep) {
        fixes_allocator = true;
      }
    }
  const std::uint32_t total = study.frames.value_or(foreground.frames);
  for (std::uint32_t round = 1; round <= study.rounds; ++round) {
    std::vector<const ConditionSpec*> order;
    for (const ConditionSpec& c : study.conditions)
      if (!skipped.contains(c.name)) order.push_back(&c);
    if (round % 2 == 0) std::reverse(order.begin(), order.end());
    for (const ConditionSpec* c : order) {
      Scenario s = foreground;
      s.name = study.name + "/" + c->name;
      if (study.rounds > 1) s.name += "/round-" + std::to_string(round);
      s.study = study.name;
      s.condition = c->name;
      s.round = round;
      s.rounds = study.rounds;
      s.study_budget_s = study.rounds > 1 ? study.budget_s : 0;
      s.study_max_rounds = study.max_rounds;
      s.study_round_ms = study.round_ms;
      s.description = study.description + " [condition " + c->name + "; foreground " +
                      foreground.name + ": " + foreground.description + "]";
      s.source = study.source + " (foreground " + foreground.source + ")";
      s.frames = frames_per_round(total, study.rounds);
      if (study.warmup_frames) s.warmup_frames = *study.warmup_frames;
      s.background = c->background;
      s.null_control = c->null_control;
      s.study_not_run = not_run;
      s.study_fixes_allocator = fixes_allocator;
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<Scenario> next_study_round(const std::vector<Scenario>& last_round) {
  std::vector<Scenario> out(last_round.rbegin(), last_round.rend());
  for (Scenario& s : out) {
    s.round += 1;
    s.name = s.study + "/" + s.condition + "/round-" + std::to_string(s.round);
  }
  return out;
}

Result<Scenario> load_scenario_file(const std::string& path) {
  auto text = read_input_file(path, kMaxScenarioFileBytes);
  if (!text) return text.error().with_context("scenario file ");
  return parse_scenario(*text, path);
}

}  // namespace gpuoverlap
