// Memory for the shims' own bookkeeping. It never comes from malloc (that
// would recurse into the shim and count the lab's data as the program's), and
// it is mapped from a memfd named "strata-lab" so /proc/PID/smaps shows it as a
// file mapping: the fragmentation meter, which counts anonymous memory, does
// not mistake the lab's tables for the program's heap. MAP_PRIVATE keeps the
// usual copy-on-write semantics across fork.
#pragma once
#include <cstddef>

namespace strata::lab {

// Zeroed read-write memory rounded up to whole pages, or nullptr.
void* map_lab_memory(std::size_t bytes) noexcept;
void unmap_lab_memory(void* p, std::size_t bytes) noexcept;

}  // namespace strata::lab
