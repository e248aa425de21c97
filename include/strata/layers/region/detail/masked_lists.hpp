// MaskedLists — kLists LIFO lists of freed objects, numbered, with a bitmask
// of the lists that hold any: a layer that reuses freed objects by size class
// (ClearOptimizedHeap, SizedReuseHeap) finds the first non-empty list at or
// above a class in a few words, and clears only the lists the mask names.
//
// Node: the freed object's view, whose first member is `Node* next` (the
// link lives in the object itself). kInstrumented: the link is touched
// through instrument::expose/hide, because under ASan or Valgrind a freed
// object is hidden from everybody.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#include "strata/layers/region/detail/instrument.hpp"

namespace strata::layers::detail {

template <class Node, std::size_t kLists>
class MaskedLists {
 public:
  static constexpr std::size_t kNone = kLists;  // firstFrom's "no list"

  bool empty(std::size_t list) const noexcept { return heads_[list] == nullptr; }
  Node* front(std::size_t list) const noexcept { return heads_[list]; }

  template <bool kInstrumented>
  void push(std::size_t list, Node* node) noexcept {
    if constexpr (kInstrumented) instrument::expose(node, sizeof(Node*));
    node->next = heads_[list];
    if constexpr (kInstrumented) instrument::hide(node, sizeof(Node*));
    heads_[list] = node;
    mask_[list / 64] |= bit(list);
  }

  // The first node of `list` (which holds one).
  template <bool kInstrumented>
  Node* pop(std::size_t list) noexcept {
    Node* node = heads_[list];
    if constexpr (kInstrumented) instrument::expose(node, sizeof(Node*));
    heads_[list] = node->next;
    if constexpr (kInstrumented) instrument::hide(node, sizeof(Node*));
    if (heads_[list] == nullptr) mask_[list / 64] &= ~bit(list);
    return node;
  }

  // The first list at or above `from` that holds a node; kNone when none does.
  std::size_t firstFrom(std::size_t from) const noexcept {
    if (from >= kLists) return kNone;
    std::size_t word = from / 64;
    std::uint64_t bits = mask_[word] & (~std::uint64_t{0} << (from % 64));
    while (bits == 0) {
      if (++word == kWords) return kNone;
      bits = mask_[word];
    }
    return word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
  }

  // Every list empty; only the lists the mask names are touched.
  void clear() noexcept {
    for (std::size_t word = 0; word < kWords; ++word) {
      for (std::uint64_t bits = mask_[word]; bits != 0; bits &= bits - 1)
        heads_[word * 64 + static_cast<std::size_t>(std::countr_zero(bits))] = nullptr;
      mask_[word] = 0;
    }
  }

 private:
  static constexpr std::size_t kWords = (kLists + 63) / 64;
  static constexpr std::uint64_t bit(std::size_t list) noexcept { return std::uint64_t{1} << (list % 64); }

  std::uint64_t mask_[kWords] = {};  // first: beside the scalars of the layer that holds the lists
  Node* heads_[kLists] = {};
};

}  // namespace strata::layers::detail
