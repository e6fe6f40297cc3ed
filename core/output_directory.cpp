#include "core/output_directory.h"

#include <array>
#include <string>

#include "core/atomic_file.h"

namespace gpuoverlap {

namespace {

std::string mib(std::uint64_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

bool written_by_gpuoverlap(const std::filesystem::path& directory) {
  std::error_code ec;
  for (const char* marker : {"run.json", "meta.json", "selftest.json"})
    if (std::filesystem::is_regular_file(directory / marker, ec)) return true;
  return false;
}

// Writes, flushes and deletes a small file: a read-only mount, missing permissions or a
// quota show up here.
Status probe_writable(const std::filesystem::path& directory) {
  const std::filesystem::path probe = directory / ".gpuoverlap-probe";
  const std::array<char, 4096> block{};
  Status written = write_file_atomically(probe, std::string_view(block.data(), block.size()));
  std::error_code ec;
  std::filesystem::remove(probe, ec);
  if (!written)
    return make_error("--out " + directory.string() +
                      ": cannot write there: " + written.error().message);
  return ok_status();
}

}  // namespace

Status prepare_output_directory(const OutputDirectoryRequest& request) {
  const std::filesystem::path& directory = request.path;
  const std::string where = "--out " + directory.string();
  std::error_code ec;
  const auto status = std::filesystem::status(directory, ec);
  if (std::filesystem::exists(status)) {
    if (!std::filesystem::is_directory(status))
      return make_error(where + ": exists and is not a folder");
    const bool empty = std::filesystem::is_empty(directory, ec);
    if (ec) return make_error(where + ": cannot list it: " + ec.message());
    if (!empty) {
      if (!request.replace)
        return make_error(where +
                          ": already holds files; name a new folder, or pass --replace to "
                          "delete the results in it first");
      if (!written_by_gpuoverlap(directory))
        return make_error(where +
                          ": holds files that gpuoverlap did not write (no run.json, meta.json or "
                          "selftest.json); --replace deletes only a results folder");
      for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
        std::filesystem::remove_all(entry.path(), ec);
        if (ec)
          return make_error(where + ": cannot delete " + entry.path().string() + ": " +
                            ec.message());
      }
      if (ec) return make_error(where + ": cannot list it: " + ec.message());
    }
  }
  const bool existed = std::filesystem::exists(status);
  std::filesystem::create_directories(directory, ec);
  if (ec) return make_error(where + ": cannot create it: " + ec.message());
  Status usable = probe_writable(directory);
  const std::filesystem::space_info space = std::filesystem::space(directory, ec);
  if (usable && !ec) {
    const std::uint64_t free_bytes = space.available;
    if (free_bytes < request.needed_bytes)
      usable = make_error(where + ": " + mib(free_bytes) + " free, the results need about " +
                          mib(request.needed_bytes));
  }
  // A refused folder this call created is not left behind (its parents may stay).
  if (!usable && !existed) std::filesystem::remove(directory, ec);
  return usable;
}

std::filesystem::path unused_directory_name(const std::filesystem::path& wanted) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(wanted, ec))) return wanted;
  for (int suffix = 2;; ++suffix) {
    std::filesystem::path candidate = wanted;
    candidate += "-";
    candidate += std::to_string(suffix);
    if (!std::filesystem::exists(std::filesystem::symlink_status(candidate, ec))) return candidate;
  }
}

}  // namespace gpuoverlap
