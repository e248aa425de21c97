// AdaptHeap — turns a dictionary of free objects into a heap layer: free puts the
// object into the dictionary (threaded through the object itself), malloc takes
// one out, or asks Super when the dictionary is empty.
//
// Dictionary: SLList (LIFO, the same as FreelistHeap), DLList (FIFO with O(1)
// removal; AdaptHeap then offers remove(ptr) too), or anything with
// insert/get/empty and kMinObjectSize. Like FreelistHeap it does not look at sizes:
// one AdaptHeap holds objects of one size class. Requests below the dictionary's
// kMinObjectSize are rounded up. free(nullptr) is a no-op; flush() and the
// destructor return the objects still in the dictionary to Super; clear() (when
// Super has one) forgets them and clears Super.
#pragma once
#include <concepts>
#include <cstddef>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <class D>
concept FreeDictionary = std::default_initializable<D> && requires(D dict, void* ptr) {
  dict.insert(ptr);
  { dict.get() } -> std::same_as<void*>;
  { dict.empty() } -> std::convertible_to<bool>;
  { D::kMinObjectSize } -> std::convertible_to<std::size_t>;
};

template <FreeDictionary Dictionary, Heap Super>
class AdaptHeap : public Super {
 public:
  AdaptHeap() = default;
  AdaptHeap(const AdaptHeap&) = delete;
  AdaptHeap& operator=(const AdaptHeap&) = delete;
  ~AdaptHeap() { flush(); }

  void* malloc(std::size_t size) {
    if (void* ptr = dictionary_.get()) return ptr;
    return Super::malloc(size < Dictionary::kMinObjectSize ? Dictionary::kMinObjectSize : size);
  }

  void free(void* ptr) {
    if (ptr != nullptr) dictionary_.insert(ptr);
  }

  // Take a particular free object out again (dictionaries with removal only).
  void remove(void* ptr)
    requires requires(Dictionary d, void* p) { d.remove(p); }
  {
    dictionary_.remove(ptr);
  }

  bool empty() const noexcept { return dictionary_.empty(); }

  // Give every free object back to Super.
  void flush() {
    while (void* ptr = dictionary_.get()) Super::free(ptr);
  }

  void clear()
    requires ClearableHeap<Super>
  {
    dictionary_ = Dictionary{};
    Super::clear();
  }

 private:
  Dictionary dictionary_;
};

}  // namespace strata::layers
