// NestedRegionHeap — nested regions, as Apache's pools (the 2002 reaps paper
// §4, "nested region"): a heap may be created as the child of another, and
// clearing a heap clears its children (and theirs) first. (The reap's own
// tree, the paper's §8.1 NestedHeap, is the lower-level link layer in
// strata/layers/region/; this one is the ready-made RAII form for regions.) Tearing down everything a connection allocated, requests included,
// is then one clear() on the connection's heap.
//
//   using Pool = NestedRegionHeap<ZoneHeap<8192, MallocHeap>>;
//   Pool connection;
//   Pool request(connection);  // a child: cleared whenever connection is
//
// malloc and free go to Super (with ZoneHeap, free is a no-op: a pure region).
// A child stays attached until it is destroyed; destroying a parent first
// clears its children and detaches them (they are then empty roots). The
// heap objects themselves are the caller's (members, locals): NestedRegionHeap
// never allocates. Not copyable or movable (children point at their parent).
// Not thread safe, like the regions it nests.
#pragma once
#include <cstddef>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <ClearableHeap Super>
class NestedRegionHeap : public Super {
 public:
  // A root.
  NestedRegionHeap() = default;
  // A child of parent: cleared whenever parent is.
  explicit NestedRegionHeap(NestedRegionHeap& parent) : parent_(&parent) {
    next_sibling_ = parent.first_child_;
    if (next_sibling_ != nullptr) next_sibling_->prev_sibling_ = this;
    parent.first_child_ = this;
  }
  NestedRegionHeap(const NestedRegionHeap&) = delete;
  NestedRegionHeap& operator=(const NestedRegionHeap&) = delete;

  ~NestedRegionHeap() {
    clear();
    while (NestedRegionHeap* child = first_child_) child->detach();
    detach();
  }

  // Frees every object of this heap and of all its descendants.
  void clear() {
    for (NestedRegionHeap* child = first_child_; child != nullptr; child = child->next_sibling_) child->clear();
    Super::clear();
  }

  NestedRegionHeap* parent() const noexcept { return parent_; }
  NestedRegionHeap* firstChild() const noexcept { return first_child_; }
  NestedRegionHeap* nextSibling() const noexcept { return next_sibling_; }

 private:
  // Leaves the parent's list of children (a no-op for a root).
  void detach() noexcept {
    if (parent_ == nullptr) return;
    if (prev_sibling_ != nullptr) prev_sibling_->next_sibling_ = next_sibling_;
    else parent_->first_child_ = next_sibling_;
    if (next_sibling_ != nullptr) next_sibling_->prev_sibling_ = prev_sibling_;
    parent_ = prev_sibling_ = next_sibling_ = nullptr;
  }

  NestedRegionHeap* parent_ = nullptr;
  NestedRegionHeap* first_child_ = nullptr;
  NestedRegionHeap* prev_sibling_ = nullptr;
  NestedRegionHeap* next_sibling_ = nullptr;
};

}  // namespace strata::layers
