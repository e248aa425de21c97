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

  // The fast path, for size <= kMaxStepSize: bump within the class's current
  // slab, or nullptr when the slab is full or bumping is suspended.
  void* tryBump(std::size_t size) noexcept {
    const std::size_t stride = step_stride_of(size);
    static_assert(sizeof(Bin) == kGranule);  // so the bin of a stride is at byte stride - 16
    Bin& bin = *reinterpret_cast<Bin*>(reinterpret_cast<char*>(bins_) + stride - sizeof(Bin));
    const std::uintptr_t object = bin.cursor;
    if (object + stride > bin.fast_limit) [[unlikely]]  // no overflow: cursor < 2^63, stride < 2^12
      return nullptr;
    if (object == 0) __builtin_unreachable();  // fast_limit != 0 means a slab is current
    bin.cursor = object + stride;
    return reinterpret_cast<void*>(object);
  }

  // Bump, whether suspended or not; a new slab when the current one is full.
  [[gnu::noinline]] void* mallocClass(std::size_t size_class) noexcept {
    Bin& bin = bins_[size_class];
    const std::uintptr_t object = bin.cursor;
    const std::size_t stride = stride_of(size_class);
    if (object + stride <= limits_[size_class]) {
      bin.cursor = object + stride;
      return reinterpret_cast<void*>(object);
    }
    return refill(size_class);
  }

  // While a class is suspended, tryBump fails for it (and the layer above
  // decides what to hand out); resume lets it bump again.
  void suspend(std::size_t size_class) noexcept { bins_[size_class].fast_limit = 0; }
  void resume(std::size_t size_class) noexcept {
    if (!always_suspended_) bins_[size_class].fast_limit = limits_[size_class];
  }
  // Every class suspended for good: each allocation takes the slow path (checked reaps).
  void suspendAll() noexcept {
    always_suspended_ = true;
    for (Bin& bin : bins_) bin.fast_limit = 0;
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
    for (auto& limit : limits_) limit = 0;
    for (auto& n : slabs_) n = 0;
    Super::clear();
  }

  // Objects ever carved from the class's slabs since the last clear().
  std::size_t objectsCarved(std::size_t size_class) const noexcept {
    const std::size_t left = (limits_[size_class] - bins_[size_class].cursor) / stride_of(size_class);
    return slabs_[size_class] * objects_per_slab(size_class) - left;
  }

 private:
  struct Bin {
    std::uintptr_t cursor = 0;      // next object of the current slab
    std::uintptr_t fast_limit = 0;  // end of the current slab; 0 while suspended
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
    limits_[size_class] = reinterpret_cast<std::uintptr_t>(slab) + kSlabBytes;
    if (!always_suspended_) bin.fast_limit = limits_[size_class];  // callers refill only unsuspended classes
    return slab_payload(slab);
  }

  Bin bins_[kSizeClasses];                 // what the fast path reads
  std::uintptr_t limits_[kSizeClasses] = {};  // end of each class's current slab, suspended or not
  std::size_t slabs_[kSizeClasses] = {};
  const void* owner_ = nullptr;
  bool always_suspended_ = false;
};

}  // namespace strata::reap_detail
