// Runs a callable when the scope ends, on every return path: for cleanup of C handles (Vulkan
// objects) that have no owning type of their own.
#pragma once

#include <utility>

namespace gpuoverlap {

template <typename F>
class ScopeExit {
 public:
  explicit ScopeExit(F f) : f_(std::move(f)) {}
  ~ScopeExit() { f_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  F f_;
};

}  // namespace gpuoverlap
