// FreelistHeap — caches freed objects on a LIFO list threaded through the objects
// themselves (an SLList: the first word of a freed object holds the next pointer).
//
// malloc pops the most recently freed object if there is one, else asks Super.
// The paper's semantics: meant for ONE object size. It does not look at sizes, so
// a list fed objects of mixed sizes hands any of them back for any request — put it
// under a size-segregating layer (StrictSegHeap) or use it for one class only.
// Requests smaller than a pointer are rounded up to one (the link must fit).
// free(nullptr) is a no-op. flush() and the destructor return every cached object
// to Super; clear() (when Super has one) forgets the list and clears Super.
#pragma once
#include <cstddef>

#include "strata/assert.hpp"
#include "strata/layers/building_blocks/sl_list.hpp"
#include "strata/layers/heap.hpp"

namespace strata::layers {

template <Heap Super>
class FreelistHeap : public Super {
 public:
  FreelistHeap() = default;
  FreelistHeap(const FreelistHeap&) = delete;
  FreelistHeap& operator=(const FreelistHeap&) = delete;
  ~FreelistHeap() { flush(); }

  void* malloc(std::size_t size) {
    if (void* object = free_.get()) return object;
    return Super::malloc(size < SLList::kMinObjectSize ? SLList::kMinObjectSize : size);
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    STRATA_ASSERT(free_.empty() || free_.peek() != ptr);  // not the object freed just before
    free_.insert(ptr);
  }

  // Give every cached object back to Super.
  void flush() {
    while (void* object = free_.get()) Super::free(object);
  }

  // Release everything: the cached objects die with Super's memory.
  void clear()
    requires ClearableHeap<Super>
  {
    free_.clear();
    Super::clear();
  }

 private:
  SLList free_;
};

}  // namespace strata::layers
