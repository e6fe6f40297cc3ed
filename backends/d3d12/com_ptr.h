// One owning reference to a COM object: released when destroyed, like WRL's ComPtr, which
// mingw-w64 ships only in part.
#pragma once

#include <utility>

namespace gpuoverlap::d3d12 {

template <class Interface>
class ComPtr {
 public:
  ComPtr() = default;
  ComPtr(const ComPtr&) = delete;
  ComPtr& operator=(const ComPtr&) = delete;
  ComPtr(ComPtr&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  ComPtr& operator=(ComPtr&& other) noexcept {
    if (this != &other) {
      reset();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  ~ComPtr() { reset(); }

  Interface* get() const { return object_; }
  Interface* operator->() const { return object_; }
  explicit operator bool() const { return object_ != nullptr; }
  // For the creating call's out parameter: releases what this held first.
  Interface** receive() {
    reset();
    return &object_;
  }
  void** receive_void() { return reinterpret_cast<void**>(receive()); }
  // Gives up ownership without releasing: the object lives on (leaks), for objects the GPU
  // may still use.
  Interface* release() { return std::exchange(object_, nullptr); }
  // Shares `object`: adds a reference this ComPtr owns.
  static ComPtr retain(Interface* object) {
    ComPtr out;
    if (object) object->AddRef();
    out.object_ = object;
    return out;
  }
  void reset() {
    if (object_) object_->Release();
    object_ = nullptr;
  }

 private:
  Interface* object_ = nullptr;
};

}  // namespace gpuoverlap::d3d12
