#include "app/exit_status.h"

#include <iostream>

#include "scenarios/names.h"

namespace gpuoverlap::commands {

namespace {

int print(const std::string& reason, ExitStatus status) {
  std::cerr << "gpuoverlap: " << escape_control_characters(reason) << "\n";
  return status;
}

}  // namespace

int fail(const Error& error) { return print(error.message, exit_status_of(error)); }

int problem_found(const std::string& reason) { return print(reason, kExitFailed); }

int interrupted(const std::string& reason) { return print(reason, kExitInterrupted); }

}  // namespace gpuoverlap::commands
