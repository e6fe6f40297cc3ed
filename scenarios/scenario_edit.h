// The edits a `run --live` session makes to the running scenario (docs/viewer.md, "Changing the
// experiment"), as values: the viewer's controls and a `--script` file make the same Edit, and
// every edit is checked by the rules `validate` applies to a file (the edited scenario is
// written with to_toml and parsed again), so a refused edit reads exactly as the same mistake
// in a file would, rule included. Pure: tested without a GPU (tests/unit/scenario_edit_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "scenarios/scenario.h"

namespace gpuoverlap {

// What the viewer edits: the scenario with every workload it started with, and which of them
// run. A disabled workload keeps its settings and place, so enabling it again restores it.
struct EditableScenario {
  Scenario scenario;
  std::vector<bool> enabled;  // per workload of `scenario`
};

// Every workload enabled. Contract: `running` is a validated frame scenario.
EditableScenario editable(const Scenario& running);

// One edit, named by workload and queue names (indices move when workloads are disabled).
struct Edit {
  enum class Kind {
    enable,      // workload
    disable,     // workload
    groups,      // workload, number
    iterations,  // workload, number
    queue,       // workload, other = the queue
    depend,      // workload = consumer, other = producer, barrier
    undepend,    // workload = consumer, other = producer
    barrier,     // workload = consumer, other = producer, barrier
    priority,    // other = the queue, priority
    timestamps,  // on
  };
  Kind kind = Kind::enable;
  std::string workload;
  std::string other;
  std::uint32_t number = 0;
  BarrierKind barrier = BarrierKind::legacy;
  QueuePriority priority = QueuePriority::normal;
  bool on = true;
};

// The edit's words, as a `--script` line has them and meta.json records them:
//   enable W | disable W | groups W N | iterations W N | queue W Q | depend C P [BARRIER]
//   undepend C P | barrier C P BARRIER | priority Q PRIORITY | timestamps on|off
// Names with spaces are double-quoted ("Compute A"). parse_edit(describe(e)) gives back e.
std::string describe(const Edit& edit);
// `depend` without a barrier takes `scenario_default` (the scenario's `barrier`).
Result<Edit> parse_edit(std::string_view line, BarrierKind scenario_default = BarrierKind::legacy);

// The draft after the edit and the scenario it runs (named `name`), or why not: a name that is
// not in the scenario, a value out of range, a disabled workload that an enabled one still
// depends on, or any rule of the scenario file (cycles, producers declared after their
// consumer, barrier rules, graphics on a compute queue, ...), in the parser's words.
// Changing a dependency's barrier kind drops its D3D12 details (state_*, sync_*, access_*,
// layout_*, type), which belong to one kind.
struct EditOutcome {
  EditableScenario draft;
  Scenario scenario;
};
Result<EditOutcome> apply_edit(const EditableScenario& draft, const Edit& edit,
                               const std::string& name);

// The scenario the draft runs, named `name`: its enabled workloads, checked as a file is.
Result<Scenario> runnable(const EditableScenario& draft, const std::string& name);

}  // namespace gpuoverlap
