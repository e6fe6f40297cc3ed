#include <toml++/toml.h>

#include <algorithm>
#include <functional>

#include "barriers/d3d12_names.h"
#include "core/input_file.h"
#include "scenarios/frame_plan.h"
#include "scenarios/names.h"
#include "scenarios/scenario.h"
#include "scenarios/scenario_grammar.h"

namespace gpuoverlap {

namespace scenario_grammar {

Result<Scenario> ScenarioParser::parse(std::string_view text) {
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
    auto spec = parse_background_table(*this, *node, "[background]");
    if (!spec) return spec.error();
    s.background = *spec;
  }
  if (const toml::node* node = root.get("cpu")) {
    auto spec = parse_cpu_table(*this, *node, "[cpu]");
    if (!spec) return spec.error();
    s.cpu = *spec;
  }
  return s;
}

std::string ScenarioParser::barrier_error(const std::string& text) {
  return "unknown barrier '" + text + "' (none | legacy | split | uav | enhanced | enhanced-split)";
}

Status ScenarioParser::parse_queues(const toml::table& root, Scenario& s) {
  const toml::node* queues_node = root.get("queues");
  if (!queues_node) return error_at(nullptr, "the scenario needs at least one [queues.NAME] table");
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

// Cycles of dependencies first (the most useful message), then producers declared after
// their consumer on one queue, then the frame plan: barrier rules and waits across queues
// that could never be signalled.
Status ScenarioParser::check_graph(Scenario& s) {
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
        return error_at(lines_[c], "workload '" + consumer.name + "' depends on '" + producer.name +
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
    const std::string producer = f.dependency < consumer.depends_on.size()
                                     ? s.workloads[consumer.depends_on[f.dependency].producer].name
                                     : std::string("?");
    const std::string about = f.dependency == FrameFinding::kNoDependency
                                  ? "workload '" + consumer.name + "'"
                                  : "dependency '" + producer + "' -> '" + consumer.name + "'";
    const std::string text = "scenario '" + s.name + "', " + about + ": " + f.finding.message +
                             " [" + f.finding.rule + "]";
    const toml::node* node =
        f.consumer < dependency_nodes_.size() && f.dependency < dependency_nodes_[f.consumer].size()
            ? dependency_nodes_[f.consumer][f.dependency]
            : lines_[f.consumer];
    if (f.finding.severity == BarrierFinding::Severity::error) return error_at(node, text);
    const std::uint32_t line = node ? node->source().begin.line : 0;
    s.warnings.push_back(source_ + (line ? ":" + std::to_string(line) : std::string()) +
                         ": warning: " + text);
  }
  return ok_status();
}

}  // namespace scenario_grammar

Result<Scenario> parse_scenario(std::string_view toml_text, const std::string& source_name) {
  scenario_grammar::ScenarioParser parser(source_name);
  return parser.parse(toml_text);
}

Result<Scenario> load_scenario_file(const std::string& path) {
  auto text = read_input_file(path, kMaxScenarioFileBytes);
  if (!text) return text.error().with_context("scenario file ");
  return parse_scenario(*text, path);
}

}  // namespace gpuoverlap
