// ChunkSource — the top of a region chain: whole mappings from the platform
// layer (mmap), through a small process-wide cache of recently given-back
// mappings.
//
// Fresh mappings are hidden from ASan/Valgrind until a layer below hands their
// bytes out; before a mapping goes back, its poisoning is forgotten. Counts the
// bytes and mappings it holds (statistics). Not a malloc/free heap: its
// interface is map(bytes) / unmap(p, bytes), what RegionChunkHeap needs.
// Limits: sizes are whole pages; the cache keeps at most kCachedMappings
// mappings of up to kMaxCachedMapping bytes (process-wide, spin-locked).
#pragma once
#include <cerrno>
#include <cstddef>
#include <mutex>

#include "strata/layers/region/detail/instrument.hpp"
#include "strata/platform.hpp"

namespace strata::layers {

// Mappings of up to kMaxCachedMapping bytes that are given back are kept, at
// most kCachedMappings of them process-wide, for the next user (a reap per
// request then costs no system call).
inline constexpr std::size_t kMaxCachedMapping = 256 * 1024;
inline constexpr std::size_t kCachedMappings = 32;

// Small mappings given back by reaps, kept for the next reap: programs that
// create and destroy a reap per request would otherwise pay mmap, munmap and
// page faults every time. Process-wide, lock-protected, bounded.
class MappingCache {
 public:
  // A cached mapping of exactly bytes, or nullptr.
  void* take(std::size_t bytes) noexcept {
    if (bytes > kMaxCachedMapping) return nullptr;
    std::lock_guard guard(lock_);
    for (Slot& slot : slots_)
      if (slot.bytes == bytes) {
        slot.bytes = 0;
        return slot.base;
      }
    return nullptr;
  }
  // true: kept (the caller must not unmap it).
  bool give(void* base, std::size_t bytes) noexcept {
    if (bytes > kMaxCachedMapping) return false;
    std::lock_guard guard(lock_);
    for (Slot& slot : slots_)
      if (slot.bytes == 0) {
        slot = Slot{base, bytes};
        return true;
      }
    return false;
  }

  static MappingCache& instance() noexcept {
    static MappingCache cache;
    return cache;
  }

 private:
  struct Slot {
    void* base = nullptr;
    std::size_t bytes = 0;  // 0: empty
  };
  platform::SpinLock lock_;
  Slot slots_[kCachedMappings];
};

// Fresh mappings, from the cache or the kernel, hidden until handed out.
inline void* map_hidden(std::size_t bytes) noexcept {
  void* p = MappingCache::instance().take(bytes);
  if (p == nullptr) p = platform::map_pages(bytes);
  if (p != nullptr) instrument::hide(p, bytes);
  return p;
}

inline void unmap_or_cache(void* p, std::size_t bytes) noexcept {
  instrument::forget(p, bytes);
  if (!MappingCache::instance().give(p, bytes)) platform::unmap_pages(p, bytes);
}

class ChunkSource {
 public:
  // bytes is a multiple of the page size. nullptr + ENOMEM when the kernel says no.
  void* map(std::size_t bytes) noexcept {
    void* p = map_hidden(bytes);
    if (p == nullptr) return nullptr;
    account(bytes);
    return p;
  }

  void unmap(void* p, std::size_t bytes) noexcept {
    unmap_or_cache(p, bytes);
    bytes_held_ -= bytes;
    --mappings_;
  }

  // Mappings made elsewhere (the reap's own home mapping) that count as held.
  void account(std::size_t bytes) noexcept {
    bytes_held_ += bytes;
    ++mappings_;
  }

  std::size_t bytesHeld() const noexcept { return bytes_held_; }
  std::size_t mappings() const noexcept { return mappings_; }

 private:
  std::size_t bytes_held_ = 0;
  std::size_t mappings_ = 0;
};

// Round up to whole pages of the system (mmap's unit).
inline std::size_t round_to_pages(std::size_t bytes) noexcept {
  const std::size_t page = platform::page_size();
  return (bytes + page - 1) & ~(page - 1);
}

}  // namespace strata::layers
