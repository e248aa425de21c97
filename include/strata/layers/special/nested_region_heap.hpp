// NestedRegionHeap — nested regions, as Apache's pools (the 2002 reaps paper
// §4, "nested region"): a heap may be created as the child of another, and
// clearing a heap clears its children (and theirs) first. Tearing down
// everything a connection allocated, requests included, is then one clear()
// on the connection's heap.
//
//   using Pool = NestedRegionHeap<ZoneHeap<8192, MallocHeap>>;
//   Pool connection;
//   Pool request(connection);  // a child: cleared whenever connection is
//
// It is the reap's tree, NestedHeap (region/nested_heap.hpp: the links and the
// walks), in its ready-made RAII form for regions: the constructor attaches,
// the destructor detaches, and clear() walks the subtree children first.
// malloc and free go to Super (with ZoneHeap, free is a no-op: a pure region).
// A child stays attached until it is destroyed; destroying a parent first
// clears its children and detaches them (they are then empty roots). The
// heap objects themselves are the caller's (members, locals): NestedRegionHeap
// never allocates. Not copyable or movable (children point at their parent).
// Not thread safe, like the regions it nests.
#pragma once
#include <cstddef>

#include "strata/layers/heap.hpp"
#include "strata/layers/region/nested_heap.hpp"

namespace strata::layers {

template <ClearableHeap Super>
class NestedRegionHeap : public NestedHeap<Super> {
  using Tree = NestedHeap<Super>;

 public:
  // A root.
  NestedRegionHeap() = default;
  // A child of parent: cleared whenever parent is.
  explicit NestedRegionHeap(NestedRegionHeap& parent) { Tree::attachTo(&parent); }
  NestedRegionHeap(const NestedRegionHeap&) = delete;
  NestedRegionHeap& operator=(const NestedRegionHeap&) = delete;

  ~NestedRegionHeap() {
    clear();
    while (Tree* child = Tree::firstChild()) child->detach();
    Tree::detach();
  }

  // Frees every object of this heap and of all its descendants, children first.
  void clear() {
    Tree::forEachPostOrder([](Tree* node) { node->Super::clear(); });
  }

  NestedRegionHeap* parent() const noexcept { return down(Tree::parent()); }
  NestedRegionHeap* firstChild() const noexcept { return down(Tree::firstChild()); }
  NestedRegionHeap* nextSibling() const noexcept { return down(Tree::nextSibling()); }

 private:
  // Every heap in this tree is a NestedRegionHeap: only the constructor attaches.
  static NestedRegionHeap* down(Tree* node) noexcept { return static_cast<NestedRegionHeap*>(node); }

  // The tree is managed here, by construction and destruction.
  using Tree::attachTo;
  using Tree::detach;
  using Tree::forEachPostOrder;
  using Tree::forEachPreOrder;
};

}  // namespace strata::layers
