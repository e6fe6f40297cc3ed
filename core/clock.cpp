#include "core/clock.h"

#include <limits>

#if defined(_WIN32)
#include <windows.h>
#endif

namespace gpuoverlap {

#if defined(_WIN32)
std::int64_t qpc_ticks_to_ns(std::int64_t ticks) {
  static const std::int64_t frequency = [] {
    LARGE_INTEGER f;
    QueryPerformanceFrequency(&f);
    return static_cast<std::int64_t>(f.QuadPart);
  }();
  // Split so that ticks * 1e9 cannot overflow for any uptime.
  return ticks / frequency * 1'000'000'000 + ticks % frequency * 1'000'000'000 / frequency;
}

std::int64_t monotonic_raw_ns() {
  LARGE_INTEGER now;
  QueryPerformanceCounter(&now);
  return qpc_ticks_to_ns(static_cast<std::int64_t>(now.QuadPart));
}
#endif

std::int64_t monotonic_to_raw_offset_ns() {
  std::int64_t best_width = std::numeric_limits<std::int64_t>::max();
  std::int64_t best_offset = 0;
  for (int sample = 0; sample < 16; ++sample) {
    const std::int64_t raw_before = monotonic_raw_ns();
    const std::int64_t mono = monotonic_ns();
    const std::int64_t raw_after = monotonic_raw_ns();
    const std::int64_t width = raw_after - raw_before;
    if (width < best_width) {
      best_width = width;
      best_offset = (raw_before + width / 2) - mono;
    }
  }
  return best_offset;
}

}  // namespace gpuoverlap
