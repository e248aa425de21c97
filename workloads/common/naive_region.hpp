// naive_region.hpp — the region emulator of naive mode (2002 paper §5.1; 2026
// paper Table 4: "custom allocation disabled"). Every object is a malloc
// block of its own, linked into the region's list so that clear() can free
// them all, and free() gives one back at once. No chunk, no bump pointer:
// what the program would do with plain malloc/free.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>

namespace strata::workload {

class NaiveRegion {
 public:
  NaiveRegion() = default;
  NaiveRegion(const NaiveRegion&) = delete;
  NaiveRegion& operator=(const NaiveRegion&) = delete;
  ~NaiveRegion() { clear(); }

  // nullptr when malloc fails (errno is malloc's).
  void* malloc(std::size_t size) noexcept {
    auto* link = static_cast<Link*>(std::malloc(sizeof(Link) + size));
    if (link == nullptr) return nullptr;
    link->prev = &head_;
    link->next = head_.next;
    if (head_.next != nullptr) head_.next->prev = link;
    head_.next = link;
    return link + 1;
  }

  // Gives one object back to malloc now.
  void free(void* ptr) noexcept {
    if (ptr == nullptr) return;
    Link* link = static_cast<Link*>(ptr) - 1;
    link->prev->next = link->next;
    if (link->next != nullptr) link->next->prev = link->prev;
    std::free(link);
  }

  // Frees every object still in the region.
  void clear() noexcept {
    Link* link = head_.next;
    while (link != nullptr) {
      Link* next = link->next;
      std::free(link);
      link = next;
    }
    head_.next = nullptr;
  }

 private:
  // 16 bytes: keeps the object 16-byte aligned like malloc's.
  struct Link {
    Link* prev;
    Link* next;
  };
  static_assert(sizeof(Link) == 16);
  Link head_{nullptr, nullptr};
};

}  // namespace strata::workload
