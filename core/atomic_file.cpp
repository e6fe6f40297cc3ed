#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuoverlap {

namespace {

// Why an existing `path` must not be replaced; "" when it is absent or a regular file.
std::string target_problem(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return {};  // absent: open/rename report the rest
  if (S_ISREG(info.st_mode)) return {};
  if (S_ISLNK(info.st_mode)) return "is a symbolic link";
  if (S_ISDIR(info.st_mode)) return "is a directory";
  if (S_ISFIFO(info.st_mode)) return "is a FIFO";
  return "is a device or socket";
}

}  // namespace

Status check_output_file(const std::filesystem::path& path) {
  if (const std::string problem = target_problem(path); !problem.empty())
    return make_error(path.string() + ": " + problem +
                      "; gpuoverlap writes only regular files (name a new file instead)");
  return ok_status();
}

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  GPUOVERLAP_TRY(check_output_file(path));
  std::string temp_name = path.string() + ".tmp-XXXXXX";
  const int fd = ::mkostemp(temp_name.data(), O_CLOEXEC);
  if (fd < 0)
    return make_error("cannot create a file beside " + path.string() + ": " + std::strerror(errno));
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(temp_name.c_str());
    return make_error("cannot " + what + " " + temp_name + ": " + reason);
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
    return make_error("cannot flush " + temp_name + ": " + reason);
  }
  if (::rename(temp_name.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp_name.c_str());
    return make_error("cannot rename " + temp_name + " to " + path.string() + ": " + reason);
  }
  return ok_status();
}

}  // namespace gpuoverlap
