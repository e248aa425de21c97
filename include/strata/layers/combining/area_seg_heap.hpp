// AreaSegHeap — segregated bins whose objects need no header (BIBOP, "big bag of
// pages"; Vam §3.2 keeps homogeneous objects in areas of their own): each bin
// draws its memory from an area of AreaBytes of its own inside one reservation,
// so free and getSize find an object's bin from its address alone.
//
//   malloc(n)   bin c = SizeClass(n) gets a request of ClassMaxSize(c) bytes;
//               c >= NumBins goes to BigHeap
//   free(p)     p inside the reservation: bin (p - base) / AreaBytes; else BigHeap
//   getSize(p)  the bin's class size (or the bin's own getSize, if it has one)
//
// LittleHeap<Area> is each bin's chain over its area; Area is a top heap that
// bumps through the bin's AreaBytes and never takes memory back (like SbrkHeap,
// one per bin), so a bin's chain decides everything else: e.g.
// FreelistHeap<ChunkHeap<8192, Area>> is Vam's reap-like allocation (bump through
// page blocks, then reuse the freed objects), and SizeHeap<...> on top of it puts
// a header back on every object (Vam's "small+header" variant).
// The reservation (NumBins * AreaBytes of address space, MAP_NORESERVE) is
// mapped at the first small malloc; untouched pages cost nothing.
// Limits: a full area means nullptr + ENOMEM for its bin; not thread safe.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"
#include "strata/platform.hpp"

namespace strata::layers {

template <std::size_t NumBins, std::size_t (*SizeClass)(std::size_t),
          std::size_t (*ClassMaxSize)(std::size_t), template <class> class LittleHeap, SizedHeap BigHeap,
          std::size_t AreaBytes = std::size_t{256} << 20>
class AreaSegHeap : public BigHeap {
  static_assert(NumBins > 0, "AreaSegHeap needs at least one bin");
  static_assert(AreaBytes % (std::size_t{64} << 10) == 0, "AreaBytes must be a multiple of 64 KiB");

 public:
  // The top heap of one bin: its area, bumped upward.
  class Area {
   public:
    void* malloc(std::size_t size) noexcept {
      const std::size_t bytes = size == 0 ? kAlignment : align_up(size, kAlignment);
      if (next_ == nullptr || bytes > static_cast<std::size_t>(end_ - next_)) {
        errno = ENOMEM;
        return nullptr;
      }
      void* block = next_;
      next_ += bytes;
      return block;
    }
    void free(void*) noexcept {}
    void assign(char* base) noexcept {
      next_ = base;
      end_ = base + AreaBytes;
    }

   private:
    char* next_ = nullptr;
    char* end_ = nullptr;
  };
  using Bin = LittleHeap<Area>;

  void* malloc(std::size_t size) {
    const std::size_t size_class = SizeClass(size);
    if (size_class >= NumBins) return BigHeap::malloc(size);
    if (base_ == nullptr && !reserve()) return nullptr;
    return bins_[size_class].malloc(ClassMaxSize(size_class));
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    if (owns(ptr)) {
      bins_[bin_of(ptr)].free(ptr);
      return;
    }
    BigHeap::free(ptr);
  }

  std::size_t getSize(void* ptr) {
    if (!owns(ptr)) return BigHeap::getSize(ptr);
    const std::size_t size_class = bin_of(ptr);
    if constexpr (SizedHeap<Bin>) {
      return bins_[size_class].getSize(ptr);
    } else {
      return ClassMaxSize(size_class);
    }
  }

  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

 private:
  static constexpr std::size_t kReserve = NumBins * AreaBytes;

  bool owns(void* ptr) const noexcept {
    // One unsigned comparison: an address below base_ wraps around to a huge offset.
    return base_ != nullptr &&
           reinterpret_cast<std::uintptr_t>(ptr) - reinterpret_cast<std::uintptr_t>(base_) < kReserve;
  }
  std::size_t bin_of(void* ptr) const noexcept {
    return (reinterpret_cast<std::uintptr_t>(ptr) - reinterpret_cast<std::uintptr_t>(base_)) / AreaBytes;
  }

  bool reserve() noexcept {
    base_ = static_cast<char*>(platform::map_pages(kReserve, platform::Swap::kUnreserved));
    if (base_ == nullptr) return false;
    for (std::size_t c = 0; c < NumBins; ++c) static_cast<Area&>(bins_[c]).assign(base_ + c * AreaBytes);
    return true;
  }

  char* base_ = nullptr;
  Bin bins_[NumBins];
};

}  // namespace strata::layers
