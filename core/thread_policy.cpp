#include "core/thread_policy.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/host_info.h"
#include "core/system_error.h"

#if defined(_WIN32)
#include <windows.h>

#include "core/wine.h"
#else
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace gpuoverlap {

std::vector<ThreadPolicy> thread_policies_here() {
#if defined(_WIN32)
  return {ThreadPolicy::idle, ThreadPolicy::background, ThreadPolicy::eco, ThreadPolicy::normal};
#else
  return {ThreadPolicy::idle, ThreadPolicy::batch_nice19, ThreadPolicy::nice19,
          ThreadPolicy::normal};
#endif
}

bool available_here(ThreadPolicy policy) {
  for (ThreadPolicy p : thread_policies_here())
    if (p == policy) return true;
  return false;
}

namespace {

Status not_here(ThreadPolicy policy) {
#if defined(_WIN32)
  const char* os = "Windows";
#else
  const char* os = "Linux";
#endif
  std::string here;
  for (ThreadPolicy p : thread_policies_here())
    here += (here.empty() ? "" : ", ") + std::string(to_string(p));
  return make_error("thread policy '" + std::string(to_string(policy)) + "' does not exist on " +
                        os + " (here: " + here + ")",
                    ErrorCategory::unsupported);
}

}  // namespace

#if defined(_WIN32)
namespace {
// THREAD_POWER_THROTTLING_STATE as Windows SDK 10.0.16299 defines it (Debian's mingw-w64
// headers have ThreadPowerThrottling but not the struct), version 1.
struct PowerThrottlingState {
  ULONG Version;
  ULONG ControlMask;
  ULONG StateMask;
};
constexpr ULONG kExecutionSpeed = 0x1;  // THREAD_POWER_THROTTLING_EXECUTION_SPEED
}  // namespace

Status apply_to_this_thread(ThreadPolicy policy) {
  switch (policy) {
    case ThreadPolicy::normal:
      return ok_status();
    case ThreadPolicy::idle:
      if (!SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_IDLE))
        return make_error("SetThreadPriority(THREAD_PRIORITY_IDLE) failed: error " +
                          std::to_string(GetLastError()));
      return ok_status();
    case ThreadPolicy::background:
      if (!SetThreadPriority(GetCurrentThread(), THREAD_MODE_BACKGROUND_BEGIN))
        return make_error("SetThreadPriority(THREAD_MODE_BACKGROUND_BEGIN) failed: error " +
                          std::to_string(GetLastError()));
      return ok_status();
    case ThreadPolicy::eco: {
      // The execution-speed bit in both masks turns EcoQoS on.
      PowerThrottlingState state{1, kExecutionSpeed, kExecutionSpeed};
      if (!SetThreadInformation(GetCurrentThread(), ThreadPowerThrottling, &state, sizeof state))
        return make_error("SetThreadInformation(ThreadPowerThrottling, EcoQoS) failed: error " +
                          std::to_string(GetLastError()));
      return ok_status();
    }
    case ThreadPolicy::batch_nice19:
    case ThreadPolicy::nice19:
      return not_here(policy);
  }
  return not_here(policy);
}
#else
namespace {

// nice applies per thread on Linux: setpriority(PRIO_PROCESS) with the thread's own id.
Status set_nice(int nice) {
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (setpriority(PRIO_PROCESS, tid, nice) != 0)
    return make_error("setpriority(nice " + std::to_string(nice) +
                      ") failed: " + std::strerror(errno));
  return ok_status();
}

Status set_policy(int policy, const char* name) {
  sched_param param{};
  param.sched_priority = 0;
  if (const int error = pthread_setschedparam(pthread_self(), policy, &param); error != 0)
    return make_error(std::string("pthread_setschedparam(") + name +
                      ") failed: " + std::strerror(error));
  return ok_status();
}

}  // namespace

Status apply_to_this_thread(ThreadPolicy policy) {
  switch (policy) {
    case ThreadPolicy::normal:
      return ok_status();
    case ThreadPolicy::idle:
      return set_policy(SCHED_IDLE, "SCHED_IDLE");
    case ThreadPolicy::batch_nice19:
      GPUOVERLAP_TRY(set_policy(SCHED_BATCH, "SCHED_BATCH"));
      return set_nice(19);
    case ThreadPolicy::nice19:
      GPUOVERLAP_TRY(set_policy(SCHED_OTHER, "SCHED_OTHER"));
      return set_nice(19);
    case ThreadPolicy::background:
    case ThreadPolicy::eco:
      return not_here(policy);
  }
  return not_here(policy);
}
#endif

#if defined(_WIN32)
namespace {
// EcoQoS as GetThreadInformation reports it, or why it could not be read (a Windows before
// 10.0.16299, Wine).
std::string eco_qos_read_back() {
  // Wine exports GetThreadInformation as a stub that aborts the process when called.
  if (const auto wine = wine_version())
    return ", EcoQoS not read back (Wine " + *wine + " does not implement GetThreadInformation)";
  PowerThrottlingState state{1, 0, 0};
  if (!GetThreadInformation(GetCurrentThread(), ThreadPowerThrottling, &state, sizeof state))
    return ", EcoQoS not readable (GetThreadInformation: error " + std::to_string(GetLastError()) +
           ")";
  // Without the control bit the system decides (EcoQoS may or may not apply).
  if ((state.ControlMask & kExecutionSpeed) == 0) return ", EcoQoS left to the system";
  return (state.StateMask & kExecutionSpeed) != 0 ? ", EcoQoS on" : ", EcoQoS off";
}
}  // namespace
#endif

PolicyProbe probe_policy(ThreadPolicy policy) {
  PolicyProbe probe;
  probe.policy = policy;
  // A thread of its own: none of the policies can be undone without a privilege on Linux.
  std::thread([&] {
    if (Status applied = apply_to_this_thread(policy); !applied)
      probe.refused = applied.error().message;
    probe.read_back = describe(this_thread_scheduling());
#if defined(_WIN32)
    if (policy == ThreadPolicy::eco) probe.read_back += eco_qos_read_back();
#endif
  }).join();
  return probe;
}

}  // namespace gpuoverlap

namespace gpuoverlap {

#if defined(_WIN32)
void name_this_thread(const char* name) {
  // SetThreadDescription is Windows 10 1607 and later (and Wine 5): found at run time, so the
  // tool still starts where it is missing.
  using SetDescription = HRESULT(WINAPI*)(HANDLE, PCWSTR);
  static const auto set_description = reinterpret_cast<SetDescription>(reinterpret_cast<void*>(
      GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "SetThreadDescription")));
  if (!set_description) return;
  wchar_t wide[64] = {};
  for (std::size_t i = 0; name[i] && i + 1 < std::size(wide); ++i)
    wide[i] = static_cast<wchar_t>(static_cast<unsigned char>(name[i]));
  set_description(GetCurrentThread(), wide);
}
#else
void name_this_thread(const char* name) {
  char cut[16] = {};
  std::strncpy(cut, name, sizeof cut - 1);
  pthread_setname_np(pthread_self(), cut);
}
#endif

#if defined(__linux__)
namespace {
// The kernel's struct sched_attr (include/uapi/linux/sched/types.h), the first version's
// fields: glibc 2.36 has neither the type nor a wrapper.
struct SchedAttr {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime;
  std::uint64_t sched_deadline;
  std::uint64_t sched_period;
};

std::optional<SchedAttr> this_thread_attr() {
  SchedAttr attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return std::nullopt;
  return attr;
}
}  // namespace

std::optional<std::uint64_t> this_thread_slice_ns() {
  const auto attr = this_thread_attr();
  if (!attr) return std::nullopt;
  return attr->sched_runtime;
}

Result<std::uint64_t> set_this_thread_slice_ns(std::uint64_t slice_ns) {
  auto attr = this_thread_attr();
  if (!attr) return make_error("sched_getattr: " + last_system_error(), ErrorCategory::environment);
  if (attr->sched_policy != SCHED_OTHER && attr->sched_policy != SCHED_BATCH)
    return make_error("a custom slice is for a fair thread (SCHED_OTHER or SCHED_BATCH)",
                      ErrorCategory::unsupported);
  attr->size = sizeof *attr;
  attr->sched_flags = 0;
  attr->sched_runtime = slice_ns;
  if (syscall(SYS_sched_setattr, 0, &*attr, 0) != 0)
    return make_error(
        "sched_setattr(sched_runtime = " + std::to_string(slice_ns) + "): " + last_system_error(),
        ErrorCategory::environment);
  const auto back = this_thread_slice_ns();
  if (slice_ns != 0 && (!back || *back != slice_ns))
    return make_error("the kernel took sched_runtime = " + std::to_string(slice_ns) +
                          " ns but reads back " + (back ? std::to_string(*back) : "nothing") +
                          ": it keeps no custom slice (EEVDF's, Linux 6.12 and later)",
                      ErrorCategory::unsupported);
  return back.value_or(0);
}

const std::string& custom_slice_unsupported_reason() {
  static const std::string reason = [] {
    std::string why;
    std::thread probe([&] {
      const auto set = set_this_thread_slice_ns(1'000'000);
      if (!set) why = set.error().message;
    });
    probe.join();
    return why;
  }();
  return reason;
}
#else
std::optional<std::uint64_t> this_thread_slice_ns() { return std::nullopt; }
Result<std::uint64_t> set_this_thread_slice_ns(std::uint64_t) {
  return make_error("a custom slice is Linux's (EEVDF, 6.12 and later); this is not Linux",
                    ErrorCategory::unsupported);
}
const std::string& custom_slice_unsupported_reason() {
  static const std::string reason =
      "a custom slice is Linux's (EEVDF, 6.12 and later); this is not Linux";
  return reason;
}
#endif

}  // namespace gpuoverlap
