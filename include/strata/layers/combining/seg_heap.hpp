// SegHeap — general segregated fits: like StrictSegHeap, but when a request's bin
// is empty it searches the larger bins (the paper's §6.2), and only when all of
// them are empty asks the big heap.
//
// Template parameters:
//   NumBins       number of bins
//   SizeClass     size -> the smallest class whose ClassMaxSize covers it
//   ClassMaxSize  class -> its size bound (increasing)
//   LittleHeap    each bin; its malloc must return nullptr when the bin is empty
//                 (e.g. AdaptHeap<DLList, NullHeap>); it is passed the request
//   BigHeap       the parent: gets requests no bin can serve, and supplies getSize
//
// A free object of size s goes to the largest class c with ClassMaxSize(c) <= s,
// so every object in bin c is at least ClassMaxSize(c) bytes and any object in a
// bin >= SizeClass(sz) fits a request of sz bytes (approximate best fit: the first
// object of the first non-empty bin). Sizes whose class is NumBins or more, and
// sizes below ClassMaxSize(0), belong to BigHeap. A bitmap remembers which bins may be non-empty, so the search skips
// empty bins a word at a time. remove(ptr) takes a free object out of its bin
// (when LittleHeap can), for CoalesceHeap.
//
// flush() and the destructor hand binned objects back to BigHeap; clear() (when
// BigHeap has one) forgets them and clears BigHeap.
//
// Limits: objects in a bin are not sorted by size; little and big heaps must share
// one object representation (getSize comes from BigHeap). free(nullptr) is a no-op.
#pragma once
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t NumBins, std::size_t (*SizeClass)(std::size_t),
          std::size_t (*ClassMaxSize)(std::size_t), Heap LittleHeap, SizedHeap BigHeap>
class SegHeap : public BigHeap {
  static_assert(NumBins > 0, "SegHeap needs at least one bin");

 public:
  SegHeap() = default;
  SegHeap(const SegHeap&) = delete;
  SegHeap& operator=(const SegHeap&) = delete;
  ~SegHeap() { flush(); }

  void* malloc(std::size_t size) {
    const std::size_t first = SizeClass(size);
    for (std::size_t bin = next_marked(first); bin < NumBins; bin = next_marked(bin + 1)) {
      if (void* ptr = little_[bin].malloc(size)) return ptr;
      unmark(bin);  // the bin is empty
    }
    return BigHeap::malloc(size);
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    const std::size_t bin = bin_of(BigHeap::getSize(ptr));
    if (bin >= NumBins) {
      BigHeap::free(ptr);
      return;
    }
    little_[bin].free(ptr);
    mark(bin);
  }

  // Take the free object ptr back out of its bin.
  void remove(void* ptr)
    requires requires(LittleHeap little, void* p) { little.remove(p); }
  {
    little_[bin_of(BigHeap::getSize(ptr))].remove(ptr);
  }

  // Hand every binned object back to BigHeap, where it came from (bins only
  // ever hold objects that were freed here).
  void flush() {
    for (std::size_t bin = 0; bin < NumBins; ++bin) {
      while (void* ptr = little_[bin].malloc(ClassMaxSize(bin))) BigHeap::free(ptr);
      unmark(bin);
    }
  }

  // Release everything: empty the bins (their objects die with BigHeap's memory).
  void clear()
    requires ClearableHeap<BigHeap>
  {
    for (std::size_t bin = 0; bin < NumBins; ++bin) {
      while (little_[bin].malloc(ClassMaxSize(bin)) != nullptr) {
      }
      unmark(bin);
    }
    BigHeap::clear();
  }

  // Objects here are not Super's objects as Super knows them: hide Super's
  // object-level extras rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

  LittleHeap& bin(std::size_t size_class) noexcept { return little_[size_class]; }

 private:
  static constexpr std::size_t kWordBits = 64;
  static constexpr std::size_t kWords = (NumBins + kWordBits - 1) / kWordBits;

  // The bin a free object of `size` bytes belongs to; NumBins (big) for objects
  // too big for every bin, and for objects smaller than the smallest class, which
  // no bin may hold.
  static std::size_t bin_of(std::size_t size) noexcept {
    std::size_t bin = SizeClass(size);
    if (bin >= NumBins) return NumBins;
    while (ClassMaxSize(bin) > size) {
      if (bin == 0) return NumBins;
      --bin;
    }
    return bin;
  }

  void mark(std::size_t bin) noexcept { bitmap_[bin / kWordBits] |= std::uint64_t{1} << (bin % kWordBits); }
  void unmark(std::size_t bin) noexcept { bitmap_[bin / kWordBits] &= ~(std::uint64_t{1} << (bin % kWordBits)); }

  // The first bin >= from that may hold objects, or NumBins.
  std::size_t next_marked(std::size_t from) const noexcept {
    if (from >= NumBins) return NumBins;
    std::size_t word = from / kWordBits;
    std::uint64_t bits = bitmap_[word] & (~std::uint64_t{0} << (from % kWordBits));
    while (bits == 0) {
      if (++word == kWords) return NumBins;
      bits = bitmap_[word];
    }
    return word * kWordBits + static_cast<std::size_t>(std::countr_zero(bits));
  }

  std::array<std::uint64_t, kWords> bitmap_{};
  LittleHeap little_[NumBins];
};

}  // namespace strata::layers
