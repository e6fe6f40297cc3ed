// The one CPU clock of the suite. Every CPU-side time (gate release t0, poll detections,
// calibration) is CLOCK_MONOTONIC_RAW in nanoseconds: it is not slewed by NTP, so intervals
// measured against it are not bent while a run is in progress.
#pragma once

#include <cmath>
#include <cstdint>
#include <ctime>

namespace gpuoverlap {

#if defined(_WIN32)
inline constexpr const char* kCpuClockName = "QueryPerformanceCounter";
#else
inline constexpr const char* kCpuClockName = "CLOCK_MONOTONIC_RAW";
#endif

#if defined(_WIN32)
// Windows: QueryPerformanceCounter (the clock D3D12's GetClockCalibration pairs GPU ticks
// with), in nanoseconds; it is never slewed, so both names read it.
std::int64_t monotonic_raw_ns();
inline std::int64_t monotonic_ns() { return monotonic_raw_ns(); }
// A QueryPerformanceCounter reading (as GetClockCalibration returns it) on monotonic_raw_ns().
std::int64_t qpc_ticks_to_ns(std::int64_t ticks);
#else
inline std::int64_t monotonic_raw_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
#endif

// A duration in milliseconds rounded to 0.1 ms: for the phases meta.json reports, which are
// for reading, not for analysis.
inline double rounded_ms(std::int64_t ns) { return std::round(static_cast<double>(ns) / 1e5) / 10.0; }

// Offset to add to a CLOCK_MONOTONIC reading to express it on CLOCK_MONOTONIC_RAW, taken from
// the tightest of several bracketed samples. Used when a GPU calibrates only against
// CLOCK_MONOTONIC.
std::int64_t monotonic_to_raw_offset_ns();

}  // namespace gpuoverlap
