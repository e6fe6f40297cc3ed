// The exit status of every command, documented in --help and docs/usage.md ("Exit status"), so
// that a script can tell a measured problem from a broken pipeline.
#pragma once

#include <string>

#include "core/result.h"

namespace gpuoverlap::commands {

enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,       // it ran and found a problem: a regression, a failed frame or check
  kExitBadInput = 2,     // command line, scenario file, results or output folder unusable
  kExitEnvironment = 3,  // no GPU driver or device, or the results could not be written
  kExitInterrupted = 130,
};

// The status of a command that an Error stopped, from the error's category alone. A problem
// that a command found by running (kExitFailed) is its result, never an Error's category: a run
// whose frame failed ends with kExitFailed whatever the failure's category.
constexpr ExitStatus exit_status_of(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::input:
      return kExitBadInput;
    case ErrorCategory::environment:
    case ErrorCategory::unsupported:
      return kExitEnvironment;
  }
  return kExitEnvironment;
}

inline ExitStatus exit_status_of(const Error& error) { return exit_status_of(error.category); }

// Each writes one line on stderr (control characters escaped: it may quote a file's content)
// and returns the status to exit with.
int fail(const Error& error);                  // exit_status_of(error)
int problem_found(const std::string& reason);  // kExitFailed
int interrupted(const std::string& reason);    // kExitInterrupted

}  // namespace gpuoverlap::commands
