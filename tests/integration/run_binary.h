// Test helper: runs the gpuoverlap binary under test (GPUOVERLAP_BINARY) with a shell-quoted
// argument string and returns its exit status and its stdout and stderr together.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace gpuoverlap {

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

// Any shell command line; stderr is captured with stdout.
inline CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline CommandResult run_gpuoverlap(const std::string& arguments) {
  return run_command(std::string(GPUOVERLAP_BINARY) + " " + arguments);
}

}  // namespace gpuoverlap
