#include "core/cgroup_idle.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/thread_accounting.h"

#if !defined(_WIN32)
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace gpuoverlap {

namespace {

#if !defined(_WIN32)
// Writes `text` to a cgroup file as one write(2), which is what the kernel parses; the error
// keeps errno's words, which say why (EACCES: not delegated; EOPNOTSUPP: no threaded mode).
Status write_control(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "we");
  if (!file) return make_error("opening " + path + ": " + std::strerror(errno));
  std::setvbuf(file, nullptr, _IONBF, 0);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int saved = errno;
  std::fclose(file);
  if (!written)
    return make_error("writing '" + text + "' to " + path + ": " + std::strerror(saved));
  return ok_status();
}

std::optional<std::string> read_first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  if (!file || !std::getline(file, line)) return std::nullopt;
  return line;
}

// The cgroup v2 mount point, from /proc/self/mountinfo (field 5 is the mount point, the
// filesystem type follows the " - " separator).
std::optional<std::string> cgroup2_mount() {
  std::ifstream file("/proc/self/mountinfo");
  std::string line;
  while (std::getline(file, line)) {
    const auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
    }
    return field;
  }
  return std::nullopt;
}

std::optional<std::string> cgroup_v2_line(const std::string& proc_file) {
  std::ifstream file(proc_file);
  std::string line;
  while (std::getline(file, line))
    if (line.starts_with("0::")) return line.substr(3);
  return std::nullopt;
}
#endif

#if !defined(_WIN32)
// The groups alive that needed "+cpu" in their parent's subtree_control, by parent: the last one
// takes it back, so that a second group (two devices under `run --concurrent`) keeps its
// cpu.idle while the first is destroyed.
std::mutex g_enabled_mutex;
std::map<std::string, int> g_enabled_cpu;
#endif

}  // namespace

std::optional<std::string> this_thread_cgroup() {
#if defined(_WIN32)
  return std::nullopt;
#else
  return cgroup_v2_line("/proc/thread-self/cgroup");
#endif
}

Result<std::unique_ptr<IdleCgroup>> IdleCgroup::create() {
#if defined(_WIN32)
  return make_error("cgroups are Linux's; Windows has none");
#else
  const auto mount = cgroup2_mount();
  if (!mount) return make_error("no cgroup v2 hierarchy is mounted (/proc/self/mountinfo)");
  const auto own = cgroup_v2_line("/proc/self/cgroup");
  if (!own) return make_error("this process is in no cgroup v2 group (/proc/self/cgroup)");
  const std::string parent = *mount + (*own == "/" ? std::string() : *own);
  const auto controllers = read_first_line(parent + "/cgroup.controllers");
  if (!controllers || (" " + *controllers + " ").find(" cpu ") == std::string::npos)
    return make_error("the cpu controller is not enabled for this process's cgroup " + *own + " (" +
                      parent + "/cgroup.controllers: '" + controllers.value_or("") +
                      "'): the cgroup above it does not delegate cpu, or the hierarchy is hybrid "
                      "and keeps cpu on cgroup v1");
  static std::atomic<std::uint32_t> created{0};
  std::unique_ptr<IdleCgroup> group(new IdleCgroup());
  group->parent_dir_ = parent;
  const std::string name =
      "gpuoverlap-idle-" + std::to_string(::getpid()) + "-" + std::to_string(++created);
  group->dir_ = parent + "/" + name;
  group->relative_path_ = (*own == "/" ? std::string() : *own) + "/" + name;
  std::error_code ec;
  if (!std::filesystem::create_directory(group->dir_, ec)) {
    const std::string dir = group->dir_;
    group->dir_.clear();  // not ours: the destructor leaves it alone
    return make_error("creating " + dir + ": " +
                      (ec ? ec.message() : std::string("it exists already")));
  }
  // From here the destructor removes what was made.
  if (Status s = write_control(group->dir_ + "/cgroup.type", "threaded"); !s) return s.error();
  {
    std::lock_guard lock(g_enabled_mutex);
    const auto subtree = read_first_line(parent + "/cgroup.subtree_control").value_or("");
    if ((" " + subtree + " ").find(" cpu ") == std::string::npos) {
      if (Status s = write_control(parent + "/cgroup.subtree_control", "+cpu"); !s)
        return s.error();
      g_enabled_cpu[parent] = 0;
    }
    // A group that finds cpu enabled by another live group of this process shares its count.
    if (const auto it = g_enabled_cpu.find(parent); it != g_enabled_cpu.end()) {
      ++it->second;
      group->enabled_cpu_ = true;
    }
  }
  if (Status s = write_control(group->dir_ + "/cpu.idle", "1"); !s)
    return s.error().with_context("(cpu.idle needs Linux 5.15) ");
  return group;
#endif
}

IdleCgroup::~IdleCgroup() {
#if !defined(_WIN32)
  std::lock_guard lock(mutex_);
  // A thread that has exited is gone from the group; writing its id fails, which is fine.
  for (const std::int64_t tid : joined_)
    (void)write_control(parent_dir_ + "/cgroup.threads", std::to_string(tid));
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove(dir_, ec);
  if (enabled_cpu_) {
    std::lock_guard cpu_lock(g_enabled_mutex);
    if (const auto it = g_enabled_cpu.find(parent_dir_);
        it != g_enabled_cpu.end() && --it->second == 0) {
      g_enabled_cpu.erase(it);
      (void)write_control(parent_dir_ + "/cgroup.subtree_control", "-cpu");
    }
  }
#endif
}

Status IdleCgroup::join_this_thread() {
#if defined(_WIN32)
  return make_error("cgroups are Linux's");
#else
  const std::int64_t tid = current_thread_id();
  if (Status s = write_control(dir_ + "/cgroup.threads", std::to_string(tid)); !s) return s;
  std::lock_guard lock(mutex_);
  joined_.push_back(tid);
  return ok_status();
#endif
}

}  // namespace gpuoverlap
