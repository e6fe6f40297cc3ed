#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace gpuoverlap {

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path temp_path =
      path.string() + ".tmp-" + std::to_string(static_cast<long>(getpid()));
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error("cannot create " + temp_path.string() + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string reason = std::strerror(errno);
      ::close(fd);
      ::unlink(temp_path.c_str());
      return make_error("cannot write " + temp_path.string() + ": " + reason);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp_path.c_str());
    return make_error("cannot flush " + temp_path.string() + ": " + reason);
  }
  if (::rename(temp_path.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp_path.c_str());
    return make_error("cannot rename " + temp_path.string() + " to " + path.string() + ": " +
                      reason);
  }
  return ok_status();
}

}  // namespace gpuoverlap
