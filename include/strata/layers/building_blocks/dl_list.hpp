// DLList — a dictionary for AdaptHeap: a FIFO IntrusiveDList threaded through
// the free objects (two pointers in each; objects need at least 16 bytes).
// get() takes the oldest object; remove(ptr) unlinks any object in O(1), which is
// what lets CoalesceHeap pull a free neighbour out of whatever bin holds it.
#pragma once
#include <cstddef>

#include "strata/layers/building_blocks/intrusive_dlist.hpp"

namespace strata::layers {

class DLList {
  // What a free object holds while it is on the list.
  struct FreeObject {
    DListLink<FreeObject> link;
  };

 public:
  static constexpr std::size_t kMinObjectSize = sizeof(FreeObject);

  bool empty() const noexcept { return objects_.empty(); }

  // Appends at the tail.
  void insert(void* ptr) noexcept { objects_.push_back(static_cast<FreeObject*>(ptr)); }

  // Removes and returns the oldest object, or nullptr.
  void* get() noexcept { return objects_.pop_front(); }

  // Unlinks ptr, which must be in this list.
  void remove(void* ptr) noexcept { objects_.remove(static_cast<FreeObject*>(ptr)); }

 private:
  IntrusiveDList<FreeObject, &FreeObject::link> objects_;
};

}  // namespace strata::layers
