// The contract every heap layer keeps, stated once as C++20 concepts so that a
// wrong composition is a one-line compile error rather than template noise.
#pragma once
#include <concepts>
#include <cstddef>

namespace strata::layers {

// What a general-purpose heap guarantees on x86-64: every pointer it returns is
// aligned to this many bytes (like glibc, and enough for any scalar or SSE type).
inline constexpr std::size_t kAlignment = 16;

// A heap hands out memory and takes it back. malloc returns nullptr when it
// cannot satisfy the request (never throws, never aborts); free(nullptr) is a no-op
// unless a layer says otherwise.
template <class H>
concept Heap = requires(H heap, void* ptr, std::size_t size) {
  { heap.malloc(size) } -> std::same_as<void*>;
  heap.free(ptr);
};

// A heap whose object representation knows each object's usable size.
template <class H>
concept SizedHeap = Heap<H> && requires(H heap, void* ptr) {
  { heap.getSize(ptr) } -> std::convertible_to<std::size_t>;
};

// A heap that can release everything it handed out in one call (regions).
template <class H>
concept ClearableHeap = Heap<H> && requires(H heap) { heap.clear(); };

// Round size up to a multiple of align (a power of two).
constexpr std::size_t align_up(std::size_t size, std::size_t align) noexcept {
  return (size + align - 1) & ~(align - 1);
}

constexpr bool is_power_of_two(std::size_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace strata::layers
