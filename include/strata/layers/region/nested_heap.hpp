// NestedHeap — a tree of heaps (the 2002 reaps paper's nested regions, §8.1).
//
// Super: any class (usually a region heap); NestedHeap adds the links. Each
// heap knows its parent and its children (first child, siblings), so a
// subtree can be walked without recursion or allocation however deep it is.
// Clearing or destroying a heap means doing so for its whole subtree; the
// owner of the tree walks it with forEachPreOrder (clear: parents first) and
// forEachPostOrder (destroy: children first, fn may destroy the node), because
// what one node's clear or destroy involves is known there.
// The children are an IntrusiveDList (head only) threaded through their
// sibling links, so attaching and detaching are O(1) and allocate nothing.
// NestedRegionHeap (special/) is this tree with RAII and a clear() that
// reaches the subtree, for regions that own their memory.
// Marks: noteInUse() flags a heap and its ancestors as possibly holding
// something; forEachMarkedPreOrder visits only flagged heaps and unflags them,
// so clearing a subtree skips every descendant nothing was allocated from
// since its last clear (scopes clears a block's reap, whose deeper levels are
// empty by then, tens of thousands of times a run: a whole-subtree walk read
// up to a dozen reap headers each time; docs/benchmarks-choices.md, "Marked
// clears").
// Limits: not thread safe (the tree is one owner's); a node must be detached
// (or its whole subtree destroyed) before its memory goes away.
#pragma once
#include "strata/layers/building_blocks/intrusive_dlist.hpp"
#include "strata/layers/region/concepts.hpp"

namespace strata::layers {

template <Nestable Super>
class NestedHeap : public Super {
 public:
  // Link this heap in as the first child of parent (nullptr: a root).
  void attachTo(NestedHeap* parent) noexcept {
    parent_ = parent;
    if (parent != nullptr) parent->children_.push_front(this);
    if (in_use_) noteInUse();  // keeps "a flagged heap's ancestors are flagged"
  }

  // Leaves the parent's children (a no-op for a root); the subtree stays.
  void detach() noexcept {
    if (parent_ != nullptr) parent_->children_.remove(this);
    parent_ = nullptr;
    siblings_ = {};
  }

  NestedHeap* parent() const noexcept { return parent_; }
  // The most recently attached child, and the one attached before this heap.
  NestedHeap* firstChild() const noexcept { return children_.front(); }
  NestedHeap* nextSibling() const noexcept { return Children::next(this); }

  // fn(node) for this heap and every descendant, parents before children.
  template <class Fn>
  void forEachPreOrder(Fn fn) noexcept {
    for (NestedHeap* node = this; node != nullptr; node = node->nextPreOrder(this)) fn(node);
  }

  // Flags this heap, and every ancestor not flagged yet, as possibly holding
  // something. A flagged heap's ancestors are always flagged.
  void noteInUse() noexcept {
    in_use_ = true;
    for (NestedHeap* node = parent_; node != nullptr && !node->in_use_; node = node->parent_) node->in_use_ = true;
  }
  bool inUseNoted() const noexcept { return in_use_; }

  // fn(node) for this heap and every flagged descendant, parents before
  // children, skipping subtrees whose root is not flagged; each visited heap
  // is unflagged (before fn runs). Nothing when this heap is not flagged.
  template <class Fn>
  void forEachMarkedPreOrder(Fn fn) noexcept {
    if (!in_use_) return;
    for (NestedHeap* node = this; node != nullptr; node = node->nextMarkedPreOrder(this)) {
      node->in_use_ = false;
      fn(node);
    }
  }

  // fn(node) for every descendant and then this heap, children before parents;
  // fn may destroy node.
  template <class Fn>
  void forEachPostOrder(Fn fn) noexcept {
    NestedHeap* node = deepestFirst(this);
    for (;;) {
      NestedHeap* after = node == this                  ? nullptr
                          : node->nextSibling() != nullptr ? deepestFirst(node->nextSibling())
                                                           : node->parent_;
      fn(node);
      if (after == nullptr) return;
      node = after;
    }
  }

 private:
  static NestedHeap* deepestFirst(NestedHeap* node) noexcept {
    while (node->firstChild() != nullptr) node = node->firstChild();
    return node;
  }

  NestedHeap* nextPreOrder(const NestedHeap* root) const noexcept {
    if (firstChild() != nullptr) return firstChild();
    for (const NestedHeap* node = this; node != root; node = node->parent_)
      if (node->nextSibling() != nullptr) return node->nextSibling();
    return nullptr;
  }

  static NestedHeap* firstMarked(NestedHeap* node) noexcept {
    while (node != nullptr && !node->in_use_) node = node->nextSibling();
    return node;
  }

  NestedHeap* nextMarkedPreOrder(const NestedHeap* root) const noexcept {
    if (NestedHeap* child = firstMarked(firstChild())) return child;
    for (const NestedHeap* node = this; node != root; node = node->parent_)
      if (NestedHeap* sibling = firstMarked(node->nextSibling())) return sibling;
    return nullptr;
  }

  NestedHeap* parent_ = nullptr;
  bool in_use_ = false;  // noteInUse() since the last forEachMarkedPreOrder reached it
  DListLink<NestedHeap> siblings_;  // in the parent's children_
  using Children = IntrusiveDList<NestedHeap, &NestedHeap::siblings_, ListEnds::kHeadOnly>;
  Children children_;  // most recently attached first
};

}  // namespace strata::layers
