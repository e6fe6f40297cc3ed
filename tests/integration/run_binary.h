// Test helper: runs the gpuoverlap binary under test (GPUOVERLAP_BINARY) with a shell-quoted
// argument string and returns its exit status and its stdout and stderr together.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
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

// `path`, with whatever an earlier run left there removed: a run's --out, a scratch folder.
inline std::filesystem::path fresh_path(const std::filesystem::path& path) {
  std::filesystem::remove_all(path);
  return path;
}

inline CommandResult run_gpuoverlap(const std::string& arguments) {
  return run_command(std::string(GPUOVERLAP_BINARY) + " " + arguments);
}

// gpuoverlap under a virtual display (xvfb-run, Debian's xvfb), for `view`. Each call starts its
// search for a free display number at one of its own (from the process id and a counter), so
// tests running in parallel do not race for the same number.
// Should two still meet, xvfb-run says "Xvfb failed to start" and the call is made again, from
// another number.
inline CommandResult run_gpuoverlap_on_display(const std::string& arguments) {
  static int calls = 0;
  CommandResult result;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int start = 100 + static_cast<int>(getpid() % 400) * 8 + (calls++ % 8) + attempt * 3200;
    result = run_command("xvfb-run -a -n " + std::to_string(start) +
                         " -s '-screen 0 1600x1000x24 -noreset' " + std::string(GPUOVERLAP_BINARY) +
                         " " + arguments);
    if (result.output.find("Xvfb failed to start") == std::string::npos) break;
  }
  return result;
}

}  // namespace gpuoverlap
