#include "background/background_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "core/cgroup_idle.h"
#include "core/cpu_affinity.h"
#include "core/kept_memory.h"

namespace gpuoverlap::background {

std::string_view to_string(Workflow workflow) { return name_of(kWorkflowNames, workflow); }

std::optional<Workflow> parse_workflow(std::string_view text) {
  return value_of(kWorkflowNames, text);
}

bool held_in_block(std::uint32_t alternate_frames, std::uint32_t measured_frame) {
  if (alternate_frames == 0) return false;
  // Blocks 0, 1, 2, 3, ... are on, off, off, on: the second bit of the block's Gray code.
  const std::uint32_t block = measured_frame / alternate_frames;
  return ((block ^ (block >> 1)) & 1) != 0;
}

std::string describe(const CpuPlacement& placement) {
  switch (placement.kind) {
    case CpuPlacementKind::reserved:
      return "reserved:" + std::to_string(placement.reserved);
    case CpuPlacementKind::list:
      return describe_cpus(placement.cpus);
    case CpuPlacementKind::any:
    case CpuPlacementKind::siblings:
      break;
  }
  return std::string(name_of(kCpuPlacementKindNames, placement.kind));
}

std::optional<CpuPlacement> parse_cpu_placement(std::string_view text) {
  CpuPlacement placement;
  if (text == "any") return placement;
  if (text == "siblings") {
    placement.kind = CpuPlacementKind::siblings;
    return placement;
  }
  if (text.starts_with("reserved:")) {
    const std::string_view count = text.substr(std::string_view("reserved:").size());
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec != std::errc() || end != count.data() + count.size() || n == 0 || n > 4096)
      return std::nullopt;
    placement.kind = CpuPlacementKind::reserved;
    placement.reserved = n;
    return placement;
  }
  auto cpus = parse_cpus(text);
  if (!cpus) return std::nullopt;
  placement.kind = CpuPlacementKind::list;
  placement.cpus = std::move(*cpus);
  return placement;
}

Result<ResolvedPlacement> resolve_placement(const CpuPlacement& placement,
                                            const std::vector<int>& frame_cpus,
                                            const std::vector<std::vector<int>>& siblings) {
  ResolvedPlacement out;
  switch (placement.kind) {
    case CpuPlacementKind::any:
      return out;
    case CpuPlacementKind::list:
      out.background_cpus = placement.cpus;
      return out;
    case CpuPlacementKind::reserved:
      // At least two CPUs stay with the foreground: the frame loop's and one worker's.
      if (frame_cpus.size() < placement.reserved + 2)
        return make_error(fmt::format(
            "cpus = \"reserved:{}\" needs at least {} CPUs for the frame loop and its workers; "
            "it may run on {} ({})",
            placement.reserved, placement.reserved + 2, frame_cpus.size(),
            describe_cpus(frame_cpus)));
      out.background_cpus.assign(frame_cpus.end() - placement.reserved, frame_cpus.end());
      out.foreground_off = out.background_cpus;
      return out;
    case CpuPlacementKind::siblings: {
      // The first hardware thread of each core stays with the foreground; the others, its
      // SMT siblings, go to the background.
      const std::set<int> mine(frame_cpus.begin(), frame_cpus.end());
      for (const std::vector<int>& group : siblings) {
        std::vector<int> here;
        for (const int cpu : group)
          if (mine.contains(cpu)) here.push_back(cpu);
        if (here.size() > 1)
          out.background_cpus.insert(out.background_cpus.end(), here.begin() + 1, here.end());
      }
      std::sort(out.background_cpus.begin(), out.background_cpus.end());
      if (out.background_cpus.empty())
        return make_error("cpus = \"siblings\": no core of the CPUs this run may use (" +
                          describe_cpus(frame_cpus) + ") shows a second hardware thread (" +
                          smt_groups_source() + "; a virtual machine may hide its host's SMT)");
      out.foreground_off = out.background_cpus;
      return out;
    }
  }
  return out;
}

std::optional<std::string> placement_misfit_here(const CpuPlacement& placement) {
  const std::vector<int> usable = usable_cpu_ids();
  // The calling thread's CPUs: under `run`, the stamp poller's is already left out of them.
  if (placement.kind == CpuPlacementKind::reserved && usable.size() < placement.reserved + 2)
    return fmt::format(
        "reserving {} CPUs leaves the foreground fewer than two (the frame loop's and a "
        "worker's) of the {} it may use here ({})",
        placement.reserved, usable.size(), describe_cpus(usable));
  if (placement.kind == CpuPlacementKind::list)
    for (const int cpu : placement.cpus)
      if (std::find(usable.begin(), usable.end(), cpu) == usable.end())
        return fmt::format("CPU {} is not one this process may use ({})", cpu,
                           describe_cpus(usable));
  return std::nullopt;
}

std::optional<std::string> why_not_here(const BackgroundSpec& spec) {
  if (!available_here(spec.policy)) {
    std::string here;
    for (ThreadPolicy p : thread_policies_here())
      here += (here.empty() ? "" : ", ") + std::string(to_string(p));
    return "policy '" + std::string(to_string(spec.policy)) +
           "' is not a policy of this OS (here: " + here + ")";
  }
  if (auto misfit = placement_misfit_here(spec.cpus))
    return "cpus = \"" + describe(spec.cpus) + "\": " + *misfit;
  if (spec.cpus.kind == CpuPlacementKind::siblings) {
    const std::vector<int> usable = usable_cpu_ids();
    if (auto resolved = resolve_placement(spec.cpus, usable, smt_groups(usable)); !resolved)
      return resolved.error().message;
  }
  if (spec.allocator == Allocator::keep)
    if (const std::string why = kept_memory_unsupported_reason(); !why.empty())
      return "allocator = \"keep\" sets glibc's malloc thresholds; " + why;
  if (spec.cgroup_idle) {
    auto group = IdleCgroup::create();
    if (!group) return "cgroup_idle: " + group.error().message;
  }
  return std::nullopt;
}

namespace {

std::string alternation(const BackgroundSpec& spec) {
  return spec.alternate_frames
             ? fmt::format(", held in every other block of {} frames", spec.alternate_frames)
             : "";
}

}  // namespace

std::string describe(const BackgroundSpec& spec) {
  if (spec.idle_spinners)
    return "negative control, an idle-priority thread per foreground CPU allocating, freeing and "
           "touching memory of its own";
  if (spec.unmanaged_threads > 0)
    return fmt::format("unmanaged control, {} normal-priority compile threads{}{}",
                       spec.unmanaged_threads, spec.create_pipelines ? "" : " (shaderc only)",
                       alternation(spec));
  std::string text =
      spec.workflow != Workflow::none
          ? fmt::format("workflow {} ({} frames per pass, at most {} passes)",
                        to_string(spec.workflow), spec.training_frames, spec.max_passes)
          : fmt::format("{} + {}{}", to_string(spec.mode), to_string(spec.action),
                        spec.action_every_frame ? " every frame" : "");
  return text +
         fmt::format(", {} compiles{}{}, at most {} at once{}", spec.tasks,
                     spec.continuous ? " kept queued" : "",
                     spec.create_pipelines ? "" : " (shaderc only)", spec.max_concurrent,
                     spec.bind_committed ? ", committed variants bound" : "") +
         (spec.policy == ThreadPolicy::idle ? ""
                                            : fmt::format(", threads {}", to_string(spec.policy))) +
         (spec.cpus.kind == CpuPlacementKind::any
              ? ""
              : fmt::format(", on CPUs {}", describe(spec.cpus))) +
         (spec.allocator == Allocator::keep ? ", memory kept between compiles" : "") +
         (spec.cgroup_idle ? ", in an idle cgroup" : "") +
         (spec.dispatch == Dispatch::gaps ? ", started only outside the frame's CPU phase" : "") +
         (spec.commit_at_frame
              ? fmt::format(", a commit waited for from measured frame {}", *spec.commit_at_frame)
              : "") +
         alternation(spec);
}

nlohmann::json to_json(const BackgroundSpec& spec) {
  return {{"mode", to_string(spec.mode)},
          {"action", to_string(spec.action)},
          {"action_every_frame", spec.action_every_frame},
          {"tasks", spec.tasks},
          {"continuous", spec.continuous},
          {"max_concurrent", spec.max_concurrent},
          {"policy", to_string(spec.policy)},
          {"cpus", describe(spec.cpus)},
          {"allocator", name_of(kAllocatorNames, spec.allocator)},
          {"cgroup_idle", spec.cgroup_idle},
          {"dispatch", name_of(kDispatchNames, spec.dispatch)},
          {"developer_mode", spec.developer_mode},
          {"unmanaged_threads", spec.unmanaged_threads},
          {"idle_spinners", spec.idle_spinners},
          {"workflow", to_string(spec.workflow)},
          {"training_frames", spec.training_frames},
          {"max_passes", spec.max_passes},
          {"converge_after_passes", spec.converge_after_passes},
          {"commit_timeout_ms", spec.commit_timeout_ms},
          {"commit_at_frame",
           spec.commit_at_frame ? nlohmann::json(*spec.commit_at_frame) : nlohmann::json(nullptr)},
          {"create_pipelines", spec.create_pipelines},
          {"bind_committed", spec.bind_committed},
          {"before_frames", spec.before_frames},
          {"fold_iterations", spec.fold_iterations},
          {"alternate_frames", spec.alternate_frames},
          {"description", describe(spec)}};
}

}  // namespace gpuoverlap::background
