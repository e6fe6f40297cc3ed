// libFuzzer target: any bytes as a scenario, study or preemption file. The parser must return
// a value (a Scenario or one error line) for every input: no crash, no undefined behaviour, no
// hang. A scenario it accepts must also survive what `run` does with it next before any GPU
// work: the frame plan (barriers, submissions, fences) and expansion with a study.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "scenarios/frame_plan.h"
#include "scenarios/preemption_spec.h"
#include "scenarios/presets.h"
#include "scenarios/scenario.h"

using namespace gpuoverlap;

namespace {

// The message contract: one line.
void check_error(const Error& error) {
  if (error.message.find('\n') != std::string::npos) __builtin_trap();
}

void check_scenario(const Scenario& s) {
  const FramePlan plan = plan_frame(s);
  (void)plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (is_preemption(text)) {
    auto matrix = parse_preemption(text, "fuzz.toml");
    if (!matrix) {
      check_error(matrix.error());
    } else {
      for (const Scenario& s : *matrix) (void)preemption::describe(*s.preemption);
    }
  } else if (is_study(text)) {
    auto study = parse_study(text, "fuzz.toml");
    if (!study) {
      check_error(study.error());
    } else if (auto foreground = resolve_scenario("three-dispatches")) {
      for (const Scenario& s : expand_study(*study, *foreground)) check_scenario(s);
    }
  } else {
    auto scenario = parse_scenario(text, "fuzz.toml");
    if (!scenario)
      check_error(scenario.error());
    else
      check_scenario(*scenario);
  }
  return 0;
}
