// `gpuoverlap validate`: scenario files or presets checked without touching a GPU; with
// --explain, what each will record.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "app/commands.h"
#include "app/exit_status.h"
#include "backends/backends.h"
#include "jobs/cpu_spec.h"
#include "preemption/preemption_analysis.h"
#include "scenarios/frame_plan.h"
#include "scenarios/presets.h"

namespace gpuoverlap::commands {

namespace {

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
  if (!plan.barriers.target_transitions.empty())
    out << "  writes into a texture's subresource in another layout (after a read, or from the "
           "frame start) or into a texture that takes its heap from another (an aliasing "
           "hand-over), each behind its barriers:\n";
  std::optional<std::size_t> last_writer;
  for (const TargetTransition& t : plan.barriers.target_transitions) {
    const WorkloadSpec& writer = s.workloads[t.workload];
    const TextureSpec& texture = s.textures[t.texture];
    const TextureSpec& written = s.textures[writer.target->texture];
    if (last_writer != t.workload)
      out << fmt::format("    {} ({} mip {}, slice {} of '{}'{}), recorded on queue '{}'\n",
                         writer.name,
                         writer.kind == WorkloadKind::graphics ? "draws into" : "writes",
                         writer.target->mip, writer.target->slice, written.name,
                         writer.target->discard ? ", discard" : "", s.queues[writer.queue].name);
    last_writer = t.workload;
    // The frame's first hand-over takes the heap from the texture the frame before left in it.
    const auto since = [&](std::size_t held) {
      return plan.barriers.texture_holds_heap_at_start[held] ? " (held since the frame before)"
                                                             : "";
    };
    if (t.aliasing_from) {
      out << fmt::format("      D3D12 before the write, heap '{}' from '{}'{} to '{}': {}\n",
                         texture.heap, s.textures[*t.aliasing_from].name, since(*t.aliasing_from),
                         texture.name, describe(t.barrier));
      if (std::holds_alternative<D3D12_RESOURCE_BARRIER>(t.barrier))
        out << fmt::format(
            "      D3D12 then DiscardResource('{}'): a newly active {} must be "
            "initialised\n",
            texture.name, is_depth(texture.format) ? "depth buffer" : "render target");
    } else if (t.texture != writer.target->texture)
      out << fmt::format("      D3D12 before the write, '{}'{} leaves heap '{}': {}\n",
                         texture.name, since(t.texture), texture.heap, describe(t.barrier));
    else
      out << fmt::format("      D3D12 before the write: {}\n", describe(t.barrier));
    for (const std::string& line :
         explain_recording(t, {texture.mips, texture.slices}, s.queues[writer.queue].type))
      out << "      " << line << "\n";
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

}  // namespace

int command_validate(const std::vector<std::string>& items, bool explain_plan) {
  int status = kExitOk;
  for (const auto& item : items) {
    auto expanded = resolve_scenarios(item);
    if (!expanded) {
      status = fail(expanded.error());
      continue;
    }
    // A study's conditions this host cannot run: valid, and named with why.
    if (!expanded->empty())
      for (const auto& [condition, why] : expanded->front().study_not_run)
        std::cout << fmt::format("{}/{}: not run on this host: {}\n", expanded->front().study,
                                 condition, why);
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

void add_validate_command(CommandRegistry& registry) {
  struct ValidateArguments {
    std::vector<std::string> items;
    bool explain = false;
  };
  auto args = std::make_shared<ValidateArguments>();
  auto* validate = registry.app.add_subcommand(
      "validate", "Check scenario files or presets without touching a GPU");
  validate->add_option("scenario", args->items, "Preset names or scenario files")->required();
  validate->add_flag("--explain", args->explain,
                     "Also print each dependency's barriers (D3D12 and the Vulkan they become) "
                     "and the submissions and fences of a frame");
  registry.add(validate, [args] { return command_validate(args->items, args->explain); });
}

}  // namespace gpuoverlap::commands
