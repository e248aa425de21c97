// IntrusiveSList — a singly linked list whose link lives in its nodes: the node
// type holds an SListLink<T> member and the list is one pointer, to the first
// node. push_front and pop_front are O(1) and never allocate, so code that must
// not call malloc (libstrata, the layers' free lists) can keep its lists in it.
//
//   struct FreeBlock { SListLink<FreeBlock> link; };
//   IntrusiveSList<FreeBlock, &FreeBlock::link> blocks;
//   blocks.push_front(block);  ...  FreeBlock* b = blocks.pop_front();
//
// A LIFO stack with a walk: no tail, no removal from the middle (that needs the
// node before; IntrusiveDList has it). The list does not own its nodes: a node
// sits in at most one list per link member, and must outlive its stay there.
// Move-only (a copy would share the nodes); moving leaves the source empty.
// Not thread safe.
#pragma once
#include "strata/layers/building_blocks/detail/intrusive_list_walk.hpp"

namespace strata::layers {

// The link a node of an IntrusiveSList holds (one per list it can be in).
template <class T>
struct SListLink {
  T* next = nullptr;
};

template <class T, SListLink<T> T::*Link>
class IntrusiveSList {
 public:
  using value_type = T;
  using iterator = detail::IntrusiveListIterator<IntrusiveSList>;

  constexpr IntrusiveSList() noexcept = default;
  IntrusiveSList(const IntrusiveSList&) = delete;
  IntrusiveSList& operator=(const IntrusiveSList&) = delete;
  constexpr IntrusiveSList(IntrusiveSList&& other) noexcept : head_(other.head_) { other.head_ = nullptr; }
  constexpr IntrusiveSList& operator=(IntrusiveSList&& other) noexcept {
    head_ = other.head_;
    if (&other != this) other.head_ = nullptr;
    return *this;
  }

  constexpr bool empty() const noexcept { return head_ == nullptr; }
  constexpr T* front() const noexcept { return head_; }
  // The node after `node` (nullptr at the end).
  static constexpr T* next(const T* node) noexcept { return (node->*Link).next; }

  constexpr void push_front(T* node) noexcept {
    (node->*Link).next = head_;
    head_ = node;
  }

  // Takes the first node off; nullptr when empty.
  constexpr T* pop_front() noexcept {
    T* node = head_;
    if (node != nullptr) head_ = (node->*Link).next;
    return node;
  }

  // Forgets every node (their links are left as they are).
  constexpr void clear() noexcept { head_ = nullptr; }

  // Empties the list, calling fn(node) for each node, first to last; fn may
  // reuse or destroy the node (its link is read before).
  template <class Fn>
  constexpr void drain(Fn fn) {
    T* first = head_;
    head_ = nullptr;
    detail::hand_each_to<IntrusiveSList>(first, fn);
  }

  constexpr iterator begin() const noexcept { return iterator(head_); }
  constexpr iterator end() const noexcept { return iterator(); }

 private:
  T* head_ = nullptr;
};

}  // namespace strata::layers
