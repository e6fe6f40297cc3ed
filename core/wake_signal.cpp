#include "core/wake_signal.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#endif

#include <algorithm>

#include "core/clock.h"

namespace gpuoverlap {

#if defined(_WIN32)

WakeSignal::WakeSignal() : event_(CreateEventW(nullptr, FALSE, FALSE, nullptr)) {}
WakeSignal::~WakeSignal() {
  if (event_) CloseHandle(static_cast<HANDLE>(event_));
}

bool WakeSignal::raise() {
  value_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst) == 0 || !event_) return false;
  SetEvent(static_cast<HANDLE>(event_));
  return true;
}

bool WakeSignal::wait_past(std::uint32_t seen, std::int64_t deadline_ns) {
  for (;;) {
    if (value_.load(std::memory_order_acquire) != seen) return true;
    const std::int64_t left_ns = deadline_ns - monotonic_raw_ns();
    if (left_ns <= 0) return false;
    sleeping_.store(1, std::memory_order_seq_cst);
    // Checked again after saying so: a raise in between either saw sleeping_ (and sets the
    // event, which the wait below returns on at once) or came before this load.
    if (value_.load(std::memory_order_seq_cst) != seen) {
      sleeping_.store(0, std::memory_order_relaxed);
      return true;
    }
    const DWORD ms =
        static_cast<DWORD>(std::min<std::int64_t>((left_ns + 999'999) / 1'000'000, INFINITE - 1));
    if (event_)
      WaitForSingleObject(static_cast<HANDLE>(event_), ms);
    else
      Sleep(1);  // no event could be made: a poll, still bounded by the deadline
    sleeping_.store(0, std::memory_order_relaxed);
  }
}

void sleep_while(std::atomic<std::uint32_t>& word, std::uint32_t seen) {
  word.wait(seen, std::memory_order_acquire);
}
void sleep_while_for(std::atomic<std::uint32_t>& word, std::uint32_t seen,
                     std::int64_t timeout_ns) {
  const std::int64_t deadline_ns = monotonic_raw_ns() + timeout_ns;
  while (word.load(std::memory_order_acquire) == seen && monotonic_raw_ns() < deadline_ns) Sleep(1);
}
void wake_one(std::atomic<std::uint32_t>& word) { word.notify_one(); }
void wake_all(std::atomic<std::uint32_t>& word) { word.notify_all(); }

#else

namespace {

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value, const timespec* timeout) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr,
                 0);
}

}  // namespace

WakeSignal::WakeSignal() = default;
WakeSignal::~WakeSignal() = default;

void sleep_while(std::atomic<std::uint32_t>& word, std::uint32_t seen) {
  if (word.load(std::memory_order_acquire) != seen) return;
  futex(word, FUTEX_WAIT_PRIVATE, seen, nullptr);
}
void sleep_while_for(std::atomic<std::uint32_t>& word, std::uint32_t seen,
                     std::int64_t timeout_ns) {
  if (word.load(std::memory_order_acquire) != seen || timeout_ns <= 0) return;
  const timespec timeout{static_cast<time_t>(timeout_ns / 1'000'000'000),
                         static_cast<long>(timeout_ns % 1'000'000'000)};
  futex(word, FUTEX_WAIT_PRIVATE, seen, &timeout);
}
void wake_one(std::atomic<std::uint32_t>& word) { futex(word, FUTEX_WAKE_PRIVATE, 1, nullptr); }
void wake_all(std::atomic<std::uint32_t>& word) {
  futex(word, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
}

bool WakeSignal::raise() {
  value_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst) == 0) return false;
  futex(value_, FUTEX_WAKE_PRIVATE, 1, nullptr);
  return true;
}

bool WakeSignal::wait_past(std::uint32_t seen, std::int64_t deadline_ns) {
  for (;;) {
    if (value_.load(std::memory_order_acquire) != seen) return true;
    const std::int64_t left_ns = deadline_ns - monotonic_raw_ns();
    if (left_ns <= 0) return false;
    sleeping_.store(1, std::memory_order_seq_cst);
    // FUTEX_WAIT sleeps only while the word still holds `seen`, checked in the kernel: a raise
    // after the load above but before the sleep is never lost. The timeout is relative
    // (CLOCK_MONOTONIC), re-computed each time round from the raw clock's deadline.
    const timespec timeout{static_cast<time_t>(left_ns / 1'000'000'000),
                           static_cast<long>(left_ns % 1'000'000'000)};
    futex(value_, FUTEX_WAIT_PRIVATE, seen, &timeout);
    sleeping_.store(0, std::memory_order_relaxed);
  }
}

#endif

}  // namespace gpuoverlap
