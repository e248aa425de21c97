// ChunkSource — the top of a region chain: whole mappings from the platform
// layer (mmap), through a small process-wide cache of recently given-back
// mappings.
//
// Fresh mappings are hidden from ASan/Valgrind until a layer below hands their
// bytes out; before a mapping goes back, its poisoning is forgotten. Counts the
// bytes and mappings it holds (statistics). Not a malloc/free heap: its
// interface is map(bytes) / unmap(p, bytes), what RegionChunkHeap needs.
// Limits: sizes are whole pages; the cache keeps at most kCachedMappings
// mappings of up to kMaxCachedMapping bytes (process-wide, spin-locked), and
// each thread a few larger ones for a second (ThreadMappingCache).
#pragma once
#include <cerrno>
#include <chrono>
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

// Larger mappings given back (a dropped reap's chunks, which double up to
// 64 MiB) are kept by the thread that gave them back, for its next reap: a
// program that makes a new arena per task otherwise faults every page of it
// afresh each time (the kernel zeroes each one), where a malloc-based arena
// reuses its heap's memory. Bounded twice: at most kThreadCachedBytes and
// kThreadCachedMappings, oldest out first; and a mapping not taken again
// within kThreadCacheSeconds goes back at the cache's next use (the clock:
// long enough for a program that makes a big arena every few seconds). A
// thread's cache goes back when the thread ends.
// Not transparent huge pages: they made a new arena's faults cheap, but a
// fault that has to compact memory first stalled a round for 2.5x its time
// (docs/benchmarks-reap.md).
inline constexpr std::size_t kThreadCachedBytes = std::size_t{256} << 20;
inline constexpr std::size_t kThreadCachedMappings = 24;
inline constexpr std::chrono::steady_clock::duration kThreadCacheSeconds = std::chrono::seconds(30);

class ThreadMappingCache {
 public:
  // keep: the clock (kThreadCacheSeconds; tests use a shorter one).
  constexpr explicit ThreadMappingCache(std::chrono::steady_clock::duration keep = kThreadCacheSeconds) noexcept
      : keep_(keep) {}

  // A cached mapping of exactly bytes, or nullptr.
  void* take(std::size_t bytes) noexcept {
    expire(std::chrono::steady_clock::now());
    for (std::size_t i = count_; i-- > 0;)  // the newest first: its pages are the warmest
      if (slots_[i].bytes == bytes) {
        void* base = slots_[i].base;
        removeAt(i);
        return base;
      }
    return nullptr;
  }
  // true: kept (the caller must not unmap it).
  bool give(void* base, std::size_t bytes) noexcept {
    if (closed_ || bytes > kThreadCachedBytes) return false;
    const auto now = std::chrono::steady_clock::now();
    expire(now);
    while (count_ == kThreadCachedMappings || held_ + bytes > kThreadCachedBytes) unmapAt(0);  // oldest first
    slots_[count_++] = Slot{base, bytes, now};
    held_ += bytes;
    return true;
  }
  // Gives everything back; later gives unmap at once (the thread is ending).
  void close() noexcept {
    while (count_ != 0) unmapAt(0);
    closed_ = true;
  }
  std::size_t heldBytes() const noexcept { return held_; }
  std::size_t heldMappings() const noexcept { return count_; }

  // This thread's cache. Trivially destructible storage, so that a reap
  // destroyed during thread exit still finds it; a guard closes it then.
  static ThreadMappingCache& instance() noexcept {
    thread_local constinit ThreadMappingCache cache;
    struct Closer {
      ~Closer() { cache.close(); }
    };
    thread_local Closer closer;
    (void)closer;
    return cache;
  }

 private:
  struct Slot {
    void* base = nullptr;
    std::size_t bytes = 0;
    std::chrono::steady_clock::time_point given{};
  };
  void expire(std::chrono::steady_clock::time_point now) noexcept {
    while (count_ != 0 && now - slots_[0].given > keep_) unmapAt(0);
  }
  void removeAt(std::size_t i) noexcept {
    held_ -= slots_[i].bytes;
    for (std::size_t j = i + 1; j < count_; ++j) slots_[j - 1] = slots_[j];
    --count_;
  }
  void unmapAt(std::size_t i) noexcept {
    void* base = slots_[i].base;
    const std::size_t bytes = slots_[i].bytes;
    removeAt(i);
    platform::unmap_pages(base, bytes);
  }

  std::chrono::steady_clock::duration keep_;
  Slot slots_[kThreadCachedMappings] = {};  // oldest first
  std::size_t count_ = 0;
  std::size_t held_ = 0;
  bool closed_ = false;
};

// Fresh mappings, from a cache or the kernel, hidden until handed out.
inline void* map_hidden(std::size_t bytes) noexcept {
  void* p =
      bytes <= kMaxCachedMapping ? MappingCache::instance().take(bytes) : ThreadMappingCache::instance().take(bytes);
  if (p == nullptr) p = platform::map_pages(bytes);
  if (p != nullptr) instrument::hide(p, bytes);
  return p;
}

inline void unmap_or_cache(void* p, std::size_t bytes) noexcept {
  instrument::forget(p, bytes);
  const bool kept = bytes <= kMaxCachedMapping ? MappingCache::instance().give(p, bytes)
                                               : ThreadMappingCache::instance().give(p, bytes);
  if (!kept) platform::unmap_pages(p, bytes);
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
