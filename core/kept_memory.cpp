#include "core/kept_memory.h"

#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gpuoverlap {

namespace {

#if defined(__GLIBC__)
std::mutex g_mutex;
int g_holders = 0;
bool g_touched = false;

constexpr int kKeptMmapThreshold = 32 * 1024 * 1024;  // DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
constexpr int kKeptTrimThreshold = 1024 * 1024 * 1024;
constexpr int kGlibcDefaultThreshold = 128 * 1024;  // mallopt(3): both default to 128 KiB
#endif

}  // namespace

Result<std::shared_ptr<KeptMemory>> KeptMemory::hold() {
#if defined(__GLIBC__)
  std::lock_guard lock(g_mutex);
  if (g_holders == 0) {
    if (mallopt(M_MMAP_THRESHOLD, kKeptMmapThreshold) != 1 ||
        mallopt(M_TRIM_THRESHOLD, kKeptTrimThreshold) != 1)
      return make_error("glibc refused mallopt(M_MMAP_THRESHOLD / M_TRIM_THRESHOLD)");
    g_touched = true;
  }
  ++g_holders;
  return std::shared_ptr<KeptMemory>(new KeptMemory());
#else
  return make_error(
      "allocator = \"keep\" sets glibc's thresholds; this build's C library is "
      "not glibc");
#endif
}

KeptMemory::~KeptMemory() {
#if defined(__GLIBC__)
  std::lock_guard lock(g_mutex);
  if (--g_holders == 0) {
    mallopt(M_MMAP_THRESHOLD, kGlibcDefaultThreshold);
    mallopt(M_TRIM_THRESHOLD, kGlibcDefaultThreshold);
  }
#endif
}

void fix_default_thresholds() {
#if defined(__GLIBC__)
  std::lock_guard lock(g_mutex);
  if (g_holders > 0) return;
  mallopt(M_MMAP_THRESHOLD, kGlibcDefaultThreshold);
  mallopt(M_TRIM_THRESHOLD, kGlibcDefaultThreshold);
  g_touched = true;
#endif
}

std::string kept_memory_state() {
#if defined(__GLIBC__)
  std::lock_guard lock(g_mutex);
  if (g_holders > 0) return "kept (mmap 32 MiB, trim 1 GiB)";
  return g_touched ? "glibc defaults, fixed (mmap 128 KiB, trim 128 KiB)"
                   : "glibc dynamic thresholds";
#else
  return "not glibc";
#endif
}

}  // namespace gpuoverlap
