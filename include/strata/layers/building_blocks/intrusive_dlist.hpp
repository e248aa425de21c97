// IntrusiveDList — a doubly linked list whose links live in its nodes: the
// node type holds a DListLink<T> member; the list holds a pointer to the first
// node and, with ListEnds::kHeadAndTail (the default), one to the last.
// push_front, push_back, pop_front, remove and replace (of any node, given the node) are
// O(1), walk nothing and never allocate, so code that must not call malloc
// (libstrata, the layers) can keep its lists in it.
//
//   struct Page { ...; DListLink<Page> link; ... };
//   IntrusiveDList<Page, &Page::link> pages;                         // head and tail
//   IntrusiveDList<Page, &Page::link, ListEnds::kHeadOnly> bin;      // one pointer
//
// kHeadOnly is for lists kept by the thousand (size bins, a tree's children),
// where the tail pointer would cost memory: no push_back, no back.
// The list does not own its nodes: a node sits in at most one list per link
// member, and must outlive its stay there. remove and pop_front leave the
// removed node's links as they were: a caller that later tests them resets
// them itself (most never look, and would pay two stores). Move-only (a copy would share the nodes); moving leaves the
// source empty. Not thread safe.
#pragma once
#include <type_traits>

#include "strata/assert.hpp"
#include "strata/layers/building_blocks/detail/intrusive_list_walk.hpp"

namespace strata::layers {

// The links a node of an IntrusiveDList holds (one pair per list it can be in).
template <class T>
struct DListLink {
  T* prev = nullptr;
  T* next = nullptr;
};

enum class ListEnds { kHeadOnly, kHeadAndTail };

template <class T, DListLink<T> T::*Link, ListEnds Ends = ListEnds::kHeadAndTail>
class IntrusiveDList {
  static constexpr bool kHasTail = Ends == ListEnds::kHeadAndTail;
  struct NoTail {};
  using Tail = std::conditional_t<kHasTail, T*, NoTail>;

 public:
  using value_type = T;
  using iterator = detail::IntrusiveListIterator<IntrusiveDList>;

  constexpr IntrusiveDList() noexcept = default;
  IntrusiveDList(const IntrusiveDList&) = delete;
  IntrusiveDList& operator=(const IntrusiveDList&) = delete;
  constexpr IntrusiveDList(IntrusiveDList&& other) noexcept : head_(other.head_), tail_(other.tail_) { other.clear(); }
  constexpr IntrusiveDList& operator=(IntrusiveDList&& other) noexcept {
    if (&other != this) {
      head_ = other.head_;
      tail_ = other.tail_;
      other.clear();
    }
    return *this;
  }

  constexpr bool empty() const noexcept { return head_ == nullptr; }
  constexpr T* front() const noexcept { return head_; }
  constexpr T* back() const noexcept
    requires kHasTail
  {
    return tail_;
  }
  // The neighbours of a node in its list (nullptr at either end).
  static constexpr T* next(const T* node) noexcept { return (node->*Link).next; }
  static constexpr T* prev(const T* node) noexcept { return (node->*Link).prev; }

  constexpr void push_front(T* node) noexcept {
    STRATA_ASSERT(node != nullptr && node != head_);
    DListLink<T>& link = node->*Link;
    link.prev = nullptr;
    link.next = head_;
    if (head_ != nullptr) (head_->*Link).prev = node;
    else setTail(node);
    head_ = node;
  }

  constexpr void push_back(T* node) noexcept
    requires kHasTail
  {
    DListLink<T>& link = node->*Link;
    link.next = nullptr;
    link.prev = tail_;
    if (tail_ != nullptr) (tail_->*Link).next = node;
    else head_ = node;
    tail_ = node;
  }

  // Takes the first node off; nullptr when empty.
  constexpr T* pop_front() noexcept {
    T* node = head_;
    if (node == nullptr) return nullptr;
    head_ = (node->*Link).next;
    if (head_ != nullptr) (head_->*Link).prev = nullptr;
    else setTail(nullptr);
    return node;
  }

  // Unlinks node, which must be in this list.
  constexpr void remove(T* node) noexcept {
    const DListLink<T>& link = node->*Link;
    STRATA_ASSERT(link.prev != nullptr ? (link.prev->*Link).next == node : head_ == node);  // node is on this list
    STRATA_ASSERT(link.next == nullptr || (link.next->*Link).prev == node);
    if (link.prev != nullptr) (link.prev->*Link).next = link.next;
    else head_ = link.next;
    if (link.next != nullptr) (link.next->*Link).prev = link.prev;
    else setTail(link.prev);
  }

  // Puts node (in no list) where old (in this list) is, at the same place in
  // the order: cheaper than a remove and an insert where the order or the
  // list's neighbours (a size bin's bitmap) would not change. old's links are
  // left as they were.
  constexpr void replace(T* old, T* node) noexcept {
    const DListLink<T> link = old->*Link;  // a copy: node may overlap old's memory
    node->*Link = link;
    if (link.prev != nullptr) (link.prev->*Link).next = node;
    else head_ = node;
    if (link.next != nullptr) (link.next->*Link).prev = node;
    else setTail(node);
  }

  // Forgets every node (their links are left as they are).
  constexpr void clear() noexcept {
    head_ = nullptr;
    setTail(nullptr);
  }

  // Empties the list, calling fn(node) for each node, first to last; fn may
  // reuse or destroy the node (its links are read before).
  template <class Fn>
  constexpr void drain(Fn fn) {
    T* first = head_;
    clear();
    detail::hand_each_to<IntrusiveDList>(first, fn);
  }

  constexpr iterator begin() const noexcept { return iterator(head_); }
  constexpr iterator end() const noexcept { return iterator(); }

 private:
  constexpr void setTail(T* node) noexcept {
    if constexpr (kHasTail) tail_ = node;
  }

  T* head_ = nullptr;
  [[no_unique_address]] Tail tail_{};
};

}  // namespace strata::layers
