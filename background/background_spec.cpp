#include "background/background_spec.h"

#include <fmt/format.h>

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

namespace {

std::string alternation(const BackgroundSpec& spec) {
  return spec.alternate_frames
             ? fmt::format(", held in every other block of {} frames", spec.alternate_frames)
             : "";
}

}  // namespace

std::string describe(const BackgroundSpec& spec) {
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
          {"developer_mode", spec.developer_mode},
          {"unmanaged_threads", spec.unmanaged_threads},
          {"workflow", to_string(spec.workflow)},
          {"training_frames", spec.training_frames},
          {"max_passes", spec.max_passes},
          {"converge_after_passes", spec.converge_after_passes},
          {"commit_timeout_ms", spec.commit_timeout_ms},
          {"create_pipelines", spec.create_pipelines},
          {"bind_committed", spec.bind_committed},
          {"before_frames", spec.before_frames},
          {"fold_iterations", spec.fold_iterations},
          {"alternate_frames", spec.alternate_frames},
          {"description", describe(spec)}};
}

}  // namespace gpuoverlap::background
