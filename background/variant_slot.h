// The spec's lifetime pattern for background compile results ("Lifetime Management"): the
// pipeline object owns a small shared object holding a non-owning, nullable pointer back to it;
// a compile task holds a reference to that small object only, never to the pipeline. Destroying
// the pipeline nulls the back-pointer; a task that finishes afterwards finds it null and gets
// its result back to dispose of (e.g. vkDestroyPipeline), instead of touching freed memory. The
// pipeline is never reference counted.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace gpuoverlap::background {

template <typename Variant>
class VariantSlot;

// What a task keeps: shared with the slot, outliving it if need be.
template <typename Variant>
class BackPointer {
 public:
  // Hands `variant` to the live slot; when the slot is gone, returns it to the caller.
  std::optional<Variant> deliver(Variant variant) {
    std::lock_guard lock(mutex_);
    if (!slot_) return std::optional<Variant>(std::move(variant));
    slot_->variants_.push_back(std::move(variant));
    return std::nullopt;
  }
  bool alive() const {
    std::lock_guard lock(mutex_);
    return slot_ != nullptr;
  }

 private:
  friend class VariantSlot<Variant>;
  mutable std::mutex mutex_;
  VariantSlot<Variant>* slot_ = nullptr;  // non-owning; nulled by ~VariantSlot
};

// Lives inside the pipeline object (one per pipeline). Not copyable or movable: the back-pointer
// points at it.
template <typename Variant>
class VariantSlot {
 public:
  VariantSlot() : back_(std::make_shared<BackPointer<Variant>>()) { back_->slot_ = this; }
  ~VariantSlot() {
    std::lock_guard lock(back_->mutex_);
    back_->slot_ = nullptr;
  }
  VariantSlot(const VariantSlot&) = delete;
  VariantSlot& operator=(const VariantSlot&) = delete;

  std::shared_ptr<BackPointer<Variant>> back_pointer() const { return back_; }

  // The variants delivered so far, taken out (the owner disposes of them).
  std::vector<Variant> take() {
    std::lock_guard lock(back_->mutex_);
    return std::exchange(variants_, {});
  }

 private:
  friend class BackPointer<Variant>;
  std::shared_ptr<BackPointer<Variant>> back_;
  std::vector<Variant> variants_;  // guarded by back_->mutex_
};

}  // namespace gpuoverlap::background
