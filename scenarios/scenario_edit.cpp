#include "scenarios/scenario_edit.h"

#include <fmt/format.h>

#include <charconv>

#include "core/enum_names.h"
#include "scenarios/scenario_toml.h"

namespace gpuoverlap {

namespace {

constexpr std::string_view kEditSource = "the edited scenario";

struct KindWord {
  Edit::Kind kind;
  std::string_view word;
};
constexpr KindWord kKindWords[] = {
    {Edit::Kind::enable, "enable"},     {Edit::Kind::disable, "disable"},
    {Edit::Kind::groups, "groups"},     {Edit::Kind::iterations, "iterations"},
    {Edit::Kind::queue, "queue"},       {Edit::Kind::depend, "depend"},
    {Edit::Kind::undepend, "undepend"}, {Edit::Kind::barrier, "barrier"},
    {Edit::Kind::priority, "priority"}, {Edit::Kind::timestamps, "timestamps"},
};

std::string edit_word(std::string_view name) {
  const bool plain = !name.empty() && name.find_first_of(" \t\"\\") == std::string_view::npos;
  if (plain) return std::string(name);
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Words separated by blanks; a double-quoted word may hold blanks, \" and \\.
Result<std::vector<std::string>> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    std::string word;
    if (line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        const char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < line.size()) {
          word += line[i++];
          continue;
        }
        word += c;
      }
      if (!closed) return make_error("a quoted name is not closed");
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') word += line[i++];
    }
    words.push_back(std::move(word));
  }
  return words;
}

std::size_t find_workload(const Scenario& s, const std::string& name) {
  for (std::size_t w = 0; w < s.workloads.size(); ++w)
    if (s.workloads[w].name == name) return w;
  return s.workloads.size();
}

std::size_t find_queue(const Scenario& s, const std::string& name) {
  for (std::size_t q = 0; q < s.queues.size(); ++q)
    if (s.queues[q].name == name) return q;
  return s.queues.size();
}

// The parser's message without "the edited scenario:<line>: ": the line is of a file the user
// never sees.
Error without_location(const Error& error) {
  std::string message = error.message;
  if (message.rfind(kEditSource, 0) == 0) {
    std::size_t at = kEditSource.size();
    if (at < message.size() && message[at] == ':') ++at;
    while (at < message.size() && std::isdigit(static_cast<unsigned char>(message[at]))) ++at;
    if (at < message.size() && message[at] == ':') ++at;
    while (at < message.size() && message[at] == ' ') ++at;
    message = message.substr(at);
  }
  return make_error(message);
}

}  // namespace

EditableScenario editable(const Scenario& running) {
  return {running, std::vector<bool>(running.workloads.size(), true)};
}

std::string describe(const Edit& e) {
  for (const KindWord& k : kKindWords) {
    if (k.kind != e.kind) continue;
    std::string out(k.word);
    switch (e.kind) {
      case Edit::Kind::enable:
      case Edit::Kind::disable:
        return out + " " + edit_word(e.workload);
      case Edit::Kind::groups:
      case Edit::Kind::iterations:
        return fmt::format("{} {} {}", out, edit_word(e.workload), e.number);
      case Edit::Kind::queue:
      case Edit::Kind::undepend:
        return fmt::format("{} {} {}", out, edit_word(e.workload), edit_word(e.other));
      case Edit::Kind::depend:
      case Edit::Kind::barrier:
        return fmt::format("{} {} {} {}", out, edit_word(e.workload), edit_word(e.other),
                           to_string(e.barrier));
      case Edit::Kind::priority:
        return fmt::format("{} {} {}", out, edit_word(e.other), to_string(e.priority));
      case Edit::Kind::timestamps:
        return out + (e.on ? " on" : " off");
    }
  }
  return "?";
}

Result<Edit> parse_edit(std::string_view line, BarrierKind scenario_default) {
  auto words = split_words(line);
  if (!words) return words.error();
  if (words->empty()) return make_error("an empty edit");
  Edit e;
  const std::string& verb = (*words)[0];
  bool known = false;
  std::string verbs;
  for (const KindWord& k : kKindWords) {
    verbs += (verbs.empty() ? "" : " | ") + std::string(k.word);
    if (k.word == verb) e.kind = k.kind, known = true;
  }
  if (!known) return make_error("unknown edit '" + verb + "' (" + verbs + ")");
  const std::size_t args = words->size() - 1;
  auto arity = [&](std::size_t low, std::size_t high, std::string_view form) -> Status {
    if (args < low || args > high)
      return make_error(fmt::format("'{}' takes {}: {}", verb, form, std::string(line)));
    return ok_status();
  };
  auto number = [&](const std::string& text) -> Result<std::uint32_t> {
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
      return make_error("'" + text + "' is not a whole number of 0 or more");
    return value;
  };
  auto barrier = [&](const std::string& text) -> Result<BarrierKind> {
    auto kind = parse_barrier_kind(text);
    if (!kind)
      return make_error("unknown barrier '" + text + "' (" + names_list(kBarrierKindNames) + ")");
    return *kind;
  };
  const std::vector<std::string>& w = *words;
  switch (e.kind) {
    case Edit::Kind::enable:
    case Edit::Kind::disable:
      GPUOVERLAP_TRY(arity(1, 1, "a workload"));
      e.workload = w[1];
      break;
    case Edit::Kind::groups:
    case Edit::Kind::iterations: {
      GPUOVERLAP_TRY(arity(2, 2, "a workload and a number"));
      e.workload = w[1];
      auto n = number(w[2]);
      if (!n) return n.error();
      e.number = *n;
      break;
    }
    case Edit::Kind::queue:
      GPUOVERLAP_TRY(arity(2, 2, "a workload and a queue"));
      e.workload = w[1], e.other = w[2];
      break;
    case Edit::Kind::undepend:
      GPUOVERLAP_TRY(arity(2, 2, "the consumer and the producer"));
      e.workload = w[1], e.other = w[2];
      break;
    case Edit::Kind::depend:
    case Edit::Kind::barrier: {
      const bool needs_kind = e.kind == Edit::Kind::barrier;
      GPUOVERLAP_TRY(arity(needs_kind ? 3 : 2, 3,
                           needs_kind ? "the consumer, the producer and a barrier"
                                      : "the consumer, the producer and optionally a barrier"));
      e.workload = w[1], e.other = w[2];
      e.barrier = scenario_default;
      if (args == 3) {
        auto kind = barrier(w[3]);
        if (!kind) return kind.error();
        e.barrier = *kind;
      }
      break;
    }
    case Edit::Kind::priority: {
      GPUOVERLAP_TRY(arity(2, 2, "a queue and a priority"));
      e.other = w[1];
      auto priority = parse_queue_priority(w[2]);
      if (!priority)
        return make_error("unknown priority '" + w[2] + "' (" + names_list(kQueuePriorityNames) +
                          ")");
      e.priority = *priority;
      break;
    }
    case Edit::Kind::timestamps:
      GPUOVERLAP_TRY(arity(1, 1, "on or off"));
      if (w[1] != "on" && w[1] != "off")
        return make_error("'timestamps' takes on or off, not '" + w[1] + "'");
      e.on = w[1] == "on";
      break;
  }
  return e;
}

Result<Scenario> runnable(const EditableScenario& draft, const std::string& name) {
  const Scenario& all = draft.scenario;
  std::vector<std::size_t> new_index(all.workloads.size(), all.workloads.size());
  Scenario s = all;
  s.name = name;
  s.workloads.clear();
  s.warnings.clear();
  s.plan.reset();
  for (std::size_t w = 0; w < all.workloads.size(); ++w) {
    if (!draft.enabled[w]) continue;
    for (const DependencySpec& d : all.workloads[w].depends_on)
      if (!draft.enabled[d.producer])
        return make_error(fmt::format(
            "workload '{}' depends on '{}', which is disabled; remove that dependency "
            "(undepend) or enable '{}'",
            all.workloads[w].name, all.workloads[d.producer].name, all.workloads[d.producer].name));
    new_index[w] = s.workloads.size();
    s.workloads.push_back(all.workloads[w]);
  }
  if (s.workloads.empty()) return make_error("every workload is disabled; enable at least one");
  for (WorkloadSpec& w : s.workloads)
    for (DependencySpec& d : w.depends_on) d.producer = new_index[d.producer];
  auto parsed = parse_scenario(to_toml(s), std::string(kEditSource));
  if (!parsed) return without_location(parsed.error());
  for (std::string& warning : parsed->warnings)
    warning = without_location(make_error(warning)).message;
  parsed->source = all.source;
  parsed->live = all.live;
  return parsed;
}

Result<EditOutcome> apply_edit(const EditableScenario& draft, const Edit& e,
                               const std::string& name) {
  EditOutcome out{draft, {}};
  Scenario& s = out.draft.scenario;
  auto workload = [&](const std::string& wanted) -> Result<std::size_t> {
    const std::size_t w = find_workload(s, wanted);
    if (w == s.workloads.size()) return make_error("no workload '" + wanted + "' in the scenario");
    return w;
  };
  auto queue = [&](const std::string& wanted) -> Result<std::size_t> {
    const std::size_t q = find_queue(s, wanted);
    if (q == s.queues.size()) return make_error("no queue '" + wanted + "' in the scenario");
    return q;
  };
  // The dependency of consumer `c` on producer `p`, as an index into its depends_on.
  auto dependency = [&](std::size_t c, std::size_t p) -> Result<std::size_t> {
    const auto& deps = s.workloads[c].depends_on;
    for (std::size_t i = 0; i < deps.size(); ++i)
      if (deps[i].producer == p) return i;
    return make_error("workload '" + s.workloads[c].name + "' does not depend on '" +
                      s.workloads[p].name + "'");
  };
  if (e.kind == Edit::Kind::priority) {
    auto q = queue(e.other);
    if (!q) return q.error();
    s.queues[*q].priority = e.priority;
  } else if (e.kind == Edit::Kind::timestamps) {
    s.timestamps = e.on;
  } else {
    auto w = workload(e.workload);
    if (!w) return w.error();
    WorkloadSpec& spec = s.workloads[*w];
    // A copy is sized by bytes, and its dependency (a readback's source) is part of what it
    // is (the parser's rules): added or removed, it would make another kind of copy. Its
    // barrier may change.
    if (spec.kind == WorkloadKind::copy &&
        (e.kind == Edit::Kind::groups || e.kind == Edit::Kind::iterations ||
         e.kind == Edit::Kind::depend || e.kind == Edit::Kind::undepend))
      return make_error("'" + spec.name + "' is a copy: its " +
                        (e.kind == Edit::Kind::depend   ? "dependencies"
                         : e.kind == Edit::Kind::groups ? "groups"
                                                        : "iterations") +
                        " cannot be edited (a copy moves bytes from its upload buffer, or from "
                        "the one workload it reads back)");
    switch (e.kind) {
      case Edit::Kind::enable:
      case Edit::Kind::disable:
        out.draft.enabled[*w] = e.kind == Edit::Kind::enable;
        break;
      case Edit::Kind::groups:
        spec.groups = e.number;
        break;
      case Edit::Kind::iterations:
        spec.iterations = e.number;
        break;
      case Edit::Kind::queue: {
        auto q = queue(e.other);
        if (!q) return q.error();
        spec.queue = *q;
        break;
      }
      case Edit::Kind::depend: {
        auto p = workload(e.other);
        if (!p) return p.error();
        BarrierRequest request;
        request.kind = e.barrier;
        request.split_policy = s.default_split_policy;
        spec.depends_on.push_back({*p, request});
        break;
      }
      case Edit::Kind::undepend:
      case Edit::Kind::barrier: {
        auto p = workload(e.other);
        if (!p) return p.error();
        auto i = dependency(*w, *p);
        if (!i) return i.error();
        if (e.kind == Edit::Kind::undepend) {
          spec.depends_on.erase(spec.depends_on.begin() + static_cast<std::ptrdiff_t>(*i));
        } else {
          BarrierRequest request;
          request.kind = e.barrier;
          request.split_policy = spec.depends_on[*i].barrier.split_policy;
          request.reads_output = spec.depends_on[*i].barrier.reads_output;
          spec.depends_on[*i].barrier = request;
        }
        break;
      }
      default:
        break;
    }
  }
  auto scenario = runnable(out.draft, name);
  if (!scenario) return scenario.error();
  out.scenario = std::move(*scenario);
  return out;
}

}  // namespace gpuoverlap
