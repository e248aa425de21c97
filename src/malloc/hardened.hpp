// The hardened build (libstrata-hardened.so, STRATA_MALLOC_HARDENED): what
// malloc and free add there, each a policy constant of config.hpp. The
// default build compiles none of it (the callers test the constants).
#pragma once
#include <cstddef>

#include "checked.hpp"

namespace strata::malloc_detail {

struct Page;

// malloc: a small request's size recorded in its slot's tail word (its slack
// stays zero), the slot checked to be still zero (write after free).
void* hardened_allocate(std::size_t size) noexcept;
// small_live_object (per_thread_heap.hpp) with free's common cases first:
// the owner's slot start below the bump pointer, another thread's as its
// remote free checks it; neither tagged freed.
void* hardened_live_object(Page* page, void* p, bool owner, Use use) noexcept;
// malloc_usable_size of `p` in the small object at `object`: up to the end
// of the request (the slot's tail records it), not of the slot.
std::size_t hardened_usable_size(void* object, const Page* page, const void* p) noexcept;
// realloc of the small object `p` (now `have` bytes) to `size`, in its slot
// if the slot fits `size` closely; false if it must move.
bool hardened_resize(void* p, std::size_t have, std::size_t size) noexcept;
// free: the pointer checked against the area map before anything is read;
// small objects: the tail and the slack checked, the object zeroed and quarantined.
void hardened_free(void* p) noexcept;
// free_sized, sized operator delete: `size` must fit the object (aligned
// forms, `align` > 0: at most its usable size).
void hardened_check_size(void* p, std::size_t size, std::size_t align) noexcept;
// usable_size (allocator.hpp), its misuse named for `use` (a sized free's
// check of a freed object is a double free).
std::size_t checked_usable_size(const void* p, Use use) noexcept;
// The check and the free in one (unaligned sized forms, p may be NULL): the
// fast free's checks find what the size check needs.
void hardened_free_sized(void* p, std::size_t size) noexcept;

// malloc(0) under cfg::kNoAccessZero: a fresh address of the zero area, or
// nullptr when the area is used up or cannot be reserved.
void* zero_area_allocate() noexcept;
// Is p in the zero area? Then zero_area_free(p) frees it (reporting a second
// free or a pointer it never gave).
bool in_zero_area(const void* p) noexcept;
void zero_area_free(void* p, Use use) noexcept;

}  // namespace strata::malloc_detail
