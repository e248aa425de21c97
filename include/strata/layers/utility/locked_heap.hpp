// LockedHeap — code-locks a heap for thread safety: every call takes the lock,
// runs the parent's operation and releases the lock. Each optional operation
// the parent has (getSize, realloc, calloc, memalign,
// aligned_alloc, posix_memalign, clear) is wrapped too, so
// none leaks through unlocked. Lock is any BasicLockable: platform::SpinLock
// (SpinLockedHeap, for short critical sections) or std::mutex (MutexLockedHeap).
// Limits: one lock serialises every thread (the point of ThreadHeap and
// PHOThreadHeap is to avoid that); constructing and destroying are not locked.
#pragma once
#include <cstddef>
#include <mutex>

#include "strata/layers/heap.hpp"
#include "strata/layers/utility/detail/capabilities.hpp"
#include "strata/platform.hpp"

namespace strata::layers {

template <class Lock, Heap Super>
class LockedHeap : public Super {
 public:
  using Super::Super;

  void* malloc(std::size_t size) noexcept {
    std::lock_guard guard(lock_);
    return Super::malloc(size);
  }

  void free(void* ptr) noexcept {
    std::lock_guard guard(lock_);
    Super::free(ptr);
  }

  std::size_t getSize(void* ptr) noexcept
    requires SizedHeap<Super>
  {
    std::lock_guard guard(lock_);
    return Super::getSize(ptr);
  }

  void* realloc(void* ptr, std::size_t size) noexcept
    requires ReallocatingHeap<Super>
  {
    std::lock_guard guard(lock_);
    return Super::realloc(ptr, size);
  }

  void* calloc(std::size_t count, std::size_t size) noexcept
    requires CallocatingHeap<Super>
  {
    std::lock_guard guard(lock_);
    return Super::calloc(count, size);
  }

  void* memalign(std::size_t alignment, std::size_t size) noexcept
    requires AligningHeap<Super>
  {
    std::lock_guard guard(lock_);
    return Super::memalign(alignment, size);
  }

  void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept
    requires requires(Super s, std::size_t a, std::size_t n) { s.aligned_alloc(a, n); }
  {
    std::lock_guard guard(lock_);
    return Super::aligned_alloc(alignment, size);
  }

  int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept
    requires requires(Super s, void** o, std::size_t a, std::size_t n) { s.posix_memalign(o, a, n); }
  {
    std::lock_guard guard(lock_);
    return Super::posix_memalign(out, alignment, size);
  }

  void clear() noexcept
    requires ClearableHeap<Super>
  {
    std::lock_guard guard(lock_);
    Super::clear();
  }

  // For callers that need several operations to be atomic together.
  void lock() noexcept { lock_.lock(); }
  void unlock() noexcept { lock_.unlock(); }

 private:
  Lock lock_;
};

template <Heap Super>
using SpinLockedHeap = LockedHeap<platform::SpinLock, Super>;

template <Heap Super>
using MutexLockedHeap = LockedHeap<std::mutex, Super>;

}  // namespace strata::layers
