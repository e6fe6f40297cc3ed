#include "background/idle_spinners.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <sys/mman.h>
#endif

#include "core/cpu_affinity.h"
#include "core/thread_policy.h"

namespace gpuoverlap::background {

namespace {

// Past glibc's default mmap threshold (128 KiB), as a compiler's larger allocations
// are: each cycle is a fresh mapping, its first touch of each page a fault, its unmap a TLB
// flush.
constexpr std::size_t kBlockBytes = 256 * 1024;
constexpr std::size_t kPageBytes = 4096;

void* map_block() {
#if defined(_WIN32)
  return VirtualAlloc(nullptr, kBlockBytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
#else
  void* p = mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
#endif
}

void unmap_block(void* p) {
#if defined(_WIN32)
  VirtualFree(p, 0, MEM_RELEASE);
#else
  munmap(p, kBlockBytes);
#endif
}

}  // namespace

IdleSpinners::IdleSpinners(const std::vector<int>& cpus) {
  std::vector<int> where = cpus;
  if (where.empty())
    where.assign(std::max(1u, std::thread::hardware_concurrency()), -1);  // unpinned
  threads_.reserve(where.size());
  for (const int cpu : where) threads_.emplace_back([this, cpu] { spin(cpu); });
}

IdleSpinners::~IdleSpinners() { stop(); }

void IdleSpinners::stop() {
  stopping_.store(true, std::memory_order_relaxed);
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

std::string IdleSpinners::refused() const {
  std::string why;
  if (refused_policy_.load()) why = "idle priority refused";
  if (refused_cpu_.load()) why += std::string(why.empty() ? "" : "; ") + "pinning refused";
  return why;
}

void IdleSpinners::spin(int cpu) {
  name_this_thread("spinner");
  if (!apply_to_this_thread(ThreadPolicy::idle)) refused_policy_.store(true);
  if (cpu >= 0 && !restrict_this_thread_to({cpu})) refused_cpu_.store(true);
  seen_.report(this_thread_scheduling());
  while (!stopping_.load(std::memory_order_relaxed)) {
    auto* block = static_cast<volatile unsigned char*>(map_block());
    if (!block) continue;  // the OS is out of memory for the moment: try again
    for (std::size_t offset = 0; offset < kBlockBytes; offset += kPageBytes)
      block[offset] = static_cast<unsigned char>(offset);
    unmap_block(const_cast<unsigned char*>(block));
    cycles_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace gpuoverlap::background
