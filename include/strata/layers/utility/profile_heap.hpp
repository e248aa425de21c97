// ProfileHeap — fragmentation statistics. It compares what the program asked
// for with what the heap below holds for it:
//   live_requested / peak_live_requested  bytes requested by live objects
//   held / peak_held                      bytes of the parent's blocks behind
//                                         those objects: Super::getSize(block)
//                                         when Super is sized, else request +
//                                         this layer's header
// plus counts of malloc/free calls, failures and live objects. stats() returns
// them; report(FILE*) prints them. peak_held / peak_live_requested is the
// fragmentation ratio the paper's Table 4 style comparisons use.
// Each object carries a 16-byte header (its requested and held sizes), so
// pointers stay kAlignment-aligned; getSize returns the requested size.
// Limits: counters are plain integers — not thread safe (put LockedHeap
// outside); "held" is the parent's usable size, not counting the parent's own
// headers or free memory it keeps (measure those with a ProfileHeap further up).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "strata/layers/heap.hpp"

namespace strata::layers {

struct ProfileStats {
  std::size_t mallocs = 0;         // successful malloc calls
  std::size_t failed_mallocs = 0;  // malloc calls the parent could not satisfy
  std::size_t frees = 0;           // free calls on non-null pointers
  std::size_t live_objects = 0;
  std::size_t peak_live_objects = 0;
  std::size_t live_requested = 0;
  std::size_t peak_live_requested = 0;
  std::size_t held = 0;
  std::size_t peak_held = 0;

  // Peak bytes held per peak byte requested (1.0 = no overhead); 0 before any request.
  double fragmentation() const noexcept {
    return peak_live_requested ? static_cast<double>(peak_held) / static_cast<double>(peak_live_requested) : 0.0;
  }
};

template <Heap Super>
class ProfileHeap : public Super {
 public:
  using Super::Super;

  void* malloc(std::size_t size) noexcept {
    if (size > SIZE_MAX - sizeof(Header)) {
      ++stats_.failed_mallocs;
      return nullptr;
    }
    void* block = Super::malloc(size + sizeof(Header));
    if (!block) {
      ++stats_.failed_mallocs;
      return nullptr;
    }
    Header* header = static_cast<Header*>(block);
    header->requested = size;
    header->held = held_size(block, size);
    ++stats_.mallocs;
    add(stats_.live_objects, stats_.peak_live_objects, 1);
    add(stats_.live_requested, stats_.peak_live_requested, header->requested);
    add(stats_.held, stats_.peak_held, header->held);
    return header + 1;
  }

  void free(void* ptr) noexcept {
    if (!ptr) return;
    Header* header = static_cast<Header*>(ptr) - 1;
    ++stats_.frees;
    --stats_.live_objects;
    stats_.live_requested -= header->requested;
    stats_.held -= header->held;
    Super::free(header);
  }

  std::size_t getSize(void* ptr) const noexcept { return (static_cast<const Header*>(ptr) - 1)->requested; }

  // The parent's other whole-object operations do not understand this layer's
  // objects: hide them rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;
  void clear() = delete;

  const ProfileStats& stats() const noexcept { return stats_; }

  void report(std::FILE* out) const noexcept {
    std::fprintf(out,
                 "strata ProfileHeap: mallocs %zu (failed %zu), frees %zu, live objects %zu (peak %zu)\n"
                 "  live requested %zu B (peak %zu B), held %zu B (peak %zu B), fragmentation %.3f\n",
                 stats_.mallocs, stats_.failed_mallocs, stats_.frees, stats_.live_objects, stats_.peak_live_objects,
                 stats_.live_requested, stats_.peak_live_requested, stats_.held, stats_.peak_held,
                 stats_.fragmentation());
  }

 private:
  struct alignas(kAlignment) Header {
    std::size_t requested;
    std::size_t held;
  };
  static_assert(sizeof(Header) == kAlignment);

  std::size_t held_size(void* block, std::size_t size) noexcept {
    if constexpr (SizedHeap<Super>)
      return static_cast<std::size_t>(Super::getSize(block));
    else
      return size + sizeof(Header);
  }
  static void add(std::size_t& current, std::size_t& peak, std::size_t amount) noexcept {
    current += amount;
    peak = std::max(peak, current);
  }

  ProfileStats stats_;
};

}  // namespace strata::layers
