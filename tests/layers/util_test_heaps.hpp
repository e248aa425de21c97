// Small parent heaps for the utility/special layer tests.
#pragma once
#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace strata::test {

// A parent that fails on demand and counts its calls. Memory comes from the
// C library but is handed out dirty (0xEE), so layers that promise zeroed or
// patterned memory are really tested. fail_after(n): the next n mallocs
// succeed, then every malloc fails until never_fail().
class FailingHeap {
 public:
  static constexpr unsigned char kDirt = 0xEE;

  void* malloc(std::size_t size) noexcept {
    if (budget_ == 0) {
      ++failures;
      return nullptr;
    }
    if (budget_ > 0) --budget_;
    void* p = std::malloc(size);
    if (!p) {
      ++failures;
      return nullptr;
    }
    std::memset(p, kDirt, size);
    ++mallocs;
    return p;
  }
  void free(void* ptr) noexcept {
    if (!ptr) return;
    ++frees;
    std::free(ptr);
  }
  std::size_t getSize(void* ptr) noexcept { return ::malloc_usable_size(ptr); }

  void fail_after(long successes) noexcept { budget_ = successes; }
  void never_fail() noexcept { budget_ = -1; }
  std::size_t live() const noexcept { return mallocs - frees; }

  std::size_t mallocs = 0;
  std::size_t frees = 0;
  std::size_t failures = 0;

 private:
  long budget_ = -1;  // -1: unlimited
};

// Like FailingHeap but with atomic counters and no failure switch, for
// thread tests where the parent is itself behind a lock or shared.
class AtomicCountingHeap {
 public:
  void* malloc(std::size_t size) noexcept {
    void* p = std::malloc(size);
    if (p) mallocs.fetch_add(1, std::memory_order_relaxed);
    return p;
  }
  void free(void* ptr) noexcept {
    if (!ptr) return;
    frees.fetch_add(1, std::memory_order_relaxed);
    std::free(ptr);
  }
  std::size_t getSize(void* ptr) noexcept { return ::malloc_usable_size(ptr); }

  std::atomic<std::size_t> mallocs{0};
  std::atomic<std::size_t> frees{0};
};

// A parent that never returns memory to the system before it dies and hands
// the most recently freed block back first (LIFO reuse of equal-or-smaller
// requests), so tests can read memory a layer has freed and see addresses
// come back. Blocks are all kBlock bytes.
class HoardingHeap {
 public:
  static constexpr std::size_t kBlock = 4096;

  ~HoardingHeap() {
    for (void* p : all_) std::free(p);
  }
  void* malloc(std::size_t size) noexcept {
    if (size > kBlock) return nullptr;
    if (!free_.empty()) {
      void* p = free_.back();
      free_.pop_back();
      return p;
    }
    void* p = std::aligned_alloc(16, kBlock);
    if (p) all_.push_back(p);
    return p;
  }
  void free(void* ptr) noexcept {
    if (ptr) free_.push_back(ptr);
  }
  std::size_t getSize(void*) noexcept { return kBlock; }

 private:
  std::vector<void*> all_;
  std::vector<void*> free_;
};

}  // namespace strata::test
