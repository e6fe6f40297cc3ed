// load_process.h on Windows: CreateProcessW with the child's stdin and stdout on two anonymous
// pipes, in a job object that kills it when this process's handle closes (this process ended,
// however it ended), and in a new process group so that a console's Ctrl+C reaches only the
// parent, which stops the child in order.
#include <windows.h>

#include <filesystem>
#include <iterator>

#include "core/clock.h"
#include "core/system_error.h"
#include "preemption/load_process.h"

namespace gpuoverlap::preemption {

namespace {

Error win32_error(const std::string& what) { return make_error(what + ": " + last_system_error()); }

// One argument as the C runtime's command-line parser reads it back: quoted when it has a
// space, tab or quote; a run of backslashes is doubled where a quote follows it.
std::wstring quote_argument(const std::wstring& argument) {
  if (!argument.empty() && argument.find_first_of(L" \t\"") == std::wstring::npos) return argument;
  std::wstring out = L"\"";
  std::size_t backslashes = 0;
  for (wchar_t c : argument) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    out.append(c == L'"' ? 2 * backslashes + 1 : backslashes, L'\\');
    backslashes = 0;
    out += c;
  }
  out.append(2 * backslashes, L'\\');
  return out + L"\"";
}

std::wstring widen(const std::string& text) {
  if (text.empty()) return {};
  const int length =
      MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(length), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), length);
  return out;
}

bool write_all(HANDLE handle, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    DWORD written = 0;
    if (!WriteFile(handle, text.data() + done, static_cast<DWORD>(text.size() - done), &written,
                   nullptr) ||
        written == 0)
      return false;
    done += written;
  }
  return true;
}

void close_handle(void*& handle) {
  if (handle && handle != INVALID_HANDLE_VALUE) CloseHandle(static_cast<HANDLE>(handle));
  handle = nullptr;
}

std::string describe_exit(HANDLE process) {
  DWORD code = 0;
  if (!GetExitCodeProcess(process, &code)) return "ended";
  return "exit " + std::to_string(code);
}

}  // namespace

Result<std::unique_ptr<LoadProcess>> LoadProcess::start(const std::string& executable,
                                                        const std::vector<std::string>& arguments) {
  // The child's ends are inheritable, the parent's are not.
  SECURITY_ATTRIBUTES inheritable{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE child_in = nullptr, to_child = nullptr, from_child = nullptr, child_out = nullptr;
  if (!CreatePipe(&child_in, &to_child, &inheritable, 0)) return win32_error("CreatePipe");
  if (!CreatePipe(&from_child, &child_out, &inheritable, 0)) {
    const Error e = win32_error("CreatePipe");
    CloseHandle(child_in);
    CloseHandle(to_child);
    return e;
  }
  SetHandleInformation(to_child, HANDLE_FLAG_INHERIT, 0);
  SetHandleInformation(from_child, HANDLE_FLAG_INHERIT, 0);
  HANDLE child_err = nullptr;
  DuplicateHandle(GetCurrentProcess(), GetStdHandle(STD_ERROR_HANDLE), GetCurrentProcess(),
                  &child_err, 0, TRUE, DUPLICATE_SAME_ACCESS);

  std::wstring command_line = quote_argument(std::filesystem::path(executable).wstring());
  for (const std::string& a : arguments) command_line += L" " + quote_argument(widen(a));
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = child_in;
  startup.hStdOutput = child_out;
  startup.hStdError = child_err;
  PROCESS_INFORMATION info{};
  HANDLE job = CreateJobObjectW(nullptr, nullptr);
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  const bool job_ready = job && SetInformationJobObject(job, JobObjectExtendedLimitInformation,
                                                        &limits, sizeof limits);
  // Suspended until it is in the job, so that no moment exists where it could outlive us.
  const BOOL created =
      job_ready && CreateProcessW(nullptr, command_line.data(), nullptr, nullptr, TRUE,
                                  CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP, nullptr, nullptr,
                                  &startup, &info);
  const Error failure = win32_error(!job_ready ? "CreateJobObject" : "CreateProcess");
  CloseHandle(child_in);
  CloseHandle(child_out);
  if (child_err) CloseHandle(child_err);
  if (!created) {
    CloseHandle(to_child);
    CloseHandle(from_child);
    if (job) CloseHandle(job);
    return failure;
  }
  if (!AssignProcessToJobObject(job, info.hProcess)) {
    const Error e = win32_error("AssignProcessToJobObject");
    TerminateProcess(info.hProcess, 125);
    CloseHandle(info.hThread);
    CloseHandle(info.hProcess);
    CloseHandle(to_child);
    CloseHandle(from_child);
    CloseHandle(job);
    return e;
  }
  ResumeThread(info.hThread);
  CloseHandle(info.hThread);
  return std::unique_ptr<LoadProcess>(new LoadProcess(static_cast<pid_t>(info.dwProcessId),
                                                      info.hProcess, job, to_child, from_child));
}

LoadProcess::~LoadProcess() {
  if (pid_ > 0 && process_) {
    TerminateProcess(static_cast<HANDLE>(process_), 137);
    WaitForSingleObject(static_cast<HANDLE>(process_), 10'000);
  }
  close_handle(process_);
  close_handle(to_child_);
  close_handle(from_child_);
  close_handle(job_);
}

Result<nlohmann::json> LoadProcess::wait_for(std::string_view tag, std::int64_t deadline_ns,
                                             const std::function<bool()>& cancel) {
  for (;;) {
    if (auto line = take_tagged_line(buffer_, tag)) return *line;
    const std::int64_t remaining_ms = (deadline_ns - monotonic_raw_ns()) / 1'000'000;
    if (remaining_ms <= 0)
      return make_error("the load process did not send '" + std::string(tag) + "' in time");
    if (cancel && cancel()) return make_error("interrupted");
    // Anonymous pipes have no timed read: peek, and between peeks wait on the process (which
    // wakes at once when it ends) for at most 2 ms.
    DWORD available = 0;
    if (!PeekNamedPipe(static_cast<HANDLE>(from_child_), nullptr, 0, nullptr, &available, nullptr))
      return make_error("the load process ended before it sent '" + std::string(tag) + "'");
    if (available == 0) {
      WaitForSingleObject(static_cast<HANDLE>(process_),
                          static_cast<DWORD>(std::min<std::int64_t>(remaining_ms, 2)));
      continue;
    }
    char chunk[65536];
    DWORD received = 0;
    if (!ReadFile(static_cast<HANDLE>(from_child_), chunk, std::min<DWORD>(available, sizeof chunk),
                  &received, nullptr) ||
        received == 0)
      return make_error("the load process ended before it sent '" + std::string(tag) + "'");
    buffer_.append(chunk, received);
  }
}

void LoadProcess::request_stop() {
  if (!to_child_) return;
  write_all(static_cast<HANDLE>(to_child_), "stop\n");
  close_handle(to_child_);  // the child then also sees its stdin end
}

std::string LoadProcess::finish(std::int64_t deadline_ns) {
  if (pid_ <= 0) return "not running";
  request_stop();
  const std::int64_t remaining_ms =
      std::max<std::int64_t>((deadline_ns - monotonic_raw_ns()) / 1'000'000, 0);
  const HANDLE process = static_cast<HANDLE>(process_);
  std::string how;
  if (WaitForSingleObject(process, static_cast<DWORD>(std::min<std::int64_t>(
                                       remaining_ms, INFINITE - 1))) == WAIT_OBJECT_0) {
    how = describe_exit(process);
  } else {
    TerminateProcess(process, 137);
    WaitForSingleObject(process, 10'000);
    how = "killed after its deadline";
  }
  pid_ = -1;
  close_handle(process_);
  return how;
}

// The child's end. Its parent cannot die unnoticed: the job object kills this process first.
ParentLink::ParentLink() = default;

bool ParentLink::stop_requested() {
  if (stopped_) return true;
  const HANDLE input = GetStdHandle(STD_INPUT_HANDLE);
  for (;;) {
    DWORD available = 0;
    // Fails when the parent closed its end (ERROR_BROKEN_PIPE) or stdin is no pipe at all
    // (no parent to listen to): either way, stop.
    if (!PeekNamedPipe(input, nullptr, 0, nullptr, &available, nullptr)) {
      stopped_ = true;
      return true;
    }
    if (available == 0) return false;
    char chunk[256];
    DWORD received = 0;
    if (!ReadFile(input, chunk, std::min<DWORD>(available, sizeof chunk), &received, nullptr) ||
        received == 0) {
      stopped_ = true;
      return true;
    }
    buffer_.append(chunk, received);
    if (buffer_.find("stop\n") != std::string::npos) {
      stopped_ = true;
      return true;
    }
  }
}

bool ParentLink::send(std::string_view tag, const nlohmann::json& value) {
  return write_all(GetStdHandle(STD_OUTPUT_HANDLE), std::string(tag) + " " + value.dump() + "\n");
}

Result<std::string> current_executable() {
  wchar_t path[MAX_PATH * 4];
  const DWORD length = GetModuleFileNameW(nullptr, path, static_cast<DWORD>(std::size(path)));
  if (length == 0 || length >= std::size(path)) return make_error("cannot find this executable");
  return std::filesystem::path(std::wstring(path, length)).string();
}

}  // namespace gpuoverlap::preemption
