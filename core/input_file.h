// Reading files that come from outside (scenario files, results folders someone sent): the
// path must name a regular file (a FIFO would block the reader forever, a directory or device
// is a mistake) no larger than a limit (a 3 GB "scenario" must not exhaust memory). Every
// failure is one line naming the file and the reason, with the errno text where there is one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/result.h"

namespace gpuoverlap {

// Limits per kind of input, generous for what gpuoverlap writes itself.
inline constexpr std::uint64_t kMaxScenarioFileBytes = 1ull << 20;  // presets are ~2 KB
inline constexpr std::uint64_t kMaxJsonFileBytes = 64ull << 20;     // meta.json is ~10 KB
inline constexpr std::uint64_t kMaxCsvFileBytes = 2ull << 30;       // 1M frames of records

// The whole file, or why not: missing (with errno), not a regular file, larger than max_bytes.
Result<std::string> read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes);

// The text of an input file, inflated when its name ends in ".gz" (core/gzip.h: damage and
// decompression bombs are refused; max_bytes bounds both the file and its text).
Result<std::string> read_input_text(const std::filesystem::path& path, std::uint64_t max_bytes);

// Why `path` cannot be read as an input file, without reading it ("" when it can be opened).
std::string input_file_problem(const std::filesystem::path& path);

}  // namespace gpuoverlap
