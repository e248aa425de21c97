// BoundedFreelistHeap — a FreelistHeap that caches at most MaxObjects freed
// objects (LIFO, threaded through the objects); frees beyond the bound go straight
// to Super. Bounds the memory a cache can hold hostage. Like FreelistHeap it is
// meant for one object size and does not look at sizes. free(nullptr) is a no-op;
// flush() and the destructor return the cached objects to Super; clear() (when
// Super has one) forgets them and clears Super.
#pragma once
#include <cstddef>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t MaxObjects, Heap Super>
class BoundedFreelistHeap : public Super {
 public:
  BoundedFreelistHeap() = default;
  BoundedFreelistHeap(const BoundedFreelistHeap&) = delete;
  BoundedFreelistHeap& operator=(const BoundedFreelistHeap&) = delete;
  ~BoundedFreelistHeap() { flush(); }

  void* malloc(std::size_t size) {
    if (FreeObject* object = head_) {
      head_ = object->next;
      --count_;
      return object;
    }
    return Super::malloc(size < sizeof(FreeObject) ? sizeof(FreeObject) : size);
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    if (count_ == MaxObjects) {
      Super::free(ptr);
      return;
    }
    auto* object = static_cast<FreeObject*>(ptr);
    object->next = head_;
    head_ = object;
    ++count_;
  }

  std::size_t cached() const noexcept { return count_; }

  void flush() {
    while (FreeObject* object = head_) {
      head_ = object->next;
      Super::free(object);
    }
    count_ = 0;
  }

  void clear()
    requires ClearableHeap<Super>
  {
    head_ = nullptr;
    count_ = 0;
    Super::clear();
  }

 private:
  struct FreeObject {
    FreeObject* next;
  };
  FreeObject* head_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace strata::layers
