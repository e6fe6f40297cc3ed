#include "background/idle_spinners.h"

#include <algorithm>
#include <array>
#include <memory>

#include "core/clock.h"
#include "core/cpu_affinity.h"
#include "core/thread_policy.h"
#include "core/wake_signal.h"

namespace gpuoverlap::background {

namespace {

// A working set of a compiler's size per thread, written a byte per page each cycle, and an
// arena of its own that each cycle allocates a block from, fills and frees back: a compiler's
// allocate-touch-free. Both are allocated and their pages faulted in before the thread drops to
// idle priority, and nothing of either is shared with another thread.
constexpr std::size_t kWorkingSetBytes = 256 * 1024;
constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kArenaBlocks = 64;
constexpr std::size_t kBlockBytes = 1024;
// How long the constructor waits for every thread to be ready (its memory faulted in, its
// policy applied) before it gives up on those still starting; far more than a thread needs.
constexpr std::int64_t kReadyTimeoutNs = 10'000'000'000;

// A thread's own allocator: fixed blocks in one buffer, handed out in FIFO order so that a
// cycle's allocate and release walk all of them (a stack would hand back one block forever,
// a working set of 1 KB). Not the C library's: a shared allocator's lock, held by a thread at
// idle priority that a loaded machine keeps off every CPU, blocks whichever normal thread
// needs it next (the driver's submit thread, a worker): a priority inversion, a real cost of
// in-process background work but not the control's to test (docs/background.md).
class OwnArena {
 public:
  OwnArena() : memory_(std::make_unique<unsigned char[]>(kArenaBlocks * kBlockBytes)) {
    for (std::size_t b = 0; b < kArenaBlocks; ++b) {
      free_[b] = static_cast<std::uint8_t>(b);
      std::fill_n(block(b), kBlockBytes, static_cast<unsigned char>(b));  // faulted in now
    }
  }
  unsigned char* allocate() {
    if (taken_ == released_ + kArenaBlocks) return nullptr;  // every block is out
    return block(free_[taken_++ % kArenaBlocks]);
  }
  void release(unsigned char* p) {
    free_[released_++ % kArenaBlocks] =
        static_cast<std::uint8_t>((p - memory_.get()) / kBlockBytes);
  }

 private:
  unsigned char* block(std::size_t b) { return memory_.get() + b * kBlockBytes; }
  std::unique_ptr<unsigned char[]> memory_;
  // A ring of free block numbers: taken from taken_, given back at released_ + kArenaBlocks.
  std::array<std::uint8_t, kArenaBlocks> free_{};
  std::uint64_t taken_ = 0;
  std::uint64_t released_ = 0;
};

}  // namespace

IdleSpinners::IdleSpinners(const std::vector<int>& cpus) {
  std::vector<int> where = cpus;
  if (where.empty())
    where.assign(std::max(1u, std::thread::hardware_concurrency()), -1);  // unpinned
  threads_.reserve(where.size());
  for (const int cpu : where) threads_.emplace_back([this, cpu] { spin(cpu); });
  // Every thread ready before the frames: none of them starts, allocates or faults a page
  // while frames are measured.
  const std::int64_t give_up_ns = monotonic_raw_ns() + kReadyTimeoutNs;
  for (;;) {
    const std::uint32_t ready = ready_.load(std::memory_order_acquire);
    if (ready >= threads_.size()) break;
    const std::int64_t left_ns = give_up_ns - monotonic_raw_ns();
    if (left_ns <= 0) {
      late_start_.store(true);
      break;
    }
    sleep_while_for(ready_, ready, left_ns);
  }
}

IdleSpinners::~IdleSpinners() { stop(); }

void IdleSpinners::stop() {
  stopping_.store(true, std::memory_order_relaxed);
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

std::string IdleSpinners::refused() const {
  std::string why;
  auto add = [&why](const char* what) { why += std::string(why.empty() ? "" : "; ") + what; };
  if (refused_policy_.load()) add("idle priority refused");
  if (refused_cpu_.load()) add("pinning refused");
  if (late_start_.load()) add("not every thread was ready before the frames");
  return why;
}

void IdleSpinners::spin(int cpu) {
  name_this_thread("spinner");
  // Placed and its memory faulted in at the creator's priority, on its own CPU (its pages are
  // local to it), then idle for the rest of its life.
  if (cpu >= 0 && !restrict_this_thread_to({cpu})) refused_cpu_.store(true);
  std::vector<unsigned char> working_set(kWorkingSetBytes, 1);
  OwnArena arena;
  if (!apply_to_this_thread(ThreadPolicy::idle)) refused_policy_.store(true);
  seen_.report(this_thread_scheduling());
  ready_.fetch_add(1, std::memory_order_release);
  wake_all(ready_);
  unsigned char sum = 0;
  std::uint64_t cycles = 0;
  while (!stopping_.load(std::memory_order_relaxed)) {
    for (std::size_t offset = 0; offset < kWorkingSetBytes; offset += kPageBytes)
      working_set[offset] = static_cast<unsigned char>(working_set[offset] + 1);
    if (unsigned char* block = arena.allocate()) {
      volatile unsigned char* written = block;
      for (std::size_t i = 0; i < kBlockBytes; i += 64)
        written[i] = static_cast<unsigned char>(working_set[0] + i);
      sum = static_cast<unsigned char>(sum + written[0]);
      arena.release(block);
    }
    // Published every few thousand cycles: a counter line written by every spinner at once
    // would be shared between them on every cycle.
    if ((++cycles & 4095) == 0) cycles_.fetch_add(4096, std::memory_order_relaxed);
  }
  cycles_.fetch_add(cycles & 4095, std::memory_order_relaxed);
  sink_.fetch_add(sum, std::memory_order_relaxed);  // the work is not optimised away
}

}  // namespace gpuoverlap::background
