// Whole-file writes that never leave a half file: the content goes to "<path>.tmp-<pid>",
// is flushed, then renamed over <path> (rename is atomic within one file system).
#pragma once

#include <filesystem>
#include <string_view>

#include "core/result.h"

namespace gpuoverlap {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace gpuoverlap
