// A pause inside a spin loop: tells the CPU the thread is spinning (x86 PAUSE), so a polling
// thread gives its hyper-thread sibling room and leaves the spin without a pipeline flush.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GPUOVERLAP_CPU_RELAX() _mm_pause()
#else
#define GPUOVERLAP_CPU_RELAX() ((void)0)
#endif
