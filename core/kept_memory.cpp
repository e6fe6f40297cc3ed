#include "core/kept_memory.h"

#include <malloc.h>

#include <mutex>

// glibc's thresholds only govern glibc's malloc: a sanitizer's runtime replaces it and ignores
// mallopt (GCC's __SANITIZE_*__, clang's __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GPUOVERLAP_SANITIZER_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define GPUOVERLAP_SANITIZER_MALLOC 1
#endif
#endif
#if defined(__GLIBC__) && !defined(GPUOVERLAP_SANITIZER_MALLOC)
#define GPUOVERLAP_GLIBC_MALLOC 1
#endif

namespace gpuoverlap {

namespace {

#if defined(GPUOVERLAP_GLIBC_MALLOC)
std::mutex g_mutex;
int g_holders = 0;
bool g_touched = false;

constexpr int kKeptMmapThreshold = 32 * 1024 * 1024;  // DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
constexpr int kKeptTrimThreshold = 1024 * 1024 * 1024;
constexpr int kGlibcDefaultThreshold = 128 * 1024;  // mallopt(3): both default to 128 KiB
#endif

}  // namespace

Result<std::shared_ptr<KeptMemory>> KeptMemory::hold() {
#if defined(GPUOVERLAP_GLIBC_MALLOC)
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
  return make_error(std::string("allocator = \"keep\" sets glibc's malloc thresholds; ") +
                    kept_memory_unsupported_reason());
#endif
}

KeptMemory::~KeptMemory() {
#if defined(GPUOVERLAP_GLIBC_MALLOC)
  std::lock_guard lock(g_mutex);
  if (--g_holders == 0) {
    mallopt(M_MMAP_THRESHOLD, kGlibcDefaultThreshold);
    mallopt(M_TRIM_THRESHOLD, kGlibcDefaultThreshold);
  }
#endif
}

void fix_default_thresholds() {
#if defined(GPUOVERLAP_GLIBC_MALLOC)
  std::lock_guard lock(g_mutex);
  if (g_holders > 0) return;
  mallopt(M_MMAP_THRESHOLD, kGlibcDefaultThreshold);
  mallopt(M_TRIM_THRESHOLD, kGlibcDefaultThreshold);
  g_touched = true;
#endif
}

std::string kept_memory_unsupported_reason() {
#if defined(GPUOVERLAP_SANITIZER_MALLOC)
  return "this build's malloc is a sanitizer's, which ignores them";
#elif !defined(GPUOVERLAP_GLIBC_MALLOC)
  return "this build's C library is not glibc";
#else
  return {};
#endif
}

std::string kept_memory_state() {
#if defined(GPUOVERLAP_GLIBC_MALLOC)
  std::lock_guard lock(g_mutex);
  if (g_holders > 0) return "kept (mmap 32 MiB, trim 1 GiB)";
  return g_touched ? "glibc defaults, fixed (mmap 128 KiB, trim 128 KiB)"
                   : "glibc dynamic thresholds";
#else
  return "not glibc's malloc";
#endif
}

}  // namespace gpuoverlap
