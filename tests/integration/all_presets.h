// The one `run --all` that the AllPresets tests share (it is the slow part): every preset
// shipped, every scenario the suite expands them into, and the fixture that runs them once per
// process. Its tests live in the file of their family (presets_test, tools_on_outputs_test,
// preemption_test, background_runtime_test); gtest runs SetUpTestSuite once for all of them,
// wherever they are, as they share this one fixture class (not in an anonymous namespace).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "run_binary.h"
#include "run_checks.h"
#include "scenarios/presets.h"

namespace gpuoverlap {

// The measured frames of the shared run.
inline constexpr std::uint32_t kFrames = 5;

// Every preset shipped, from the source tree (the binary embeds the same files).
inline std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(GPUOVERLAP_SOURCE_DIR) / "scenarios" / "presets"))
    if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}
inline const std::vector<std::string> kPresets = preset_names();

// What `run --all` measures: a study preset expands into one scenario per condition and
// round, written to <study>/<condition>/round-<r>; a matrix into <matrix>/<configuration>;
// a preset that is a configuration of a matrix runs only there.
inline std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  auto suite = suite_scenarios();
  if (!suite) {
    ADD_FAILURE() << suite.error().message;
    return names;
  }
  for (const Scenario& s : suite->scenarios) names.push_back(s.name);
  return names;
}
inline const std::vector<std::string> kScenarios = scenario_names();

inline bool is_preemption(const std::string& scenario) {
  return scenario.rfind("preemption-", 0) == 0;
}

// One run of every preset, shared by the AllPresets tests.
class AllPresets : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new std::filesystem::path(temp_path("all"));
    std::filesystem::remove_all(*out_);
    // --priority-fallback: lavapipe has no global priority, and high-priority-compute asks for
    // HIGH; the strict behaviour is tested separately. --sync-validation: any Vulkan
    // validation error or synchronization hazard fails the run.
    const std::string args = "run --all --frames " + std::to_string(kFrames) +
                             " --warmup 2 --duration-ms 100 --target-ms 10"
                             " --priority-fallback --sync-validation --out " +
                             out_->string();
    result_ = new CommandResult(run_gpuoverlap(args));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*out_);
    delete out_;
    delete result_;
  }
  static inline std::filesystem::path* out_ = nullptr;
  static inline CommandResult* result_ = nullptr;
};

}  // namespace gpuoverlap
