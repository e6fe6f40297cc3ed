// A child cgroup (v2) of the process's own, with cpu.idle = 1, that threads of this process
// join: the kernel's idle class for a whole group (its threads get a CPU only when no other
// group wants one), as a systemd slice with CPUWeight=idle sets it. It needs a cgroup the
// process may write (root, or a delegated subtree) with the cpu controller available; where
// that is missing, create() says which step failed and why, and nothing is left behind.
//
// Linux only (cgroup v2, threaded mode, kernel 5.15 or later for cpu.idle). On Windows
// create() refuses.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpuoverlap {

class IdleCgroup {
 public:
  // Creates the group ("gpuoverlap-idle-<pid>-<n>" beside the process, threaded, cpu.idle 1).
  static Result<std::unique_ptr<IdleCgroup>> create();
  // Moves the threads still in the group back to the process's cgroup, removes the group, and
  // takes back the cpu controller where create() enabled it.
  ~IdleCgroup();
  IdleCgroup(const IdleCgroup&) = delete;
  IdleCgroup& operator=(const IdleCgroup&) = delete;

  // The calling thread joins the group. Thread safe.
  Status join_this_thread();
  // The group's path under the cgroup v2 mount, as /proc/<pid>/task/<tid>/cgroup names it.
  const std::string& relative_path() const { return relative_path_; }

 private:
  IdleCgroup() = default;
  std::string parent_dir_, dir_, relative_path_;
  bool enabled_cpu_ = false;  // counted among the groups that need the "+cpu" this process set
  std::mutex mutex_;
  std::vector<std::int64_t> joined_;
};

// The calling thread's cgroup v2 path ("/user.slice/…"), read back from
// /proc/thread-self/cgroup; none where there is no such line (Windows, no cgroup v2).
std::optional<std::string> this_thread_cgroup();

}  // namespace gpuoverlap
