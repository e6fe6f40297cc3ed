#include "core/atomic_file.h"

#if defined(_WIN32)
#include <windows.h>

#include <atomic>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/system_error.h"

namespace gpuoverlap {

namespace {

// A write that failed is the environment's (a full disk, a read-only mount, permissions), and
// so is a target that check_output_file would refuse by the time the results are written.
Error write_error(std::string message) {
  return make_error(std::move(message), ErrorCategory::environment);
}

Status check_target(const std::filesystem::path& path) {
  if (Status usable = check_output_file(path); !usable)
    return usable.error().with_category(ErrorCategory::environment);
  return ok_status();
}

// Why an existing `path` must not be replaced; "" when it is absent or a regular file.
#if defined(_WIN32)
std::string target_problem(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(status)) return {};  // absent: the writes report the rest
  if (std::filesystem::is_regular_file(status)) return {};
  if (std::filesystem::is_symlink(status)) return "is a symbolic link";
  if (std::filesystem::is_directory(status)) return "is a directory";
  return "is a device";
}
#else
std::string target_problem(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return {};  // absent: open/rename report the rest
  if (S_ISREG(info.st_mode)) return {};
  if (S_ISLNK(info.st_mode)) return "is a symbolic link";
  if (S_ISDIR(info.st_mode)) return "is a directory";
  if (S_ISFIFO(info.st_mode)) return "is a FIFO";
  return "is a device or socket";
}

#endif

}  // namespace

Status check_output_file(const std::filesystem::path& path) {
  if (const std::string problem = target_problem(path); !problem.empty())
    return make_error(path.string() + ": " + problem +
                      "; gpuoverlap writes only regular files (name a new file instead)");
  return ok_status();
}

#if defined(_WIN32)
Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  GPUOVERLAP_TRY(check_target(path));
  // A name of its own per process and call: CREATE_NEW refuses to reuse one.
  static std::atomic<unsigned> sequence{0};
  std::filesystem::path temp = path;
  temp += ".tmp-" + std::to_string(GetCurrentProcessId()) + "-" + std::to_string(sequence++);
  const HANDLE file = CreateFileW(temp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                                  FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE)
    return write_error("cannot create a file beside " + path.string() + ": " + last_system_error());
  auto fail = [&](const std::string& what) {
    const std::string reason = last_system_error();
    CloseHandle(file);
    DeleteFileW(temp.c_str());
    return write_error("cannot " + what + " " + temp.string() + ": " + reason);
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const DWORD chunk =
        static_cast<DWORD>(std::min<std::size_t>(content.size() - written, 1u << 30));
    DWORD n = 0;
    if (!WriteFile(file, content.data() + written, chunk, &n, nullptr)) return fail("write");
    written += n;
  }
  if (!FlushFileBuffers(file)) return fail("flush");
  CloseHandle(file);
  if (!MoveFileExW(temp.c_str(), path.c_str(),
                   MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    const std::string reason = last_system_error();
    DeleteFileW(temp.c_str());
    return write_error("cannot rename " + temp.string() + " to " + path.string() + ": " + reason);
  }
  return ok_status();
}
#else
Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  GPUOVERLAP_TRY(check_target(path));
  std::string temp_name = path.string() + ".tmp-XXXXXX";
  const int fd = ::mkostemp(temp_name.data(), O_CLOEXEC);
  if (fd < 0)
    return write_error("cannot create a file beside " + path.string() + ": " +
                       std::strerror(errno));
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(temp_name.c_str());
    return write_error("cannot " + what + " " + temp_name + ": " + reason);
  };
  // mkostemp creates 0600; results are shared like any other output.
  if (::fchmod(fd, 0644) != 0) return fail("set the mode of");
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("flush");
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp_name.c_str());
    return write_error("cannot flush " + temp_name + ": " + reason);
  }
  if (::rename(temp_name.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp_name.c_str());
    return write_error("cannot rename " + temp_name + " to " + path.string() + ": " + reason);
  }
  return ok_status();
}
#endif

}  // namespace gpuoverlap
