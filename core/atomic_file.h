// Whole-file writes that never leave a half file and never write through something planted
// in the output folder. The content goes to a new, uniquely named temporary beside the target
// ("<path>.tmp-XXXXXX", created with O_EXCL, so a symlink of that name is not followed), is
// flushed, then renamed over <path> (atomic within one file system; rename replaces a name,
// it never writes into what the name pointed to).
//
// Contract: the target is either absent or a regular file. A symlink, FIFO, device or
// directory at the target is refused (`--csv /dev/stdout`, a planted link): rename would
// replace the link itself, which is not what the user meant either.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/result.h"

namespace gpuoverlap {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content);

// The target check of write_file_atomically alone, for a command line to refuse an output it
// names before doing any work.
Status check_output_file(const std::filesystem::path& path);

}  // namespace gpuoverlap
