// Walking IntrusiveSList and IntrusiveDList, the same for both: the forward
// iterator and the loop behind drain(), each stepping with List::next.
#pragma once
#include <cstddef>
#include <iterator>

namespace strata::layers::detail {

// A node pointer; it yields the nodes themselves (T&): the lists hold no
// copies. Removing the node an iterator points at invalidates it (use the
// list's drain() to take every node out while walking).
template <class List>
class IntrusiveListIterator {
 public:
  using value_type = typename List::value_type;
  using difference_type = std::ptrdiff_t;
  using pointer = value_type*;
  using reference = value_type&;
  using iterator_category = std::forward_iterator_tag;

  constexpr IntrusiveListIterator() noexcept = default;
  constexpr explicit IntrusiveListIterator(value_type* node) noexcept : node_(node) {}

  constexpr reference operator*() const noexcept { return *node_; }
  constexpr pointer operator->() const noexcept { return node_; }
  constexpr IntrusiveListIterator& operator++() noexcept {
    node_ = List::next(node_);
    return *this;
  }
  constexpr IntrusiveListIterator operator++(int) noexcept {
    IntrusiveListIterator before = *this;
    ++*this;
    return before;
  }
  friend constexpr bool operator==(IntrusiveListIterator, IntrusiveListIterator) noexcept = default;

 private:
  value_type* node_ = nullptr;
};

// fn(node) for node and every node after it, first to last; each link is read
// before fn, so fn may reuse or destroy the node (drain: the list is already empty).
template <class List, class Fn>
constexpr void hand_each_to(typename List::value_type* node, Fn& fn) {
  while (node != nullptr) {
    typename List::value_type* after = List::next(node);
    fn(node);
    node = after;
  }
}

}  // namespace strata::layers::detail
