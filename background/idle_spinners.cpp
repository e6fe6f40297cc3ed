#include "background/idle_spinners.h"

#include <cstdlib>

#include "core/cpu_affinity.h"
#include "core/thread_policy.h"

namespace gpuoverlap::background {

namespace {

// A working set of a compiler's size per thread, first touched at the thread's start (its page
// faults before the frames), then written a byte per page each cycle; and a small block from
// malloc and back (glibc's per-thread cache: no system call).
constexpr std::size_t kWorkingSetBytes = 256 * 1024;
constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kSmallBlockBytes = 1024;

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
  std::vector<unsigned char> working_set(kWorkingSetBytes, 1);
  unsigned char sum = 0;
  while (!stopping_.load(std::memory_order_relaxed)) {
    for (std::size_t offset = 0; offset < kWorkingSetBytes; offset += kPageBytes)
      working_set[offset] = static_cast<unsigned char>(working_set[offset] + 1);
    auto* small = static_cast<volatile unsigned char*>(std::malloc(kSmallBlockBytes));
    if (small) {
      small[0] = working_set[0];
      sum = static_cast<unsigned char>(sum + small[0]);
      std::free(const_cast<unsigned char*>(small));
    }
    cycles_.fetch_add(1, std::memory_order_relaxed);
  }
  sink_.fetch_add(sum, std::memory_order_relaxed);  // the work is not optimised away
}

}  // namespace gpuoverlap::background
