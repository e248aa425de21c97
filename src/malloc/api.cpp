// The strata_* C API: the allocator under its own names (strata/strata.h).
#include "strata/strata.h"

#include "allocator.hpp"

namespace sm = strata::malloc_detail;

extern "C" {

void* strata_malloc(size_t size) { return sm::allocate(size); }
void strata_free(void* ptr) { sm::deallocate(ptr); }
void* strata_calloc(size_t count, size_t size) { return sm::allocate_zeroed(count, size); }
void* strata_realloc(void* ptr, size_t size) { return sm::reallocate(ptr, size); }
void* strata_reallocarray(void* ptr, size_t count, size_t size) { return sm::reallocate_array(ptr, count, size); }
void* strata_aligned_alloc(size_t alignment, size_t size) { return sm::allocate_aligned(alignment, size); }
int strata_posix_memalign(void** out, size_t alignment, size_t size) { return sm::posix_memalign(out, alignment, size); }
size_t strata_usable_size(const void* ptr) { return sm::usable_size(ptr); }
void strata_stats_print(void) { sm::print_stats(); }

}  // extern "C"
