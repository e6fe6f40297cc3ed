// A pause inside a spin loop: tells the CPU the thread is spinning (x86 PAUSE), so a polling
// thread gives its hyper-thread sibling room and leaves the spin without a pipeline flush.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GPUOVERLAP_CPU_RELAX() _mm_pause()
#else
#define GPUOVERLAP_CPU_RELAX() ((void)0)
#endif

// After a clock read that must precede the loads after it: the CPU may execute later loads
// before a time-stamp counter read (x86 RDTSC is not ordered with them), which would time a
// load as later than it was. LFENCE lets no later instruction start before the read is done.
// Elsewhere an acquire fence, which orders the loads the compiler emits.
#if defined(__x86_64__) || defined(__i386__)
#define GPUOVERLAP_LOADS_AFTER_CLOCK() _mm_lfence()
#else
#include <atomic>
#define GPUOVERLAP_LOADS_AFTER_CLOCK() std::atomic_thread_fence(std::memory_order_acquire)
#endif
