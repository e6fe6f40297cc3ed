#include "schedtrace/tracefs_recording.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "schedtrace/sched_record.h"
#include "schedtrace/thread_waits.h"

#if defined(__linux__)
#include <sys/mount.h>
#include <unistd.h>
#endif

namespace gpuoverlap {

namespace fs = std::filesystem;

namespace {

// The events the attribution reads (sched_record.h), by their tracefs paths.
constexpr const char* kEvents[] = {
    "sched/sched_switch",
    "sched/sched_wakeup",
    "sched/sched_wakeup_new",
    "sched/sched_migrate_task",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
    "irq_vectors/local_timer_entry",
    "irq_vectors/reschedule_entry",
    "irq_vectors/call_function_entry",
    "irq_vectors/call_function_single_entry",
    "irq/irq_handler_entry",
    "raw_syscalls/sys_enter",
};

Status write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  if (out) out << text;
  out.flush();
  if (!out)
    return make_error(fmt::format("cannot write '{}' to {}", text, path.string()),
                      ErrorCategory::environment);
  return ok_status();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string tracefs_root() {
  const char* root = std::getenv("GPUOVERLAP_TRACEFS");
  return root != nullptr && *root != '\0' ? root : "/sys/kernel/tracing";
}

std::string sched_trace_unavailable_reason() {
#if !defined(__linux__)
  return "the kernel's scheduling record is read from Linux's tracefs; this is not Linux";
#elif !defined(__x86_64__)
  return "the traced system call numbers are x86-64's; this is another architecture";
#else
  const fs::path root = tracefs_root();
  std::error_code ec;
  if (!fs::is_directory(root / "instances", ec)) {
    if (geteuid() != 0)
      return fmt::format("tracefs at {} is not mounted and needs root", root.string());
    if (!fs::is_directory(root, ec))
      return fmt::format("no folder {} to mount tracefs on", root.string());
    if (::mount("nodev", root.c_str(), "tracefs", 0, nullptr) != 0 ||
        !fs::is_directory(root / "instances", ec))
      return fmt::format("mount -t tracefs nodev {} failed", root.string());
  }
  if (access((root / "instances").c_str(), W_OK) != 0)
    return fmt::format("{} is not writable (tracefs needs root)", (root / "instances").string());
  for (const char* event : kEvents)
    if (!fs::is_directory(root / "events" / event, ec))
      return fmt::format("the kernel has no trace event {}", event);
  if (read_file(root / "trace_clock").find("mono_raw") == std::string::npos)
    return "the kernel's trace clocks lack mono_raw";
  return "";
#endif
}

Result<TracefsRecording> TracefsRecording::start(const std::string& name,
                                                 std::uint32_t buffer_kb_per_cpu) {
  if (std::string why = sched_trace_unavailable_reason(); !why.empty())
    return make_error(why, ErrorCategory::environment);
  const fs::path dir = fs::path(tracefs_root()) / "instances" / name;
  std::error_code ec;
  if (fs::exists(dir, ec)) fs::remove(dir, ec);  // an instance is removed with rmdir
  if (!fs::create_directory(dir, ec))
    return make_error(
        fmt::format("cannot create the trace instance {}: {}", dir.string(), ec.message()),
        ErrorCategory::environment);
  TracefsRecording recording(dir.string());
  const std::string filter = fmt::format("id == {} || id == {} || id == {}", kSyscallSchedYield,
                                         kSyscallClone, kSyscallClone3);
  for (const auto& [file, text] : std::initializer_list<std::pair<const char*, std::string>>{
           {"trace_clock", "mono_raw"},
           {"buffer_size_kb", std::to_string(buffer_kb_per_cpu)},
           {"options/record-tgid", "1"},
           {"events/raw_syscalls/sys_enter/filter", filter}}) {
    if (Status s = write_file(dir / file, text); !s) return s.error();
  }
  for (const char* event : kEvents)
    if (Status s = write_file(dir / "events" / event / "enable", "1"); !s) return s.error();
  if (Status s = write_file(dir / "tracing_on", "1"); !s) return s.error();
  return recording;
}

TracefsRecording::TracefsRecording(TracefsRecording&& other) noexcept
    : dir_(std::move(other.dir_)) {
  other.dir_.clear();
}

TracefsRecording::~TracefsRecording() {
  if (dir_.empty()) return;
  (void)write_file(fs::path(dir_) / "tracing_on", "0");
  std::error_code ec;
  fs::remove(dir_, ec);
}

Result<SchedTraceText> TracefsRecording::stop() {
  if (dir_.empty()) return make_error("the trace instance was already stopped");
  const fs::path dir = dir_;
  if (Status s = write_file(dir / "tracing_on", "0"); !s) return s.error();
  SchedTraceText out;
  out.text = read_file(dir / "trace");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "per_cpu", ec)) {
    const std::string cpu = entry.path().filename().string();  // "cpu3"
    const std::string stats = read_file(entry.path() / "stats");
    if (cpu.starts_with("cpu") && stats.find("overrun: 0\n") == std::string::npos &&
        stats.find("overrun:") != std::string::npos)
      out.overrun_cpus.push_back(std::atoi(cpu.c_str() + 3));
  }
  std::sort(out.overrun_cpus.begin(), out.overrun_cpus.end());
  fs::remove(dir, ec);
  dir_.clear();
  if (ec)
    return make_error(
        fmt::format("cannot remove the trace instance {}: {}", dir.string(), ec.message()),
        ErrorCategory::environment);
  return out;
}

bool is_kernel_thread_now(std::int32_t tid, const std::string& comm) {
#if defined(__linux__)
  std::error_code ec;
  const fs::path cmdline = fmt::format("/proc/{}/cmdline", tid);
  if (tid > 0 && fs::exists(cmdline, ec)) return read_file(cmdline).empty();
#endif
  return is_kernel_thread_name(comm);
}

}  // namespace gpuoverlap
