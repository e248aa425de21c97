// DebugHeap — catches allocation errors at the moment they happen:
//   * fills every new object with kAllocFill (0xA5), so code reading
//     uninitialised memory sees a recognisable pattern, and every freed object
//     with kFreeFill (0xDD), so use-after-free reads garbage that stands out;
//   * keeps its own record of every address it returned and whether it is live,
//     so free() of an already freed pointer ("double free") and of a pointer it
//     never returned ("foreign pointer") print a message naming the address on
//     stderr and abort();
//   * puts kGuardBytes of kGuardFill (0xFB) right after every object and checks
//     them at free, so a write past the end ("overrun") aborts the same way.
// getSize returns the size that was requested. free(nullptr) is a no-op.
// Limits: the record lives in a hash table whose slots come from Super and
// keeps one entry per distinct address ever returned (freed entries are kept to
// tell a double free from a foreign pointer), so memory grows with the
// footprint of Super; an address that Super hands out again becomes live again.
// Guard bytes catch overruns only at free, and only those that change a
// guard byte (ASan catches more). Not thread safe by itself.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "strata/layers/heap.hpp"
#include "strata/layers/utility/detail/pointer_table.hpp"

namespace strata::layers {

template <Heap Super>
class DebugHeap : public Super {
 public:
  static constexpr unsigned char kAllocFill = 0xA5;
  static constexpr unsigned char kFreeFill = 0xDD;
  static constexpr unsigned char kGuardFill = 0xFB;
  static constexpr std::size_t kGuardBytes = 16;

  using Super::Super;
  DebugHeap() = default;
  DebugHeap(const DebugHeap&) = delete;
  DebugHeap& operator=(const DebugHeap&) = delete;
  ~DebugHeap() { record_.release(parent()); }

  void* malloc(std::size_t size) noexcept {
    if (size > kMaxSize) return nullptr;  // the record keeps the size in 63 bits
    void* ptr = Super::malloc(size + kGuardBytes);
    if (!ptr) return nullptr;
    if (!record_.assign(parent(), ptr, live_entry(size))) {
      Super::free(ptr);
      return nullptr;
    }
    std::memset(ptr, kAllocFill, size);
    std::memset(static_cast<unsigned char*>(ptr) + size, kGuardFill, kGuardBytes);
    return ptr;
  }

  void free(void* ptr) noexcept {
    if (!ptr) return;
    std::uintptr_t* entry = record_.find(ptr);
    if (!entry) fail("free of foreign pointer", ptr, " (never returned by this heap)");
    if (!is_live(*entry)) fail("double free of", ptr);
    const std::size_t size = size_of(*entry);
    if (!guard_intact(ptr, size)) fail("overrun past the end of", ptr, " (guard bytes changed)");
    *entry = freed_entry(size);
    std::memset(ptr, kFreeFill, size);
    Super::free(ptr);
  }

  // The requested size of a live object; aborts like free() on any other pointer.
  std::size_t getSize(void* ptr) noexcept {
    std::uintptr_t* entry = record_.find(ptr);
    if (!entry) fail("getSize of foreign pointer", ptr, " (never returned by this heap)");
    if (!is_live(*entry)) fail("getSize of freed object", ptr);
    return size_of(*entry);
  }

  // The parent's other whole-object operations do not understand this layer's
  // objects: hide them rather than let them leak through the mixin.
  void* realloc(void*, std::size_t) = delete;
  void* calloc(std::size_t, std::size_t) = delete;
  void* memalign(std::size_t, std::size_t) = delete;
  void* aligned_alloc(std::size_t, std::size_t) = delete;
  int posix_memalign(void**, std::size_t, std::size_t) = delete;
  void clear() = delete;

  // True when ptr is an object this heap returned and has not seen freed.
  bool isLive(const void* ptr) noexcept {
    std::uintptr_t* entry = record_.find(ptr);
    return entry && is_live(*entry);
  }

 private:
  static constexpr std::uintptr_t kLiveBit = std::uintptr_t{1} << 63;
  static constexpr std::size_t kMaxSize = kLiveBit - 1 - kGuardBytes;

  Super& parent() noexcept { return *this; }
  static std::uintptr_t live_entry(std::size_t size) noexcept { return kLiveBit | size; }
  static std::uintptr_t freed_entry(std::size_t size) noexcept { return size; }
  static bool is_live(std::uintptr_t entry) noexcept { return (entry & kLiveBit) != 0; }
  static std::size_t size_of(std::uintptr_t entry) noexcept { return entry & ~kLiveBit; }

  // One line on stderr, e.g. "strata DebugHeap: double free of 0x5581…", then abort.
  static bool guard_intact(const void* ptr, std::size_t size) noexcept {
    const unsigned char* guard = static_cast<const unsigned char*>(ptr) + size;
    for (std::size_t i = 0; i < kGuardBytes; ++i)
      if (guard[i] != kGuardFill) return false;
    return true;
  }

  [[noreturn]] static void fail(const char* what, const void* ptr, const char* detail = "") noexcept {
    std::fprintf(stderr, "strata DebugHeap: %s %p%s\n", what, ptr, detail);
    std::fflush(stderr);
    std::abort();
  }

  detail::PointerTable record_;
};

}  // namespace strata::layers
