#include "core/input_file.h"

#if defined(_WIN32)
#include <fstream>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <cstring>

#include "core/gzip.h"
#include "core/scope_exit.h"

namespace gpuoverlap {

namespace {

#if !defined(_WIN32)
const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}
#endif

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1ull << 30)) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

#if defined(_WIN32)
// Windows has no FIFOs or device nodes among ordinary paths; what is not a regular file is a
// folder or something else, refused alike.
std::string input_file_problem(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return ec.message();
  if (std::filesystem::is_directory(status)) return "is a directory, not a file";
  if (!std::filesystem::is_regular_file(status)) return "is not a regular file";
  return {};
}

Result<std::string> read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  if (const std::string problem = input_file_problem(path); !problem.empty())
    return make_error(path.string() + ": " + problem);
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return make_error(path.string() + ": " + ec.message());
  if (size > max_bytes)
    return make_error(path.string() + ": " + size_text(size) + ", larger than the limit of " +
                      size_text(max_bytes) + " for this kind of file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path.string() + ": cannot open it");
  std::string content(static_cast<std::size_t>(size), '\0');
  // A file that grows while being read is cut at its size when opened, plus nothing more.
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  content.resize(static_cast<std::size_t>(in.gcount()));
  return content;
}
#else
std::string input_file_problem(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::strerror(errno);
  if (!S_ISREG(info.st_mode))
    return std::string("is ") + file_type_name(info.st_mode) + ", not a file";
  return {};
}

Result<std::string> read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return make_error(path.string() + ": " + std::strerror(errno));
  const ScopeExit close_fd([fd] { ::close(fd); });
  struct stat info {};
  if (::fstat(fd, &info) != 0) return make_error(path.string() + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return make_error(path.string() + ": is " + file_type_name(info.st_mode) + ", not a file");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes)
    return make_error(path.string() + ": " + size_text(size) + ", larger than the limit of " +
                      size_text(max_bytes) + " for this kind of file");
  std::string content;
  content.resize(static_cast<std::size_t>(size));
  std::size_t have = 0;
  // A file that grows while being read is cut at its size when opened, plus nothing more.
  while (have < content.size()) {
    const ssize_t n = ::read(fd, content.data() + have, content.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(path.string() + ": " + std::strerror(errno));
    }
    if (n == 0) break;  // shrank while reading
    have += static_cast<std::size_t>(n);
  }
  content.resize(have);
  return content;
}
#endif

Result<std::string> read_input_text(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto content = read_input_file(path, max_bytes);
  if (!content || path.extension() != ".gz") return content;
  return gzip_decompress(*content, max_bytes, path.string());
}

}  // namespace gpuoverlap
