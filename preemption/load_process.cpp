#include "preemption/load_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <thread>

#include "core/clock.h"

namespace gpuoverlap::preemption {

namespace {

Error errno_error(const std::string& what) {
  return make_error(what + ": " + std::strerror(errno));
}

// send() with MSG_NOSIGNAL, so a peer that is gone is an error rather than SIGPIPE; write()
// where the descriptor is not a socket (a load process started by hand).
bool write_all(int fd, const std::string& text) {
  bool socket = true;
  for (std::size_t done = 0; done < text.size();) {
    const char* data = text.data() + done;
    const ssize_t n = socket ? ::send(fd, data, text.size() - done, MSG_NOSIGNAL)
                             : ::write(fd, data, text.size() - done);
    if (n < 0 && socket && errno == ENOTSOCK) {
      socket = false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "ended";
}

}  // namespace

Result<std::unique_ptr<LoadProcess>> LoadProcess::start(const std::string& executable,
                                                        const std::vector<std::string>& arguments) {
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
    return errno_error("socketpair");
  // Everything the child needs is prepared before fork: after it, only async-signal-safe
  // calls until exec (this process has other threads).
  std::vector<std::string> storage;
  storage.push_back(executable);
  storage.insert(storage.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const Error e = errno_error("fork");
    close(sockets[0]);
    close(sockets[1]);
    return e;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);  // the parent died before the line above
    dup2(sockets[1], STDIN_FILENO);       // dup2 clears close-on-exec on the copies
    dup2(sockets[1], STDOUT_FILENO);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(sockets[1]);
  return std::unique_ptr<LoadProcess>(new LoadProcess(pid, sockets[0]));
}

LoadProcess::~LoadProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (socket_ >= 0) close(socket_);
}

Result<nlohmann::json> LoadProcess::wait_for(std::string_view tag, std::int64_t deadline_ns,
                                             const std::function<bool()>& cancel) {
  for (;;) {
    if (auto line = take_tagged_line(buffer_, tag)) return *line;
    const std::int64_t remaining_ms = (deadline_ns - monotonic_raw_ns()) / 1'000'000;
    if (remaining_ms <= 0)
      return make_error("the load process did not send '" + std::string(tag) + "' in time");
    if (cancel && cancel()) return make_error("interrupted");
    pollfd pfd{socket_, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min<std::int64_t>(remaining_ms, 100)));
    if (ready < 0 && errno != EINTR) return errno_error("poll on the load process");
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = recv(socket_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return make_error("the load process ended before it sent '" + std::string(tag) + "'");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void LoadProcess::request_stop() {
  if (socket_ < 0) return;
  write_all(socket_, "stop\n");
  shutdown(socket_, SHUT_WR);
}

std::string LoadProcess::finish(std::int64_t deadline_ns) {
  if (pid_ <= 0) return "not running";
  request_stop();
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      return describe_status(status);
    }
    if (done < 0 && errno != EINTR) {
      pid_ = -1;
      return "lost (waitpid failed)";
    }
    if (monotonic_raw_ns() > deadline_ns) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return "killed after its deadline";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

ParentLink::ParentLink() : parent_(getppid()) {}

bool ParentLink::stop_requested() {
  if (stopped_) return true;
  for (;;) {
    pollfd pfd{STDIN_FILENO, POLLIN, 0};
    const int ready = poll(&pfd, 1, 0);
    if (ready <= 0) {
      if (ready < 0 && errno == EINTR) continue;
      if (getppid() != parent_) stopped_ = true;  // reparented: the parent is gone
      return stopped_;
    }
    char chunk[256];
    const ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      stopped_ = true;  // closed: the parent stopped or died
      return true;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
    if (buffer_.find("stop\n") != std::string::npos) {
      stopped_ = true;
      return true;
    }
  }
}

bool ParentLink::send(std::string_view tag, const nlohmann::json& value) {
  return write_all(STDOUT_FILENO, std::string(tag) + " " + value.dump() + "\n");
}

Result<std::string> current_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return errno_error("readlink /proc/self/exe");
  return std::string(path, static_cast<std::size_t>(n));
}

}  // namespace gpuoverlap::preemption
