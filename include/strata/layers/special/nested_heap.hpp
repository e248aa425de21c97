// NestedHeap — nested regions, as Apache's pools (the 2002 reaps paper §4,
// "nested region"; its NestedHeap layer §8.1): a heap may be created as the
// child of another, and clearing a heap clears its children (and theirs)
// first. Tearing down everything a connection allocated, requests included,
// is then one clear() on the connection's heap.
//
//   using Pool = NestedHeap<ZoneHeap<8192, MallocHeap>>;
//   Pool connection;
//   Pool request(connection);  // a child: cleared whenever connection is
//
// malloc and free go to Super (with ZoneHeap, free is a no-op: a pure region).
// A child stays attached until it is destroyed; destroying a parent first
// clears its children and detaches them (they are then empty roots). The
// heap objects themselves are the caller's (members, locals): NestedHeap
// never allocates. Not copyable or movable (children point at their parent).
// Not thread safe, like the regions it nests.
#pragma once
#include <cstddef>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <ClearableHeap Super>
class NestedHeap : public Super {
 public:
  // A root.
  NestedHeap() = default;
  // A child of parent: cleared whenever parent is.
  explicit NestedHeap(NestedHeap& parent) : parent_(&parent) {
    next_sibling_ = parent.first_child_;
    if (next_sibling_ != nullptr) next_sibling_->prev_sibling_ = this;
    parent.first_child_ = this;
  }
  NestedHeap(const NestedHeap&) = delete;
  NestedHeap& operator=(const NestedHeap&) = delete;

  ~NestedHeap() {
    clear();
    while (NestedHeap* child = first_child_) child->detach();
    detach();
  }

  // Frees every object of this heap and of all its descendants.
  void clear() {
    for (NestedHeap* child = first_child_; child != nullptr; child = child->next_sibling_) child->clear();
    Super::clear();
  }

  NestedHeap* parent() const noexcept { return parent_; }
  NestedHeap* firstChild() const noexcept { return first_child_; }
  NestedHeap* nextSibling() const noexcept { return next_sibling_; }

 private:
  // Leaves the parent's list of children (a no-op for a root).
  void detach() noexcept {
    if (parent_ == nullptr) return;
    if (prev_sibling_ != nullptr) prev_sibling_->next_sibling_ = next_sibling_;
    else parent_->first_child_ = next_sibling_;
    if (next_sibling_ != nullptr) next_sibling_->prev_sibling_ = prev_sibling_;
    parent_ = prev_sibling_ = next_sibling_ = nullptr;
  }

  NestedHeap* parent_ = nullptr;
  NestedHeap* first_child_ = nullptr;
  NestedHeap* prev_sibling_ = nullptr;
  NestedHeap* next_sibling_ = nullptr;
};

}  // namespace strata::layers
