// DLList — a dictionary for AdaptHeap: a FIFO doubly linked list threaded through
// the free objects (two pointers in each; objects need at least 16 bytes).
// get() takes the oldest object; remove(ptr) unlinks any object in O(1), which is
// what lets CoalesceHeap pull a free neighbour out of whatever bin holds it.
#pragma once
#include <cstddef>

namespace strata::layers {

class DLList {
 public:
  static constexpr std::size_t kMinObjectSize = 2 * sizeof(void*);

  bool empty() const noexcept { return head_ == nullptr; }

  // Appends at the tail.
  void insert(void* ptr) noexcept {
    auto* node = static_cast<Node*>(ptr);
    node->next = nullptr;
    node->prev = tail_;
    if (tail_ != nullptr)
      tail_->next = node;
    else
      head_ = node;
    tail_ = node;
  }

  // Removes and returns the oldest object, or nullptr.
  void* get() noexcept {
    Node* node = head_;
    if (node != nullptr) unlink(node);
    return node;
  }

  // Unlinks ptr, which must be in this list.
  void remove(void* ptr) noexcept { unlink(static_cast<Node*>(ptr)); }

 private:
  struct Node {
    Node* prev;
    Node* next;
  };

  void unlink(Node* node) noexcept {
    if (node->prev != nullptr)
      node->prev->next = node->next;
    else
      head_ = node->next;
    if (node->next != nullptr)
      node->next->prev = node->prev;
    else
      tail_ = node->prev;
  }

  Node* head_ = nullptr;
  Node* tail_ = nullptr;
};

}  // namespace strata::layers
