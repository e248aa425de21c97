// SizeClassSlabHeap — a size-segregated region: header-free small objects.
//
// Every small request is rounded to its size class (16-byte steps up to
// kMaxStepSize, then three classes that pack 3, 2 and 1 objects per slab). Each
// class bump-allocates through its own slab, whose SlabHeader records the
// class: an object needs no header, so a 16-byte object costs 16 bytes, as in
// a plain region. free() of a small object does nothing here (region
// semantics); ClearOptimizedHeap above keeps the freed objects for reuse.
// Larger requests go to Super (LargeObjectHeap).
#pragma once
#include <cstddef>
#include <cstdint>

#include "reap/instrument.hpp"
#include "reap/layers/slab_header.hpp"
#include "reap/reap_config.hpp"

namespace strata::reap_detail {

// Size class of a small request (size <= kMaxSmallSize); size 0 is class 0.
inline constexpr std::size_t size_class_of(std::size_t size) noexcept {
  if (size <= kMaxStepSize) return (size - (size != 0)) / kGranule;
  if (size <= kPackedSizes[0]) return kStepClasses;
  if (size <= kPackedSizes[1]) return kStepClasses + 1;
  return kStepClasses + 2;
}

// The stride of a request of at most kMaxStepSize bytes: size rounded up to
// 16 bytes, at least 16 (so malloc(0) objects are distinct).
inline constexpr std::size_t step_stride_of(std::size_t size) noexcept {
  return ((size - (size != 0)) | (kGranule - 1)) + 1;
}

inline constexpr std::size_t stride_of(std::size_t size_class) noexcept {
  return size_class < kStepClasses ? (size_class + 1) * kGranule : kPackedSizes[size_class - kStepClasses];
}

inline constexpr std::size_t objects_per_slab(std::size_t size_class) noexcept {
  return kSlabPayload / stride_of(size_class);
}

static_assert(size_class_of(0) == 0 && size_class_of(16) == 0 && size_class_of(17) == 1);
static_assert(size_class_of(kMaxStepSize) == kStepClasses - 1);
static_assert(step_stride_of(0) == 16 && step_stride_of(16) == 16 && step_stride_of(17) == 32);
static_assert(step_stride_of(kMaxStepSize) == kMaxStepSize);
static_assert(size_class_of(kMaxSmallSize) == kSizeClasses - 1);
static_assert(stride_of(size_class_of(kMaxSmallSize)) == kMaxSmallSize);

template <class Super>
class SizeClassSlabHeap : public Super {
 public:
  void setOwner(const void* owner) noexcept {
    owner_ = owner;
    Super::setOwner(owner);
  }

  void* malloc(std::size_t size) noexcept {
    if (size <= kMaxSmallSize) return mallocClass(size_class_of(size));
    return Super::malloc(size);
  }

  // The fast path: bump within the class's current slab.
  void* mallocClass(std::size_t size_class) noexcept { return bump(size_class, stride_of(size_class)); }

  // stride: stride_of(size_class), which the caller may know more cheaply.
  void* bump(std::size_t size_class, std::size_t stride) noexcept {
    Bin& bin = bins_[size_class];
    const std::uintptr_t object = bin.cursor;
    if (object + stride <= bin.limit) [[likely]] {  // no overflow: cursor < 2^63, stride < 2^12
      bin.cursor = object + stride;
      return reinterpret_cast<void*>(object);
    }
    return refill(size_class);
  }

  void free(void* ptr) noexcept {
    if (slab_of(ptr)->stride == 0) Super::free(ptr);  // small objects wait for clear()
  }

  std::size_t getSize(void* ptr) const noexcept {
    const SlabHeader* h = slab_of(ptr);
    return h->stride != 0 ? h->stride : Super::usable(h, ptr);
  }

  void clear() noexcept {
    for (Bin& bin : bins_) bin = Bin{};
    for (auto& n : slabs_) n = 0;
    Super::clear();
  }

  // Objects ever carved from the class's slabs since the last clear().
  std::size_t objectsCarved(std::size_t size_class) const noexcept {
    const Bin& bin = bins_[size_class];
    return slabs_[size_class] * objects_per_slab(size_class) - (bin.limit - bin.cursor) / stride_of(size_class);
  }

 private:
  struct Bin {
    std::uintptr_t cursor = 0;  // next object of the current slab
    std::uintptr_t limit = 0;   // end of the current slab
  };

  [[gnu::noinline]] void* refill(std::size_t size_class) noexcept {
    auto* slab = static_cast<SlabHeader*>(Super::takeSlabs(1));
    if (slab == nullptr) return nullptr;
    instrument::expose(slab, kSlabHeaderBytes / 2);  // the chunk link after it is exposed already
    slab->stride = static_cast<std::uint32_t>(stride_of(size_class));
    slab->size_class = static_cast<std::uint16_t>(size_class);
    slab->magic = kSlabMagic;
    slab->owner = owner_;
    ++slabs_[size_class];
    Bin& bin = bins_[size_class];
    bin.cursor = reinterpret_cast<std::uintptr_t>(slab_payload(slab)) + slab->stride;
    bin.limit = reinterpret_cast<std::uintptr_t>(slab) + kSlabBytes;
    return slab_payload(slab);
  }

  Bin bins_[kSizeClasses];
  std::size_t slabs_[kSizeClasses] = {};
  const void* owner_ = nullptr;
};

}  // namespace strata::reap_detail
