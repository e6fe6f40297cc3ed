#include <fmt/format.h>

#include <thread>

#include "core/cpu_affinity.h"
#include "core/thread_policy.h"
#include "scenarios/names.h"
#include "scenarios/scenario_grammar.h"

namespace gpuoverlap::scenario_grammar {

namespace {

class BackgroundGrammar : public FieldReader {
 public:
  using FieldReader::FieldReader;

  // [background]: docs/scenario-format.md, "Background work".
  // In a study (`in_study`), a policy of the other OS is not a mistake in the file: the study
  // reports that condition as not run here (why_not_here), so one preset serves both.
  Result<background::BackgroundSpec> parse_background(const toml::node& node,
                                                      const std::string& where,
                                                      bool in_study) const {
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
                              "idle_spinners",
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
          {"idle_spinners", &spec.idle_spinners},
          {"developer_mode", &spec.developer_mode}}) {
      auto v = bool_field(*t, key, where, *out);
      if (!v) return v.error();
      *out = *v;
    }
    GPUOVERLAP_TRY(check_combinations(node, *t, where, spec));
    return spec;
  }

 private:
  // Combinations the runtime or the workflow would refuse, refused before any GPU work.
  Status check_combinations(const toml::node& node, const toml::table& table,
                            const std::string& where,
                            const background::BackgroundSpec& spec) const {
    using namespace background;
    const toml::table* t = &table;
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
    if (spec.idle_spinners) {
      // The negative control runs no compiles: nothing of the processor's or the positive
      // control's applies.
      for (std::string_view key :
           {"mode", "action", "action_every_frame", "workflow", "max_concurrent", "policy",
            "developer_mode", "bind_committed", "cpus", "allocator", "cgroup_idle", "dispatch",
            "commit_at_frame", "unmanaged_threads", "tasks", "alternate_frames"})
        if (t->get(key))
          return error_at(t->get(key),
                          where + ": '" + std::string(key) +
                              "' does not apply with idle_spinners (the negative control runs "
                              "no compiles: an idle-priority thread per foreground CPU that "
                              "allocates, frees and touches memory of its own (no system call))");
    }
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
    return ok_status();
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
};

}  // namespace

Result<background::BackgroundSpec> parse_background_table(const FieldReader& fields,
                                                          const toml::node& node,
                                                          const std::string& where, bool in_study) {
  return BackgroundGrammar(fields.source()).parse_background(node, where, in_study);
}

}  // namespace gpuoverlap::scenario_grammar
