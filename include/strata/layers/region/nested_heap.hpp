// NestedHeap — a tree of heaps (the 2002 reaps paper's nested regions, §8.1).
//
// Super: any class (usually a region heap); NestedHeap adds the links. Each
// heap knows its parent and its children (first child, siblings), so a
// subtree can be walked without recursion or allocation however deep it is.
// Clearing or destroying a heap means doing so for its whole subtree; the
// owner of the tree walks it with forEachPreOrder (clear: parents first) and
// forEachPostOrder (destroy: children first, fn may destroy the node), because
// what one node's clear or destroy involves is known there.
// Limits: not thread safe (the tree is one owner's); a node must be detached
// (or its whole subtree destroyed) before its memory goes away.
#pragma once
#include "strata/layers/region/concepts.hpp"

namespace strata::layers {

template <Nestable Super>
class NestedHeap : public Super {
 public:
  // Link this heap in as the first child of parent (nullptr: a root).
  void attachTo(NestedHeap* parent) noexcept {
    parent_ = parent;
    if (parent == nullptr) return;
    next_ = parent->first_child_;
    if (next_ != nullptr) next_->prev_ = this;
    parent->first_child_ = this;
  }

  void detach() noexcept {
    if (prev_ != nullptr) prev_->next_ = next_;
    else if (parent_ != nullptr) parent_->first_child_ = next_;
    if (next_ != nullptr) next_->prev_ = prev_;
    parent_ = prev_ = next_ = nullptr;
  }

  NestedHeap* parent() const noexcept { return parent_; }

  // fn(node) for this heap and every descendant, parents before children.
  template <class Fn>
  void forEachPreOrder(Fn fn) noexcept {
    for (NestedHeap* node = this; node != nullptr; node = node->nextPreOrder(this)) fn(node);
  }

  // fn(node) for every descendant and then this heap, children before parents;
  // fn may destroy node.
  template <class Fn>
  void forEachPostOrder(Fn fn) noexcept {
    NestedHeap* node = deepestFirst(this);
    for (;;) {
      NestedHeap* after = node == this ? nullptr : node->next_ != nullptr ? deepestFirst(node->next_) : node->parent_;
      fn(node);
      if (after == nullptr) return;
      node = after;
    }
  }

 private:
  static NestedHeap* deepestFirst(NestedHeap* node) noexcept {
    while (node->first_child_ != nullptr) node = node->first_child_;
    return node;
  }

  NestedHeap* nextPreOrder(const NestedHeap* root) const noexcept {
    if (first_child_ != nullptr) return first_child_;
    for (const NestedHeap* node = this; node != root; node = node->parent_)
      if (node->next_ != nullptr) return node->next_;
    return nullptr;
  }

  NestedHeap* parent_ = nullptr;
  NestedHeap* first_child_ = nullptr;
  NestedHeap* prev_ = nullptr;  // siblings
  NestedHeap* next_ = nullptr;
};

}  // namespace strata::layers
