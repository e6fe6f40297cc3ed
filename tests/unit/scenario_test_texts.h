// The scenario texts and the rejection helper that the tests of the scenario grammars share
// (scenario_parser_test.cpp, texture_copy_grammar_test.cpp, background_grammar_test.cpp,
// cpu_grammar_test.cpp, study_grammar_test.cpp). In a namespace of their own: a unity batch
// may hold another test file's helpers of the same names.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "scenarios/scenario.h"

namespace gpuoverlap::scenario_tests {

inline std::string error_of(const std::string& text) {
  auto result = parse_scenario(text, "test.toml");
  EXPECT_FALSE(result.ok()) << "expected a rejection of:\n" << text;
  return result.ok() ? std::string{} : result.error().message;
}

// A valid two-queue scenario to mutate in the error tests.
inline std::string two_queues(const std::string& extra_workload = "",
                              const std::string& c_deps = "[\"A\"]") {
  return R"(name = "t"
[queues.direct]
type = "direct"
[queues.compute]
type = "compute"
[[workload]]
name = "A"
queue = "direct"
[[workload]]
name = "B"
queue = "compute"
[[workload]]
name = "C"
queue = "direct"
depends_on = )" +
         c_deps + "\n" + extra_workload;
}

}  // namespace gpuoverlap::scenario_tests
