// Live objects by address: an exact map pointer -> Value (the requested size,
// and for the trace recorder an object id), so every free, realloc and aligned
// allocation is accounted with the size the program asked for, whatever the
// allocator rounds it to.
//
// Lock-striped open addressing with linear probing; each stripe doubles at half
// load and deletes by backward shift (no tombstones). Memory comes from
// map_lab_memory, never from malloc.
#pragma once
#include <cstddef>
#include <cstdint>

#include "lab_config.hpp"
#include "lab_memory.hpp"
#include "lock.hpp"

namespace strata::lab {

template <class Value>
class LiveTable {
 public:
  enum class Insert { kAdded, kReplaced, kNoMemory };

  // Adds p. kReplaced: p was already there (its free was never seen, e.g. it
  // went through an entry point the shim does not interpose); *previous then
  // holds the old value. kNoMemory: the table could not grow.
  Insert insert(const void* p, const Value& value, Value* previous) noexcept {
    const std::uint64_t h = hash(p);
    Stripe& s = stripe_for(h);
    Hold hold(s.lock);
    if ((s.count + 1) * 2 > s.capacity && !grow(s)) return Insert::kNoMemory;
    Entry& slot = find_slot(s, key_of(p), h);
    if (slot.key != 0) {
      *previous = slot.value;
      slot.value = value;
      return Insert::kReplaced;
    }
    slot.key = key_of(p);
    slot.value = value;
    ++s.count;
    return Insert::kAdded;
  }

  // Removes p; false if it was not there.
  bool take(const void* p, Value* out) noexcept {
    const std::uint64_t h = hash(p);
    Stripe& s = stripe_for(h);
    Hold hold(s.lock);
    if (s.capacity == 0) return false;
    const std::uintptr_t key = key_of(p);
    const std::size_t mask = s.capacity - 1;
    for (std::size_t i = slot_of(h, mask);; i = (i + 1) & mask) {
      if (s.slots[i].key == 0) return false;
      if (s.slots[i].key == key) {
        *out = s.slots[i].value;
        erase_at(s, i);
        --s.count;
        return true;
      }
    }
  }

  std::size_t size() noexcept {
    std::size_t total = 0;
    for (Stripe& s : stripes_) {
      Hold hold(s.lock);
      total += s.count;
    }
    return total;
  }

  // Drop every entry (a fork child that starts afresh).
  void clear() noexcept {
    for (Stripe& s : stripes_) {
      Hold hold(s.lock);
      unmap_lab_memory(s.slots, s.capacity * sizeof(Entry));
      s.slots = nullptr;
      s.capacity = 0;
      s.count = 0;
    }
  }

  // fork(): hold every stripe across the fork so the child's copy is consistent.
  void lock_all() noexcept {
    for (Stripe& s : stripes_) s.lock.lock();
  }
  void unlock_all() noexcept {
    for (Stripe& s : stripes_) s.lock.unlock();
  }

 private:
  struct Entry {
    std::uintptr_t key;  // 0 = empty slot (no object lives at address 0)
    Value value;
  };
  struct Stripe {
    YieldingLock lock;
    Entry* slots = nullptr;
    std::size_t capacity = 0;  // a power of two, or 0 before first use
    std::size_t count = 0;
  };

  static std::uintptr_t key_of(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }
  static std::uint64_t hash(const void* p) noexcept {
    std::uint64_t x = key_of(p) >> 4;  // the low bits of an aligned pointer are zero
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
  }
  // High bits choose the stripe, low bits the slot: independent.
  Stripe& stripe_for(std::uint64_t h) noexcept { return stripes_[(h >> 58) % config::kTableStripes]; }
  static std::size_t slot_of(std::uint64_t h, std::size_t mask) noexcept { return static_cast<std::size_t>(h) & mask; }

  // The slot holding key, or the empty slot where it belongs.
  static Entry& find_slot(Stripe& s, std::uintptr_t key, std::uint64_t h) noexcept {
    const std::size_t mask = s.capacity - 1;
    std::size_t i = slot_of(h, mask);
    while (s.slots[i].key != 0 && s.slots[i].key != key) i = (i + 1) & mask;
    return s.slots[i];
  }

  static bool grow(Stripe& s) noexcept {
    const std::size_t capacity = s.capacity == 0 ? config::kTableInitialSlots : s.capacity * 2;
    auto* slots = static_cast<Entry*>(map_lab_memory(capacity * sizeof(Entry)));
    if (slots == nullptr) return false;
    Entry* old = s.slots;
    const std::size_t old_capacity = s.capacity;
    s.slots = slots;
    s.capacity = capacity;
    for (std::size_t i = 0; i < old_capacity; ++i)
      if (old[i].key != 0) find_slot(s, old[i].key, hash(reinterpret_cast<const void*>(old[i].key))) = old[i];
    unmap_lab_memory(old, old_capacity * sizeof(Entry));
    return true;
  }

  // Backward-shift deletion: pull later members of the probe run into the hole.
  static void erase_at(Stripe& s, std::size_t hole) noexcept {
    const std::size_t mask = s.capacity - 1;
    for (std::size_t i = (hole + 1) & mask; s.slots[i].key != 0; i = (i + 1) & mask) {
      const std::size_t home = slot_of(hash(reinterpret_cast<const void*>(s.slots[i].key)), mask);
      // Move i into the hole unless its home lies cyclically in (hole, i].
      const bool home_after_hole = ((i - home) & mask) < ((i - hole) & mask);
      if (!home_after_hole) {
        s.slots[hole] = s.slots[i];
        hole = i;
      }
    }
    s.slots[hole].key = 0;
  }

  Stripe stripes_[config::kTableStripes];
};

}  // namespace strata::lab
