// RegionChunkHeap — the region layer: slabs bumped out of linked chunks.
//
// Chunks are at least kFirstChunkBytes and double with each new one (up to
// kMaxChunkBytes), so a reap of n bytes makes O(log n) system calls. The first
// slab header of each chunk carries the link to the next chunk. clear() keeps
// the chunks the last round used (and the home chunk, inside the reap's own
// mapping) and bumps through them again in the same order; chunks a round did
// not need are returned at the next clear(). A reap filled and cleared over and
// over thus touches the same memory every round — no system call, no page
// fault, warm caches, like a plain region — and a reap whose rounds shrink
// gives the difference back one round later.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "reap/instrument.hpp"
#include "reap/layers/slab_header.hpp"
#include "reap/reap_config.hpp"

namespace strata::reap_detail {

template <class Super>
class RegionChunkHeap : public Super {
 public:
  RegionChunkHeap() = default;
  RegionChunkHeap(const RegionChunkHeap&) = delete;
  RegionChunkHeap& operator=(const RegionChunkHeap&) = delete;
  ~RegionChunkHeap() { releaseAll(); }

  // The home chunk belongs to the reap's own mapping: used first, never unmapped here.
  void adoptHome(void* base, std::size_t bytes) noexcept {
    home_ = link(base, bytes);
    push(spare_, home_);
  }

  // n contiguous slabs (n <= kMaxSpanSlabs); nullptr + ENOMEM when out of memory.
  void* takeSlabs(std::size_t n) noexcept {
    const std::size_t bytes = n * kSlabBytes;
    if (limit_ - cursor_ < bytes && !nextChunk(bytes)) return nullptr;
    void* slabs = reinterpret_cast<void*>(cursor_);
    cursor_ += bytes;
    return slabs;
  }

  // Forget every slab. The chunks the last round bumped into are kept, to be
  // bumped through again in the same order; those it never needed go back.
  void clear() noexcept {
    SlabHeader* keep = nullptr;  // oldest first
    bool home_kept = false;
    for (SlabHeader* c = used_; c != nullptr;) {  // newest first
      SlabHeader* next = c->chunk.next;
      hidePayload(c);
      push(keep, c);
      home_kept |= c == home_;
      c = next;
    }
    for (SlabHeader* c = spare_; c != nullptr;) {
      SlabHeader* next = c->chunk.next;
      if (c != home_) Super::unmap(c, c->chunk.bytes);
      c = next;
    }
    if (home_ != nullptr && !home_kept) {
      hidePayload(home_);
      push(keep, home_);
    }
    spare_ = keep;
    used_ = nullptr;
    cursor_ = limit_ = 0;
  }

  // Unmap every chunk but the home one (the reap is being destroyed).
  void releaseAll() noexcept {
    releaseExcept(nullptr);
    used_ = spare_ = nullptr;
    cursor_ = limit_ = 0;
  }

  std::size_t chunks() const noexcept {
    std::size_t n = 0;
    for (SlabHeader* list : {used_, spare_})
      for (SlabHeader* c = list; c != nullptr; c = c->chunk.next) ++n;
    return n;
  }

  // Does ptr lie in one of this reap's chunks? (checked mode; O(chunks))
  bool ownsChunkMemory(const void* ptr) const noexcept {
    auto p = reinterpret_cast<std::uintptr_t>(ptr);
    for (SlabHeader* list : {used_, spare_})
      for (SlabHeader* c = list; c != nullptr; c = c->chunk.next) {
        auto base = reinterpret_cast<std::uintptr_t>(c);
        if (p >= base && p < base + c->chunk.bytes) return true;
      }
    return false;
  }

 private:
  static SlabHeader* link(void* base, std::size_t bytes) noexcept {
    auto* c = static_cast<SlabHeader*>(base);
    instrument::expose(c, kSlabHeaderBytes);  // chunk headers stay readable for good
    c->chunk.bytes = bytes;
    c->chunk.next = nullptr;
    return c;
  }
  static void push(SlabHeader*& list, SlabHeader* c) noexcept {
    c->chunk.next = list;
    list = c;
  }
  static void hidePayload(SlabHeader* c) noexcept {
    instrument::hide(reinterpret_cast<char*>(c) + kSlabHeaderBytes, c->chunk.bytes - kSlabHeaderBytes);
  }

  bool nextChunk(std::size_t bytes) noexcept {
    while (spare_ != nullptr) {  // chunks kept by clear() come first
      SlabHeader* c = spare_;
      spare_ = c->chunk.next;
      use(c);
      if (limit_ - cursor_ >= bytes) return true;
    }
    const std::size_t size = std::max(next_bytes_, round_to_pages(bytes));
    void* base = Super::map(size);
    if (base == nullptr) {
      errno = ENOMEM;
      return false;
    }
    next_bytes_ = std::min(next_bytes_ * 2, kMaxChunkBytes);
    use(link(base, size));
    return true;
  }

  void use(SlabHeader* c) noexcept {
    push(used_, c);
    cursor_ = reinterpret_cast<std::uintptr_t>(c);
    limit_ = cursor_ + c->chunk.bytes;
  }

  void releaseExcept(SlabHeader* keep) noexcept {
    for (SlabHeader* list : {used_, spare_}) {
      for (SlabHeader* c = list; c != nullptr;) {
        SlabHeader* next = c->chunk.next;
        if (c != home_ && c != keep) Super::unmap(c, c->chunk.bytes);
        c = next;
      }
    }
  }

  SlabHeader* used_ = nullptr;   // chunks bumped through, newest first
  SlabHeader* spare_ = nullptr;  // chunks kept by clear(), not bumped yet
  SlabHeader* home_ = nullptr;
  std::uintptr_t cursor_ = 0;  // next free slab of the newest chunk
  std::uintptr_t limit_ = 0;
  std::size_t next_bytes_ = 2 * kFirstChunkBytes;  // the home chunk was the first
};

}  // namespace strata::reap_detail
