// The benchmark's yardstick: a plain bump-pointer region, as small as it can
// be.  Chunks come from mmap (64 KiB, doubling to 4 MiB); clear() keeps them
// and starts bumping from the first again (Hanson's arenas keep freed chunks
// the same way), so a repeated round touches no new pages.  No per-object
// header, no individual free.
#pragma once

#include <strata/platform.hpp>

#include <cstddef>
#include <cstdint>

namespace strata::bench_reap {

class BumpRegion {
 public:
  static constexpr std::size_t kAlign = 16;
  static constexpr std::size_t kFirstChunk = 64 * 1024;
  static constexpr std::size_t kMaxChunk = 4 * 1024 * 1024;

  BumpRegion() = default;
  BumpRegion(const BumpRegion&) = delete;
  BumpRegion& operator=(const BumpRegion&) = delete;
  ~BumpRegion() {
    for (Chunk* c = first_; c != nullptr;) {
      Chunk* next = c->next;
      platform::unmap_pages(c, c->bytes);
      c = next;
    }
  }

  // The fast path: round up, bump, done.
  void* malloc(std::size_t size) {
    const std::size_t rounded = (size + kAlign - 1) & ~(kAlign - 1);
    if (rounded <= static_cast<std::size_t>(limit_ - top_) && rounded >= size) {
      void* p = top_;
      top_ += rounded;
      return p;
    }
    return malloc_slow(rounded < size ? SIZE_MAX : rounded);
  }

  // Start over in the first chunk; every chunk is kept for reuse.
  void clear() {
    current_ = nullptr;
    top_ = limit_ = nullptr;
  }

  std::size_t held() const { return held_; }

 private:
  struct Chunk {
    Chunk* next;
    std::size_t bytes;
  };
  static constexpr std::size_t kHeader = (sizeof(Chunk) + kAlign - 1) & ~(kAlign - 1);

  // Move to the next kept chunk that fits, or map a new one at the end.
  // Out of line, so the fast path needs no stack frame.
  [[gnu::noinline]] void* malloc_slow(std::size_t rounded) {
    if (rounded == SIZE_MAX) return nullptr;
    Chunk* c = current_ == nullptr ? first_ : current_->next;
    while (c != nullptr && c->bytes - kHeader < rounded) c = c->next;
    if (c == nullptr) {
      std::size_t bytes = next_chunk_;
      while (bytes - kHeader < rounded) {
        if (bytes > SIZE_MAX / 2) return nullptr;
        bytes *= 2;
      }
      c = static_cast<Chunk*>(platform::map_pages(bytes));
      if (c == nullptr) return nullptr;
      c->bytes = bytes;
      c->next = nullptr;
      if (last_ == nullptr) {
        first_ = c;
      } else {
        last_->next = c;
      }
      last_ = c;
      held_ += bytes;
      if (next_chunk_ < kMaxChunk) next_chunk_ *= 2;
    }
    current_ = c;
    top_ = reinterpret_cast<char*>(c) + kHeader;
    limit_ = reinterpret_cast<char*>(c) + c->bytes;
    void* p = top_;
    top_ += rounded;
    return p;
  }

  char* top_ = nullptr;
  char* limit_ = nullptr;
  Chunk* current_ = nullptr;
  Chunk* first_ = nullptr;
  Chunk* last_ = nullptr;
  std::size_t next_chunk_ = kFirstChunk;
  std::size_t held_ = 0;
};

}  // namespace strata::bench_reap
