// The hardened build (libstrata-hardened.so, STRATA_MALLOC_HARDENED): what
// malloc and free add there, each a policy constant of config.hpp. The
// default build compiles none of it (the callers test the constants).
#pragma once
#include <cstddef>

namespace strata::malloc_detail {

// malloc: small requests through the heap's slow path (page_take), a canary
// at the slot's end, the slot checked to be still zero (write after free).
void* hardened_allocate(std::size_t size) noexcept;
// free: the pointer checked against the area map before anything is read;
// small objects: the canary checked, the object zeroed and quarantined.
void hardened_free(void* p) noexcept;
// free_sized, sized operator delete: `size` must fit the object (aligned
// forms, `align` > 0: at most its usable size).
void hardened_check_size(void* p, std::size_t size, std::size_t align) noexcept;

}  // namespace strata::malloc_detail
