// load_process.h on Windows: the second process of --load-process is not implemented there yet
// (it needs CreateProcess, a pipe pair and a job object in place of fork, a Unix socket and
// PR_SET_PDEATHSIG). Starting one fails with that reason, so a preemption scenario with
// process = "separate" is refused before any GPU work; process = "same" is unaffected.
#include <windows.h>

#include <filesystem>
#include <iterator>

#include "preemption/load_process.h"

namespace gpuoverlap::preemption {

Result<std::unique_ptr<LoadProcess>> LoadProcess::start(const std::string&,
                                                        const std::vector<std::string>&) {
  return make_error(
      "a load in a second process (--load-process, process = \"separate\") is not available "
      "on Windows yet; run the load in the same process");
}

LoadProcess::~LoadProcess() = default;

Result<nlohmann::json> LoadProcess::wait_for(std::string_view, std::int64_t,
                                             const std::function<bool()>&) {
  return make_error("no load process on Windows");
}

void LoadProcess::request_stop() {}

std::string LoadProcess::finish(std::int64_t) { return "not started"; }

ParentLink::ParentLink() = default;

// No parent can talk to this process on Windows: it stops at once.
bool ParentLink::stop_requested() { return true; }

bool ParentLink::send(std::string_view, const nlohmann::json&) { return false; }

Result<std::string> current_executable() {
  wchar_t path[MAX_PATH * 4];
  const DWORD length = GetModuleFileNameW(nullptr, path, static_cast<DWORD>(std::size(path)));
  if (length == 0 || length >= std::size(path)) return make_error("cannot find this executable");
  return std::filesystem::path(std::wstring(path, length)).string();
}

}  // namespace gpuoverlap::preemption
