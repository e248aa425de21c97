// SLList — a dictionary for AdaptHeap: a LIFO singly linked list threaded through
// the free objects (one pointer in each; objects need at least 8 bytes).
// No removal from the middle (use DLList for that).
#pragma once
#include <cstddef>

namespace strata::layers {

class SLList {
 public:
  static constexpr std::size_t kMinObjectSize = sizeof(void*);

  bool empty() const noexcept { return head_ == nullptr; }

  void insert(void* ptr) noexcept {
    auto* node = static_cast<Node*>(ptr);
    node->next = head_;
    head_ = node;
  }

  // Removes and returns the most recently inserted object, or nullptr.
  void* get() noexcept {
    Node* node = head_;
    if (node != nullptr) head_ = node->next;
    return node;
  }

 private:
  struct Node {
    Node* next;
  };
  Node* head_ = nullptr;
};

}  // namespace strata::layers
