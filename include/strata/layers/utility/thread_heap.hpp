// ThreadHeap — "pure private heaps": NumHeaps instances of Super; each thread
// allocates from, and frees to, the instance its thread id hashes to. An object
// freed by another thread therefore lands in that thread's heap, not the one it
// came from (memory can drift from producer to consumer threads, the known
// blowup of pure private heaps; PHOThreadHeap avoids it).
// Limits: several threads can hash to one instance and objects cross heaps, so
// Super must be thread safe and accept any other instance's objects (e.g.
// LockedHeap over a shared-representation heap such as SizeHeap chains or
// MallocHeap). Not a mixin of one Super: it owns NumHeaps of them, each on its
// own cache line.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"
#include "strata/platform.hpp"

namespace strata::layers {

namespace detail {
// Spreads (often consecutive) kernel thread ids over the heap slots.
inline std::size_t thread_slot(std::size_t num_slots) noexcept {
  const std::uint64_t mixed = platform::thread_id() * 0x9E3779B97F4A7C15ull;
  return static_cast<std::size_t>(mixed >> 32) % num_slots;
}
inline constexpr std::size_t kCacheLine = 64;
}  // namespace detail

template <std::size_t NumHeaps, Heap Super>
class ThreadHeap {
  static_assert(NumHeaps > 0, "ThreadHeap needs at least one heap");

 public:
  void* malloc(std::size_t size) noexcept { return mine().malloc(size); }
  void free(void* ptr) noexcept { mine().free(ptr); }

  std::size_t getSize(void* ptr) noexcept
    requires SizedHeap<Super>
  {
    return mine().getSize(ptr);
  }

  // The instance the calling thread uses, and instance i (for inspection).
  static std::size_t heapIndex() noexcept { return detail::thread_slot(NumHeaps); }
  Super& getHeap(std::size_t index) noexcept { return heaps_[index].heap; }

 private:
  struct alignas(detail::kCacheLine) Slot {
    Super heap;
  };
  Super& mine() noexcept { return heaps_[heapIndex()].heap; }

  std::array<Slot, NumHeaps> heaps_{};
};

}  // namespace strata::layers
