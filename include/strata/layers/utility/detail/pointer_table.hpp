// PointerTable — a small open-addressing hash map from object address to one
// word, for layers that must remember something about objects they did not
// give a header to (DebugHeap's live/freed record, ANSIWrapper's over-aligned
// objects). Its slots come from a heap the caller passes in — normally the
// layer's own parent — so a layer never calls the global allocator it may be
// replacing. Linear probing, deletion by backward shift (no tombstones), grows
// at half load. Not thread safe; the owning layer is not either.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/layers/heap.hpp"

namespace strata::layers::detail {

class PointerTable {
 public:
  PointerTable() = default;
  PointerTable(const PointerTable&) = delete;
  PointerTable& operator=(const PointerTable&) = delete;

  // The value stored for key, or nullptr when key is absent.
  std::uintptr_t* find(const void* key) noexcept {
    if (count_ == 0) return nullptr;
    const std::uintptr_t k = to_key(key);
    for (std::size_t i = home(k);; i = next(i)) {
      if (slots_[i].key == k) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  // Sets key -> value. false when the table had to grow and `heap` had no memory
  // (the table is then unchanged).
  template <Heap H>
  bool assign(H& heap, const void* key, std::uintptr_t value) noexcept {
    if (std::uintptr_t* v = find(key)) {
      *v = value;
      return true;
    }
    if ((count_ + 1) * 2 > capacity_ && !grow(heap)) return false;
    place(to_key(key), value);
    ++count_;
    return true;
  }

  // Removes key; false when it was absent.
  bool erase(const void* key) noexcept {
    if (count_ == 0) return false;
    const std::uintptr_t k = to_key(key);
    std::size_t i = home(k);
    while (slots_[i].key != k) {
      if (slots_[i].key == 0) return false;
      i = next(i);
    }
    // Backward shift: pull later entries of the probe run into the hole when
    // the hole lies between their home slot and where they sit now.
    std::size_t hole = i;
    for (std::size_t j = next(i); slots_[j].key != 0; j = next(j)) {
      const std::size_t h = home(slots_[j].key);
      const bool movable = (hole <= j) ? (h <= hole || h > j) : (h <= hole && h > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --count_;
    return true;
  }

  std::size_t size() const noexcept { return count_; }

  // Returns the slots to `heap`; the table is empty afterwards.
  template <Heap H>
  void release(H& heap) noexcept {
    if (slots_) heap.free(slots_);
    slots_ = nullptr;
    capacity_ = count_ = 0;
  }

 private:
  struct Slot {
    std::uintptr_t key = 0;  // 0: empty (no object lives at address 0)
    std::uintptr_t value = 0;
  };
  static constexpr std::size_t kInitialCapacity = 64;

  static std::uintptr_t to_key(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }
  std::size_t home(std::uintptr_t k) const noexcept {
    return static_cast<std::size_t>((k >> 4) * 0x9E3779B97F4A7C15ull) & (capacity_ - 1);
  }
  std::size_t next(std::size_t i) const noexcept { return (i + 1) & (capacity_ - 1); }

  void place(std::uintptr_t k, std::uintptr_t value) noexcept {
    std::size_t i = home(k);
    while (slots_[i].key != 0) i = next(i);
    slots_[i] = Slot{k, value};
  }

  template <Heap H>
  bool grow(H& heap) noexcept {
    const std::size_t new_capacity = capacity_ ? capacity_ * 2 : kInitialCapacity;
    void* memory = heap.malloc(new_capacity * sizeof(Slot));
    if (!memory) return false;
    std::memset(memory, 0, new_capacity * sizeof(Slot));
    Slot* old = slots_;
    const std::size_t old_capacity = capacity_;
    slots_ = static_cast<Slot*>(memory);
    capacity_ = new_capacity;
    for (std::size_t i = 0; i < old_capacity; ++i)
      if (old[i].key != 0) place(old[i].key, old[i].value);
    if (old) heap.free(old);
    return true;
  }

  Slot* slots_ = nullptr;
  std::size_t capacity_ = 0;  // a power of two, or 0 before the first insert
  std::size_t count_ = 0;
};

}  // namespace strata::layers::detail
