#include "core/interrupt.h"

#include <atomic>
#include <csignal>

#if defined(_WIN32)
#include <windows.h>
#endif

namespace gpuoverlap {

namespace {

std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

#if defined(_WIN32)
// Ctrl+C, Ctrl+Break or the console closing: the first one asks the run to stop after the
// current frame; the second is left to the default handler, which ends the process.
BOOL WINAPI on_console_event(DWORD event) {
  if (event != CTRL_C_EVENT && event != CTRL_BREAK_EVENT && event != CTRL_CLOSE_EVENT) return FALSE;
  return g_requested.exchange(true, std::memory_order_relaxed) ? FALSE : TRUE;
}
#else
extern "C" void on_interrupt(int signal_number) {
  g_requested.store(true, std::memory_order_relaxed);
  std::signal(signal_number, SIG_DFL);  // the second one ends the process
}
#endif

}  // namespace

void install_interrupt_handler() {
#if defined(_WIN32)
  SetConsoleCtrlHandler(on_console_event, TRUE);
#else
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);  // a dropped ssh session: keep what was measured
#endif
}

bool interrupt_requested() { return g_requested.load(std::memory_order_relaxed); }

}  // namespace gpuoverlap
