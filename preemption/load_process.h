// The load in a second process (`run --load-process`): the parent starts a child gpuoverlap
// (`gpuoverlap load-process`, its own device and queue, as a separate application would be),
// waits until it loads, runs the urgent job, then stops it and merges its timeline. POSIX and
// Win32, no GPU API.
//
// The child never outlives the parent:
//  - it is killed by the kernel when the parent dies (PR_SET_PDEATHSIG, SIGKILL), checked
//    against the race where the parent died before that was set;
//  - it stops loading when the parent closes the control socket or sends "stop";
//  - it ignores SIGINT (a terminal's Ctrl-C reaches the whole process group; the parent
//    stops it in order, then writes what was measured);
//  - the parent's destructor kills and reaps a child still running, and finish() waits only
//    until a deadline before SIGKILL.
// On Windows (load_process_windows.cpp) the same contract holds with a job object that kills
// the child when the parent's handle to it closes (KILL_ON_JOB_CLOSE), a new process group
// (Ctrl+C is not delivered to it), and a pipe pair in place of the socket.
// Protocol on the child's stdin/stdout (one Unix socket): the child writes one line
// "loading <json>" once it loads continuously and "result <json>" before it exits; the parent
// writes "stop\n".
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "timeline/records.h"

namespace gpuoverlap::preemption {

class LoadProcess {
 public:
  // Starts `executable` with `arguments` (argv[1...]). The child's stderr is the parent's.
  static Result<std::unique_ptr<LoadProcess>> start(const std::string& executable,
                                                    const std::vector<std::string>& arguments);
  ~LoadProcess();
  LoadProcess(const LoadProcess&) = delete;
  LoadProcess& operator=(const LoadProcess&) = delete;

  // The next line starting with "<tag> " (earlier lines are skipped), parsed as JSON. An error
  // when the child sends "failed <json string>", ends first, sends bad JSON, `cancel`
  // returns true (checked every 100 ms), or deadline_ns (CLOCK_MONOTONIC_RAW) passes.
  Result<nlohmann::json> wait_for(std::string_view tag, std::int64_t deadline_ns,
                                  const std::function<bool()>& cancel = {});
  // Asks the child to stop loading (it then sends its result and exits).
  void request_stop();
  // Waits for the child to exit until deadline_ns, then kills it. Says how it ended.
  std::string finish(std::int64_t deadline_ns);
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

 private:
#if defined(_WIN32)
  // Handles as void* so that this header needs no windows.h.
  LoadProcess(pid_t pid, void* process, void* job, void* to_child, void* from_child)
      : pid_(pid), process_(process), job_(job), to_child_(to_child), from_child_(from_child) {}
  pid_t pid_ = -1;
  void* process_ = nullptr;     // the child's process handle
  void* job_ = nullptr;         // KILL_ON_JOB_CLOSE: the child dies with this process
  void* to_child_ = nullptr;    // the write end of the child's stdin
  void* from_child_ = nullptr;  // the read end of the child's stdout
#else
  LoadProcess(pid_t pid, int socket) : pid_(pid), socket_(socket) {}
  pid_t pid_ = -1;
  int socket_ = -1;
#endif
  std::string buffer_;  // received, not yet returned
};

// The child's end: stdin and stdout are the socket.
class ParentLink {
 public:
  ParentLink();
  // True once the parent sent "stop", closed the socket or died. Never blocks.
  bool stop_requested();
  // Writes "<tag> <json>\n" to stdout in full. False when the parent is gone.
  static bool send(std::string_view tag, const nlohmann::json& value);

 private:
  bool stopped_ = false;
  pid_t parent_ = 0;
  std::string buffer_;
};

// The records a child sends: every field the analysis reads, on the child's own time origin.
nlohmann::json records_to_json(const std::vector<WorkloadFrameRecord>& records);
Result<std::vector<WorkloadFrameRecord>> records_from_json(const nlohmann::json& json);

// What the load process sends with "result": its records (on its own time origin), its run
// facts (to_json) and its device's meta. merge_load_process adds them to the parent's
// timeline: the records keep their workload indices (the load parts come first in both
// scenarios) and move to the parent's time origin; the load's sizes and calibration replace
// the parent's. Contract for the merge: timeline.preemption is set.
nlohmann::json load_process_result(const ScenarioTimeline& timeline);
Status merge_load_process(ScenarioTimeline& timeline, const nlohmann::json& result);

// The protocol's reading side, the same on every platform: drops complete lines of `buffer`
// until one starts with "<tag> " and returns its JSON; an Error for a "failed <reason>" line or
// malformed JSON; nullopt when no complete line with the tag is left (the rest stays).
std::optional<Result<nlohmann::json>> take_tagged_line(std::string& buffer, std::string_view tag);

// This process's executable (/proc/self/exe), for starting the child.
Result<std::string> current_executable();

}  // namespace gpuoverlap::preemption
