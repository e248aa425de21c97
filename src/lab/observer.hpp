// What a shim observes. malloc_family.cpp, the one translation unit that
// defines the malloc symbols, forwards every call to the next allocator and
// reports the outcome here; each shim (profiler, trace recorder) links that
// unit and implements these functions.
//
// Ordering contract, which keeps a shim's pointer table consistent under
// threads: an object is reported *before* the next allocator frees it and
// *after* the next allocator returns it, so an address is always removed from
// the table before it can be handed out again.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::lab {

// Which entry point made the request (the trace replays the same call).
enum class Call : std::uint8_t {
  Malloc = 1,
  Calloc = 2,
  Realloc = 3,  // realloc of NULL creates an object; of an object resizes it
  ReallocArray = 4,
  PosixMemalign = 5,
  AlignedAlloc = 6,
  Memalign = 7,
  Valloc = 8,
  Pvalloc = 9,
};

// An object taken out of the table while realloc runs on it.
struct Detached {
  bool known;  // false: the pointer was not in the table (allocated before the shim saw it)
  std::uint64_t size;
  std::uint64_t id;
};

namespace observer {
// A new object of `size` requested bytes (alignment 0 = the default).
void allocated(void* p, std::size_t size, std::size_t alignment, Call call) noexcept;
// `p` (non-null) is about to be freed.
void freed(void* p) noexcept;
// realloc(p, n) with non-null p: detach before the call, then exactly one of
// resized (success), released (realloc to 0 freed it) or reattached (failure).
Detached detach(void* p) noexcept;
void resized(const Detached& old, void* p, std::size_t size, Call call) noexcept;
void released(const Detached& old, Call call) noexcept;
void reattached(const Detached& old, void* p) noexcept;
}  // namespace observer

}  // namespace strata::lab
