// Freed memory kept by the C library for the next allocation instead of handed back to the
// kernel: what a compile thread's allocator does with `allocator = "keep"`
// (docs/background.md, "Placement and memory"). glibc maps an allocation above
// M_MMAP_THRESHOLD with mmap and unmaps it on free, and returns a heap's free top above
// M_TRIM_THRESHOLD with munmap or madvise; each is a system call and page faults on the next
// use, kernel work that a frame loop woken on that CPU may wait behind.
//
// Hazard: the thresholds are the whole process's (glibc has none per thread). While a
// KeptMemory lives, every thread keeps its freed memory; when the last one ends, the
// thresholds go back to glibc's documented defaults (128 KiB each) with its dynamic
// adjustment off, which a run records (kept_memory_state()).
#pragma once

#include <memory>
#include <string>

#include "core/result.h"

namespace gpuoverlap {

class KeptMemory {
 public:
  // Raises the thresholds (32 MiB for mmap, glibc's most on 64-bit; 1 GiB for trimming), or
  // says why not (not glibc). Holders nest: the thresholds go back with the last.
  static Result<std::shared_ptr<KeptMemory>> hold();
  ~KeptMemory();
  KeptMemory(const KeptMemory&) = delete;
  KeptMemory& operator=(const KeptMemory&) = delete;

 private:
  KeptMemory() = default;
};

// Sets glibc's documented default thresholds (128 KiB each), its dynamic adjustment off, unless
// a KeptMemory holds them: what every condition of a study with an `allocator = "keep"`
// condition runs with, from its first round, so that no condition's allocator depends on
// whether the keep condition ran before it. Nothing where the C library is not glibc.
void fix_default_thresholds();

// Why KeptMemory cannot work in this build (not glibc, or a sanitizer's malloc); "" where it can.
std::string kept_memory_unsupported_reason();

// "glibc dynamic thresholds" (untouched), "kept (mmap 32 MiB, trim 1 GiB)" while held, or
// "glibc defaults, fixed (mmap 128 KiB, trim 128 KiB)" after; "not glibc's malloc" elsewhere.
std::string kept_memory_state();

}  // namespace gpuoverlap
