// The output folder of a command that measures, made ready before any GPU work: a folder that
// cannot take the results is found now, not after every frame ran.
#pragma once

#include <cstdint>
#include <filesystem>

#include "core/result.h"

namespace gpuoverlap {

struct OutputDirectoryRequest {
  std::filesystem::path path;
  // An existing folder with files is refused unless this is set; then it must be a folder
  // gpuoverlap wrote (run.json, meta.json or selftest.json at its top), and its contents are
  // deleted, so old and new results never mix.
  bool replace = false;
  // Free space the results need (an estimate); refused when the file system has less.
  std::uint64_t needed_bytes = 16ull << 20;
};

// Creates the folder (and its parents), proves it writable by creating, writing, flushing and
// deleting a file in it, and checks the free space. Errors name the folder and the reason.
Status prepare_output_directory(const OutputDirectoryRequest& request);

// "results/<date-time>" as given, or with "-2", "-3", ... appended while that name is taken
// (two runs started in the same second).
std::filesystem::path unused_directory_name(const std::filesystem::path& wanted);

}  // namespace gpuoverlap
