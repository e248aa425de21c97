// SLList — a dictionary for AdaptHeap (and the free list of FreelistHeap and
// BoundedFreelistHeap): a LIFO IntrusiveSList threaded through the free
// objects (one pointer in each; objects need at least 8 bytes).
// No removal from the middle (use DLList for that).
#pragma once
#include <cstddef>

#include "strata/layers/building_blocks/intrusive_slist.hpp"

namespace strata::layers {

class SLList {
  // What a free object holds while it is on the list.
  struct FreeObject {
    SListLink<FreeObject> link;
  };

 public:
  static constexpr std::size_t kMinObjectSize = sizeof(FreeObject);

  bool empty() const noexcept { return objects_.empty(); }

  void insert(void* ptr) noexcept { objects_.push_front(static_cast<FreeObject*>(ptr)); }

  // Removes and returns the most recently inserted object, or nullptr.
  void* get() noexcept { return objects_.pop_front(); }

  // The object get() would return, left on the list (nullptr when empty).
  void* peek() const noexcept { return objects_.front(); }

  // Forgets every object (they die with the memory below).
  void clear() noexcept { objects_.clear(); }

 private:
  IntrusiveSList<FreeObject, &FreeObject::link> objects_;
};

}  // namespace strata::layers
