#include "schedtrace/tracefs_recording.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "core/system_error.h"
#include "schedtrace/sched_record.h"
#include "schedtrace/thread_waits.h"

#if defined(__linux__)
#include <fcntl.h>
#include <signal.h>
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

// A file of tracefs or /proc, whole; an error when it cannot be opened or a read fails (a
// record cut short by a failed read would look like a quiet machine).
Result<std::string> read_file(const fs::path& path) {
#if defined(__linux__)
  // By read() into one buffer, appended: the `trace` file has no size (the kernel formats it
  // as it is read, a page or so per call) and is tens of MB; a stream's reads and copies took
  // several times as long.
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error(fmt::format("cannot open {}: {}", path.string(), last_system_error()),
                      ErrorCategory::environment);
  std::vector<char> buffer(64 * 1024);
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      Error error = make_error(fmt::format("reading {} failed after {} bytes: {}", path.string(),
                                           text.size(), last_system_error()),
                               ErrorCategory::environment);
      ::close(fd);
      return error;
    }
    if (got == 0) break;
    text.append(buffer.data(), static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
#else
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open " + path.string(), ErrorCategory::environment);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
#endif
}

// The file's text, or "" where it cannot be read (an optional fact: a clock's name, a CPU's
// stats, a process's command line).
std::string read_file_or_empty(const fs::path& path) {
  Result<std::string> text = read_file(path);
  return text ? std::move(text).value() : std::string();
}

// Instances are named gpuoverlap-<pid>-<n>.
constexpr std::string_view kInstancePrefix = "gpuoverlap-";

bool process_is_gone(long pid) {
#if defined(__linux__)
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
#else
  (void)pid;  // no tracefs instances to clean up there
  return false;
#endif
}

// The instances of this process that are not recording, by buffer size; removed at exit.
class InstancePool {
 public:
  // An idle instance: `drained` when its last record was read to its end (its buffers are
  // empty), else it may hold old events.
  struct Kept {
    std::string dir;  // "" when none
    std::uint32_t buffer_kb_per_cpu = 0;
    bool drained = false;
  };
  ~InstancePool() {
    std::error_code ec;
    for (const Kept& kept : idle_) fs::remove(kept.dir, ec);
  }
  // An idle instance of that buffer size, or one with dir "" (then the caller makes one).
  Kept take(std::uint32_t buffer_kb_per_cpu) {
    const std::lock_guard lock(mutex_);
    const auto it = std::find_if(idle_.begin(), idle_.end(), [&](const Kept& e) {
      return e.buffer_kb_per_cpu == buffer_kb_per_cpu;
    });
    if (it == idle_.end()) return {};
    Kept kept = std::move(*it);
    idle_.erase(it);
    return kept;
  }
  void give_back(std::string dir, std::uint32_t buffer_kb_per_cpu, bool drained) {
    const std::lock_guard lock(mutex_);
    idle_.push_back(Kept{std::move(dir), buffer_kb_per_cpu, drained});
  }
  // A new instance's name; the first call removes what killed runs of the tool left.
  std::string next_name(const fs::path& instances) {
    const std::lock_guard lock(mutex_);
    if (made_++ == 0) remove_left_behind(instances);
    return fmt::format("{}{}-{}", kInstancePrefix, getpid(), made_ - 1);
  }
  std::size_t made() {
    const std::lock_guard lock(mutex_);
    return made_;
  }

 private:
  static void remove_left_behind(const fs::path& instances) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(instances, ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with(kInstancePrefix)) continue;
      const long pid = std::strtol(name.c_str() + kInstancePrefix.size(), nullptr, 10);
      std::error_code remove_ec;
      if (process_is_gone(pid)) fs::remove(entry.path(), remove_ec);
    }
  }
  std::mutex mutex_;
  std::vector<Kept> idle_;
  std::size_t made_ = 0;
};

InstancePool& pool() {
  static InstancePool instances;
  return instances;
}

// A per_cpu stats file's "overrun: N" (the events the buffer overwrote); 0 where it lacks one.
std::int64_t stats_overrun(std::string_view stats) {
  const std::size_t at = stats.find("overrun:");
  if (at == std::string_view::npos) return 0;
  return std::strtoll(std::string(stats.substr(at + 8, 24)).c_str(), nullptr, 10);
}

// Every CPU's overrun count of an instance (per_cpu/cpuN/stats).
std::map<std::int32_t, std::int64_t> overrun_by_cpu(const fs::path& dir) {
  std::map<std::int32_t, std::int64_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "per_cpu", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("cpu"))
      out[std::atoi(name.c_str() + 3)] = stats_overrun(read_file_or_empty(entry.path() / "stats"));
  }
  return out;
}

}  // namespace

std::size_t tracefs_instances_made() { return pool().made(); }

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
  if (read_file_or_empty(root / "trace_clock").find("mono_raw") == std::string::npos)
    return "the kernel's trace clocks lack mono_raw";
  return "";
#endif
}

Result<TracefsRecording> TracefsRecording::start(std::uint32_t buffer_kb_per_cpu) {
  if (std::string why = sched_trace_unavailable_reason(); !why.empty())
    return make_error(why, ErrorCategory::environment);
  if (InstancePool::Kept kept = pool().take(buffer_kb_per_cpu); !kept.dir.empty()) {
    TracefsRecording recording(kept.dir, buffer_kb_per_cpu);
    if (kept.drained) {
      // Read to its end, the buffer is empty: only its overrun counts remain, which go on
      // counting, so this record's are counted from here. (Clearing it instead, by truncating
      // `trace`, waits for an RCU grace period: about 30 ms a scenario.)
      recording.overrun_at_start_ = overrun_by_cpu(fs::path(kept.dir));
      recording.instance_ = "kept, drained";
    } else if (Status s = write_file(fs::path(kept.dir) / "trace", ""); !s) {
      // Truncating `trace` clears every CPU's buffer and its overrun count.
      return s.error();
    } else {
      recording.instance_ = "kept, cleared";
    }
    if (Status s = write_file(fs::path(kept.dir) / "tracing_on", "1"); !s) return s.error();
    return recording;
  }
  const fs::path instances = fs::path(tracefs_root()) / "instances";
  const fs::path dir = instances / pool().next_name(instances);
  std::error_code ec;
  if (fs::exists(dir, ec)) fs::remove(dir, ec);  // an instance is removed with rmdir
  if (!fs::create_directory(dir, ec))
    return make_error(
        fmt::format("cannot create the trace instance {}: {}", dir.string(), ec.message()),
        ErrorCategory::environment);
  TracefsRecording recording(dir.string(), buffer_kb_per_cpu);
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
    : dir_(std::move(other.dir_)),
      buffer_kb_per_cpu_(other.buffer_kb_per_cpu_),
      overrun_at_start_(std::move(other.overrun_at_start_)),
      instance_(std::move(other.instance_)) {
  other.dir_.clear();
}

TracefsRecording::~TracefsRecording() {
  if (dir_.empty()) return;
  // Kept only when it is off: an instance left on would record until the next start.
  if (write_file(fs::path(dir_) / "tracing_on", "0")) {
    pool().give_back(std::move(dir_), buffer_kb_per_cpu_, /*drained=*/false);
  } else {
    std::error_code ec;
    fs::remove(dir_, ec);
  }
}

namespace {

// The page layout and the formats of the traced events, read once per process (they are the
// kernel's and do not change while it runs).
Result<std::shared_ptr<const RawFormats>> load_raw_formats() {
  static std::mutex mutex;
  static std::shared_ptr<const RawFormats> loaded;
  const std::lock_guard lock(mutex);
  if (loaded) return loaded;
  const fs::path events = fs::path(tracefs_root()) / "events";
  auto formats = std::make_shared<RawFormats>();
  Result<std::string> header = read_file(events / "header_page");
  if (!header) return header.error();
  if (Status s = parse_header_page(*header, *formats); !s) return s.error();
  for (const char* event : kEvents) {
    Result<std::string> text = read_file(events / event / "format");
    if (!text) return text.error();
    Result<RawEventFormat> format = parse_event_format(*text);
    if (!format)
      return format.error()
          .with_context(fmt::format("{}/format: ", event))
          .with_category(ErrorCategory::environment);
    if (format->name == "sched_switch") formats->state_letters = parse_state_letters(*text);
    formats->events.emplace(format->id, std::move(*format));
  }
  loaded = std::move(formats);
  return loaded;
}

// One CPU's buffer, whole pages, until it is empty (tracing is off: nothing more comes).
Result<std::string> read_raw_pages(const fs::path& path, std::size_t page_bytes) {
  std::string pages;
#if defined(__linux__)
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return make_error(fmt::format("cannot open {}: {}", path.string(), last_system_error()),
                      ErrorCategory::environment);
  std::vector<char> buffer(page_bytes * 16);
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (got < 0) {
      Error error = make_error(fmt::format("reading {} failed after {} bytes: {}", path.string(),
                                           pages.size(), last_system_error()),
                               ErrorCategory::environment);
      ::close(fd);
      return error;
    }
    if (got == 0) break;
    pages.append(buffer.data(), static_cast<std::size_t>(got));
  }
  ::close(fd);
  pages.resize(pages.size() / page_bytes * page_bytes);
#else
  (void)path;
  (void)page_bytes;
#endif
  return pages;
}

}  // namespace

std::size_t SchedTraceData::bytes() const {
  std::size_t total = 0;
  for (const RawCpuPages& cpu : cpus) total += cpu.pages.size();
  return total;
}

std::vector<std::int32_t> SchedTraceData::overrun_cpus() const {
  std::vector<std::int32_t> out;
  for (const auto& [cpu, count] : overrun_by_cpu) out.push_back(cpu);
  return out;
}

SchedRecord SchedTraceData::parse() const {
  if (!formats) return {};
  SchedRecord record = parse_raw_record(cpus, *formats, tgid_of, name_of);
  for (const auto& [cpu, overrun] : overrun_by_cpu) {
    std::int64_t& lost = record.lost_events_by_cpu[cpu];
    lost = std::max(lost, overrun);
  }
  return record;
}

Result<SchedTraceData> TracefsRecording::stop() {
  if (dir_.empty()) return make_error("the trace instance was already stopped");
  const fs::path dir = dir_;
  if (Status s = write_file(dir / "tracing_on", "0"); !s) return s.error();
  SchedTraceData out;
  auto formats = load_raw_formats();
  if (!formats) return formats.error();
  out.formats = *formats;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "per_cpu", ec)) {
    const std::string name = entry.path().filename().string();  // "cpu3"
    if (!name.starts_with("cpu")) continue;
    const std::int32_t cpu = std::atoi(name.c_str() + 3);
    Result<std::string> pages =
        read_raw_pages(entry.path() / "trace_pipe_raw", out.formats->page_bytes);
    if (!pages) return pages.error();
    out.cpus.push_back(RawCpuPages{cpu, std::move(*pages)});
    const auto before = overrun_at_start_.find(cpu);
    const std::int64_t overrun = stats_overrun(read_file_or_empty(entry.path() / "stats")) -
                                 (before == overrun_at_start_.end() ? 0 : before->second);
    if (overrun > 0) out.overrun_by_cpu[cpu] = overrun;
  }
  if (ec)
    return make_error(fmt::format("cannot list {}: {}", (dir / "per_cpu").string(), ec.message()),
                      ErrorCategory::environment);
  std::sort(out.cpus.begin(), out.cpus.end(),
            [](const RawCpuPages& a, const RawCpuPages& b) { return a.cpu < b.cpu; });
  // The thread-to-process map is the kernel's, kept for every instance with record-tgid.
  out.tgid_of = parse_saved_tgids(read_file_or_empty(fs::path(tracefs_root()) / "saved_tgids"));
  out.name_of =
      parse_saved_cmdlines(read_file_or_empty(fs::path(tracefs_root()) / "saved_cmdlines"));
  pool().give_back(std::move(dir_), buffer_kb_per_cpu_, /*drained=*/true);
  dir_.clear();
  return out;
}

bool is_kernel_thread_now(std::int32_t tid, const std::string& comm) {
#if defined(__linux__)
  std::error_code ec;
  const fs::path cmdline = fmt::format("/proc/{}/cmdline", tid);
  if (tid > 0 && fs::exists(cmdline, ec)) return read_file_or_empty(cmdline).empty();
#else
  (void)tid;  // by its name alone
#endif
  return is_kernel_thread_name(comm);
}

}  // namespace gpuoverlap
