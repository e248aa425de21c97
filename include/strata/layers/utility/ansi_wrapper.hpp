// ANSIWrapper — C library semantics on top of any heap, so a layer chain can
// stand in for malloc/free/calloc/realloc/memalign:
//   malloc(0)         a unique, freeable pointer (a 1-byte request to Super)
//   malloc(huge)      requests above PTRDIFF_MAX fail before reaching Super
//   free(nullptr)     no-op
//   calloc(n, size)   n*size overflow -> nullptr + ENOMEM; memory zeroed
//   realloc(nullptr)  = malloc; grows by malloc+copy+free, copying up to the old
//                     usable size (Super::getSize); a failed realloc leaves the
//                     old object intact; a shrink, and realloc(p, 0), keep p
//                     (C17 leaves size 0 implementation-defined: here NULL from
//                     realloc always means failure, never "freed")
//   memalign / aligned_alloc / posix_memalign: alignment not a power of two ->
//                     EINVAL (posix_memalign also wants a multiple of sizeof(void*))
//   any failure of Super -> nullptr + errno ENOMEM.
// Over-aligned objects (alignment > kAlignment) come from Super::memalign when
// Super has one; otherwise ANSIWrapper over-allocates and remembers the
// aligned-pointer -> block mapping in a small table whose slots also come from
// Super (and go back to it when no over-aligned object is live), so
// free/getSize/realloc work on them too.
// Limits: realloc and getSize need a SizedHeap parent; like most layers this
// one is not thread safe by itself (compose LockedHeap outside it).
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "strata/layers/heap.hpp"
#include "strata/layers/utility/detail/capabilities.hpp"
#include "strata/layers/utility/detail/pointer_table.hpp"

namespace strata::layers {

template <Heap Super>
class ANSIWrapper : public Super {
 public:
  using Super::Super;
  ANSIWrapper() = default;
  ANSIWrapper(const ANSIWrapper&) = delete;
  ANSIWrapper& operator=(const ANSIWrapper&) = delete;
  ~ANSIWrapper() { overaligned_.release(parent()); }

  void* malloc(std::size_t size) noexcept {
    if (size > kMaxRequest) return out_of_memory();
    void* ptr = Super::malloc(size == 0 ? 1 : size);
    return ptr ? ptr : out_of_memory();
  }

  void free(void* ptr) noexcept {
    if (!ptr) return;
    if (might_be_overaligned(ptr)) {
      if (std::uintptr_t* block = overaligned_.find(ptr)) {
        void* base = reinterpret_cast<void*>(*block);
        overaligned_.erase(ptr);
        if (overaligned_.size() == 0) overaligned_.release(parent());  // hold nothing when unused
        Super::free(base);
        return;
      }
    }
    Super::free(ptr);
  }

  void* calloc(std::size_t count, std::size_t size) noexcept {
    std::size_t total;
    if (__builtin_mul_overflow(count, size, &total)) return out_of_memory();
    void* ptr = malloc(total);
    if (ptr) std::memset(ptr, 0, total);
    return ptr;
  }

  std::size_t getSize(void* ptr) noexcept
    requires SizedHeap<Super>
  {
    if (!ptr) return 0;
    if (might_be_overaligned(ptr)) {
      if (std::uintptr_t* block = overaligned_.find(ptr)) {
        void* base = reinterpret_cast<void*>(*block);
        return Super::getSize(base) - static_cast<std::size_t>(static_cast<char*>(ptr) - static_cast<char*>(base));
      }
    }
    return Super::getSize(ptr);
  }

  void* realloc(void* ptr, std::size_t size) noexcept
    requires SizedHeap<Super>
  {
    if (!ptr) return malloc(size);
    if (size > kMaxRequest) return out_of_memory();
    const std::size_t old_size = getSize(ptr);
    if (size <= old_size) return ptr;  // fits where it is (also size 0)
    void* moved = malloc(size);
    if (!moved) return nullptr;  // ptr untouched, errno already ENOMEM
    std::memcpy(moved, ptr, old_size);
    free(ptr);
    return moved;
  }

  void* memalign(std::size_t alignment, std::size_t size) noexcept {
    if (!is_power_of_two(alignment)) {
      errno = EINVAL;
      return nullptr;
    }
    if (alignment <= kAlignment) return malloc(size);
    if (size > kMaxRequest) return out_of_memory();
    if constexpr (AligningHeap<Super>) {
      void* ptr = Super::memalign(alignment, size == 0 ? 1 : size);
      return ptr ? ptr : out_of_memory();
    } else {
      return overaligned_malloc(alignment, size == 0 ? 1 : size);
    }
  }

  void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept { return memalign(alignment, size); }

  // POSIX: the error is the return value and errno is left alone.
  int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
    if (!is_power_of_two(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
    const int saved = errno;
    void* ptr = memalign(alignment, size);
    const int error = errno;
    errno = saved;
    if (!ptr) return error;
    *out = ptr;
    return 0;
  }

 private:
  static constexpr std::size_t kMaxRequest = static_cast<std::size_t>(PTRDIFF_MAX);

  Super& parent() noexcept { return *this; }

  static void* out_of_memory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  // Only table entries are aligned beyond kAlignment by construction; checking
  // the next bit first keeps the table lookup off most frees.
  bool might_be_overaligned(void* ptr) const noexcept {
    return overaligned_size() != 0 && (reinterpret_cast<std::uintptr_t>(ptr) & (2 * kAlignment - 1)) == 0;
  }
  std::size_t overaligned_size() const noexcept { return overaligned_.size(); }

  void* overaligned_malloc(std::size_t alignment, std::size_t size) noexcept {
    if (size > kMaxRequest - alignment) return out_of_memory();
    void* base = Super::malloc(size + alignment);
    if (!base) return out_of_memory();
    void* aligned = reinterpret_cast<void*>(align_up(reinterpret_cast<std::uintptr_t>(base), alignment));
    if (!overaligned_.assign(parent(), aligned, reinterpret_cast<std::uintptr_t>(base))) {
      Super::free(base);
      return out_of_memory();
    }
    return aligned;
  }

  detail::PointerTable overaligned_;
};

}  // namespace strata::layers
