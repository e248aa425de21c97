// XallocHeap — the stack-like allocator of 197.parser (the paper's §5.1): one
// region of RegionSize bytes from Super (taken at the first malloc); malloc
// always bumps after the last block still in use; free marks a block free and,
// when it is the last block, moves the bump pointer back past it and every
// freed block before it. clear() resets the pointer to the start of the region
// (everything freed at once); the destructor returns the region to Super.
// Each block has a 16-byte header (previous block, size, free bit), so objects
// are kAlignment-aligned given Super's region is; getSize is the usable size.
// Misuse is caught cheaply and aborts with the address on stderr: free of a
// pointer outside the region's used part, and free of a block already free.
// Limits: memory is reused only when the freed blocks are the most recent
// ones — a long-lived last block pins everything before it; a full region
// means nullptr (no second region); not thread safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "strata/layers/heap.hpp"

namespace strata::layers {

template <std::size_t RegionSize, Heap Super>
class XallocHeap : public Super {
  struct alignas(kAlignment) Header {
    Header* prev;             // the block before this one, nullptr for the first
    std::size_t size_and_free;  // usable bytes (a multiple of kAlignment) | kFreeBit
  };
  static_assert(sizeof(Header) == kAlignment);
  static_assert(RegionSize % kAlignment == 0 && RegionSize > sizeof(Header),
                "XallocHeap: RegionSize must be a multiple of kAlignment larger than a block header");
  static constexpr std::size_t kFreeBit = 1;

 public:
  using Super::Super;
  XallocHeap() = default;
  XallocHeap(const XallocHeap&) = delete;
  XallocHeap& operator=(const XallocHeap&) = delete;
  ~XallocHeap() {
    if (region_) Super::free(region_);
  }

  void* malloc(std::size_t size) noexcept {
    if (!region_ && !take_region()) return nullptr;
    if (size > RegionSize) return nullptr;
    const std::size_t rounded = size == 0 ? kAlignment : align_up(size, kAlignment);
    if (sizeof(Header) + rounded > static_cast<std::size_t>(end_ - top_)) return nullptr;
    auto* header = reinterpret_cast<Header*>(top_);
    header->prev = last_;
    header->size_and_free = rounded;
    top_ += sizeof(Header) + rounded;
    last_ = header;
    return header + 1;
  }

  void free(void* ptr) noexcept {
    if (!ptr) return;
    char* p = static_cast<char*>(ptr);
    if (!region_ || p < region_ + sizeof(Header) || p >= top_ ||
        (reinterpret_cast<std::uintptr_t>(p) % kAlignment) != 0)
      fail("free of pointer outside this heap's blocks", ptr);
    Header* header = reinterpret_cast<Header*>(p) - 1;
    if (header->size_and_free & kFreeBit) fail("double free of", ptr);
    header->size_and_free |= kFreeBit;
    if (header != last_) return;
    // The last block went: retreat past it and every freed block before it.
    while (last_ && (last_->size_and_free & kFreeBit)) {
      top_ = reinterpret_cast<char*>(last_);
      last_ = last_->prev;
    }
  }

  std::size_t getSize(void* ptr) const noexcept {
    return (static_cast<Header*>(ptr) - 1)->size_and_free & ~kFreeBit;
  }

  // The parent's other whole-object operations do not understand this layer's
  // objects: hide them rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;

  // Everything is free again; the region is kept for reuse.
  void clear() noexcept {
    top_ = region_;
    last_ = nullptr;
  }

  // Bytes between the region start and the bump pointer (headers included).
  std::size_t bytesInUse() const noexcept { return static_cast<std::size_t>(top_ - region_); }

 private:
  bool take_region() noexcept {
    region_ = static_cast<char*>(Super::malloc(RegionSize));
    if (!region_) return false;
    top_ = region_;
    end_ = region_ + RegionSize;
    return true;
  }

  [[noreturn]] static void fail(const char* what, const void* ptr) noexcept {
    std::fprintf(stderr, "strata XallocHeap: %s %p\n", what, ptr);
    std::fflush(stderr);
    std::abort();
  }

  char* region_ = nullptr;
  char* top_ = nullptr;     // the bump pointer: first byte after the last block
  char* end_ = nullptr;
  Header* last_ = nullptr;  // the block just below top_, always in use; nullptr when none
};

}  // namespace strata::layers
