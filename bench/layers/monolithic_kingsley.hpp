// A hand-written, monolithic power-of-two allocator with exactly KingsleyHeap's
// policy (see include/strata/layers/general/kingsley_heap.hpp): classes of
// 16 << c bytes, a 16-byte header whose last word holds the class size, one LIFO
// free list per class threaded through the freed blocks, fresh blocks bumped from
// one reserved, incrementally committed area behind a spin lock (the "break"),
// nothing ever returned, mmap beyond the largest class. Written the way one would
// write it by hand — one class, no layers — as the yardstick for the zero-cost claim.
#pragma once
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "strata/platform.hpp"

namespace strata::bench {

class MonolithicKingsley {
 public:
  static constexpr std::size_t kHeader = 16;
  static constexpr std::size_t kClasses = 27;               // 16 B .. 1 GiB
  static constexpr std::size_t kReserve = std::size_t{16} << 30;
  static constexpr std::size_t kCommitStep = std::size_t{64} << 10;

  void* malloc(std::size_t size) {
    const std::size_t c = size <= 16 ? 0 : static_cast<std::size_t>(std::bit_width(size - 1)) - 4;
    if (c >= kClasses) return malloc_huge(size);
    char* block;
    if (FreeBlock* head = free_[c]) {
      free_[c] = head->next;
      block = reinterpret_cast<char*>(head);
    } else {
      block = static_cast<char*>(bump(kHeader + (std::size_t{16} << c)));
      if (block == nullptr) return nullptr;
    }
    size_word(block + kHeader) = std::size_t{16} << c;
    return block + kHeader;
  }

  void free(void* ptr) {
    if (ptr == nullptr) return;
    const std::size_t size = size_word(ptr);
    char* block = static_cast<char*>(ptr) - kHeader;
    const std::size_t c = size <= 16 ? 0 : static_cast<std::size_t>(std::bit_width(size - 1)) - 4;
    if (c >= kClasses) {
      platform::unmap_pages(block, size + kHeader);
      return;
    }
    auto* freed = reinterpret_cast<FreeBlock*>(block);
    freed->next = free_[c];
    free_[c] = freed;
  }

  std::size_t getSize(void* ptr) { return size_word(ptr); }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };

  static std::size_t& size_word(void* object) {
    return *reinterpret_cast<std::size_t*>(static_cast<char*>(object) - sizeof(std::size_t));
  }

  void* bump(std::size_t bytes) {
    std::lock_guard<platform::SpinLock> guard(lock_);
    if (base_ == nullptr) {
      base_ = brk_ = committed_ = static_cast<char*>(platform::reserve_pages(kReserve));
      if (base_ == nullptr) return nullptr;
      limit_ = base_ + kReserve;
    }
    if (bytes > static_cast<std::size_t>(limit_ - brk_)) {
      errno = ENOMEM;
      return nullptr;
    }
    char* block = brk_;
    if (block + bytes > committed_) {
      std::size_t grow = (static_cast<std::size_t>(block + bytes - committed_) + kCommitStep - 1) & ~(kCommitStep - 1);
      if (grow > static_cast<std::size_t>(limit_ - committed_)) grow = static_cast<std::size_t>(limit_ - committed_);
      if (!platform::commit_pages(committed_, grow)) return nullptr;
      committed_ += grow;
    }
    brk_ = block + bytes;
    return block;
  }

  void* malloc_huge(std::size_t size) {
    if (size > SIZE_MAX - 2 * kHeader - platform::page_size()) {
      errno = ENOMEM;
      return nullptr;
    }
    char* block = static_cast<char*>(platform::map_pages(size + kHeader));
    if (block == nullptr) return nullptr;
    size_word(block + kHeader) = size;
    return block + kHeader;
  }

  FreeBlock* free_[kClasses] = {};
  platform::SpinLock lock_;
  char* base_ = nullptr;
  char* brk_ = nullptr;
  char* committed_ = nullptr;
  char* limit_ = nullptr;
};

}  // namespace strata::bench
