// BoundedFreelistHeap — a FreelistHeap that caches at most MaxObjects freed
// objects (LIFO, threaded through the objects: an SLList); frees beyond the bound go straight
// to Super. Bounds the memory a cache can hold hostage. Like FreelistHeap it is
// meant for one object size and does not look at sizes. free(nullptr) is a no-op;
// flush() and the destructor return the cached objects to Super; clear() (when
// Super has one) forgets them and clears Super.
#pragma once
#include <cstddef>

#include "strata/layers/building_blocks/sl_list.hpp"
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
    if (void* object = free_.get()) {
      --count_;
      return object;
    }
    return Super::malloc(size < SLList::kMinObjectSize ? SLList::kMinObjectSize : size);
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    if (count_ == MaxObjects) {
      Super::free(ptr);
      return;
    }
    free_.insert(ptr);
    ++count_;
  }

  std::size_t cached() const noexcept { return count_; }

  void flush() {
    while (void* object = free_.get()) Super::free(object);
    count_ = 0;
  }

  void clear()
    requires ClearableHeap<Super>
  {
    free_.clear();
    count_ = 0;
    Super::clear();
  }

 private:
  SLList free_;
  std::size_t count_ = 0;
};

}  // namespace strata::layers
