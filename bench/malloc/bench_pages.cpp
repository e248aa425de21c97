// The malloc benchmarks' own bookkeeping memory, through strata's one door to
// the kernel (include/strata/platform.hpp), for C programs. No C++ runtime:
// compiled without exceptions or RTTI and linked as C, so a benchmark loads
// nothing the allocator under test would have to share the process with.
#include <cstddef>

#include "strata/platform.hpp"

extern "C" void* bench_pages_map(std::size_t bytes) { return strata::platform::map_pages(bytes); }

extern "C" void bench_pages_unmap(void* pages, std::size_t bytes) { strata::platform::unmap_pages(pages, bytes); }
