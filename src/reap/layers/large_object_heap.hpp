// LargeObjectHeap — objects too big for a slab size class.
//
// A large object starts a span of slabs whose first SlabHeader records its end
// (so usable size and free need no search). Spans of up to kMaxSpanSlabs come
// from the region below; freed ones wait on a free list per span length for
// the next large object of that length. Bigger objects and alignments above a
// slab get their own mapping, unmapped on free and linked so clear() finds them.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "reap/instrument.hpp"
#include "reap/layers/slab_header.hpp"
#include "reap/reap_config.hpp"

namespace strata::reap_detail {

template <class Super>
class LargeObjectHeap : public Super {
 public:
  LargeObjectHeap() = default;
  LargeObjectHeap(const LargeObjectHeap&) = delete;
  LargeObjectHeap& operator=(const LargeObjectHeap&) = delete;
  ~LargeObjectHeap() { unmapAll(); }

  void setOwner(const void* owner) noexcept { owner_ = owner; }

  void* malloc(std::size_t size) noexcept { return alignedMalloc(size, kGranule); }

  // alignment: a power of two. nullptr + ENOMEM when the size cannot be had.
  void* alignedMalloc(std::size_t size, std::size_t alignment) noexcept {
    if (alignment <= kSlabBytes) {
      const std::size_t offset = alignment > kSlabHeaderBytes ? alignment : kSlabHeaderBytes;
      if (size <= kMaxSpanSlabs * kSlabBytes - offset) {
        const std::size_t slabs = (offset + size + kSlabBytes - 1) / kSlabBytes;
        SlabHeader* span = takeSpan(slabs);
        if (span == nullptr) return nullptr;
        return place(span, offset, size);
      }
    }
    return mapObject(size, alignment);
  }

  [[gnu::noinline]] void free(void* ptr) noexcept {
    SlabHeader* h = slab_of(ptr);
    live_bytes_ -= usable(h, ptr);
    --live_objects_;
    if (h->span_slabs != 0) {  // back to the free list of its length
      h->magic = 0;
      h->end = reinterpret_cast<std::uintptr_t>(span_free_[h->span_slabs]);
      span_free_[h->span_slabs] = h;
    } else {
      unlinkMapped(h);
      Super::unmap(h->mapping.base, h->mapping.bytes);
    }
  }

  static std::size_t usable(const SlabHeader* h, const void* ptr) noexcept {
    return h->end - reinterpret_cast<std::uintptr_t>(ptr);
  }
  std::size_t getSize(void* ptr) const noexcept { return usable(slab_of(ptr), ptr); }

  void clear() noexcept {
    unmapAll();
    for (auto& list : span_free_) list = nullptr;
    live_bytes_ = live_objects_ = 0;
    Super::clear();
  }

  void releaseAll() noexcept {
    unmapAll();
    Super::releaseAll();
  }

  std::size_t largeBytesLive() const noexcept { return live_bytes_; }
  std::size_t largeObjectsLive() const noexcept { return live_objects_; }

  // Is ptr inside one of the reap's own-mapping large objects? (checked mode)
  bool ownsMappedMemory(const void* ptr) const noexcept {
    auto p = reinterpret_cast<std::uintptr_t>(ptr);
    for (SlabHeader* h = mapped_; h != nullptr; h = h->mapping.next) {
      auto base = reinterpret_cast<std::uintptr_t>(h->mapping.base);
      if (p >= base && p < base + h->mapping.bytes) return true;
    }
    return false;
  }

 private:
  SlabHeader* takeSpan(std::size_t slabs) noexcept {
    if (SlabHeader* h = span_free_[slabs]) {
      span_free_[slabs] = reinterpret_cast<SlabHeader*>(h->end);
      return h;
    }
    auto* h = static_cast<SlabHeader*>(Super::takeSlabs(slabs));
    if (h == nullptr) return nullptr;
    instrument::expose(h, kSlabHeaderBytes);
    h->span_slabs = slabs;
    return h;
  }

  // The object at offset bytes into span; its usable memory runs to the span's end.
  void* place(SlabHeader* span, std::size_t offset, std::size_t size) noexcept {
    span->stride = 0;
    span->size_class = 0;
    span->magic = kSlabMagic;
    span->owner = owner_;
    const std::size_t bytes = span->span_slabs != 0 ? span->span_slabs * kSlabBytes : 0;
    if (bytes != 0) span->end = reinterpret_cast<std::uintptr_t>(span) + bytes;
    char* object = reinterpret_cast<char*>(span) + offset;
    live_bytes_ += usable(span, object);
    ++live_objects_;
    (void)size;
    return object;
  }

  // A mapping of its own: header slab right below the (aligned) object.
  void* mapObject(std::size_t size, std::size_t alignment) noexcept {
    const bool over_slab = alignment > kSlabBytes;
    const std::size_t offset = alignment > kSlabHeaderBytes ? alignment : kSlabHeaderBytes;
    const std::size_t slack = over_slab ? alignment + kSlabBytes : offset;
    if (slack > SIZE_MAX / 4 || size > SIZE_MAX / 4) {  // beyond any address space
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t bytes = round_to_pages(size + slack);
    void* base = Super::map(bytes);
    if (base == nullptr) return nullptr;
    auto b = reinterpret_cast<std::uintptr_t>(base);
    std::uintptr_t object =
        over_slab ? (b + kSlabBytes + alignment - 1) & ~std::uintptr_t{alignment - 1} : b + offset;
    SlabHeader* h = slab_of(reinterpret_cast<void*>(object));
    instrument::expose(h, kSlabHeaderBytes);
    h->span_slabs = 0;
    h->end = b + bytes;
    h->mapping.base = base;
    h->mapping.bytes = bytes;
    h->mapping.prev = nullptr;
    h->mapping.next = mapped_;
    if (mapped_ != nullptr) mapped_->mapping.prev = h;
    mapped_ = h;
    return place(h, object - reinterpret_cast<std::uintptr_t>(h), size);
  }

  void unlinkMapped(SlabHeader* h) noexcept {
    if (h->mapping.prev != nullptr) h->mapping.prev->mapping.next = h->mapping.next;
    else mapped_ = h->mapping.next;
    if (h->mapping.next != nullptr) h->mapping.next->mapping.prev = h->mapping.prev;
  }

  void unmapAll() noexcept {
    for (SlabHeader* h = mapped_; h != nullptr;) {
      SlabHeader* next = h->mapping.next;
      Super::unmap(h->mapping.base, h->mapping.bytes);
      h = next;
    }
    mapped_ = nullptr;
  }

  SlabHeader* span_free_[kMaxSpanSlabs + 1] = {};  // freed spans by length in slabs
  SlabHeader* mapped_ = nullptr;                   // live objects with their own mapping
  const void* owner_ = nullptr;
  std::size_t live_bytes_ = 0;
  std::size_t live_objects_ = 0;
};

}  // namespace strata::reap_detail
