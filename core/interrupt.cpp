#include "core/interrupt.h"

#include <atomic>
#include <csignal>

namespace gpuoverlap {

namespace {

std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

extern "C" void on_interrupt(int signal_number) {
  g_requested.store(true, std::memory_order_relaxed);
  std::signal(signal_number, SIG_DFL);  // the second one ends the process
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);  // a dropped ssh session: keep what was measured
}

bool interrupt_requested() { return g_requested.load(std::memory_order_relaxed); }

}  // namespace gpuoverlap
