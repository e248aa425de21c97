// The allocation-heavy program every zero-cost contender runs: the same
// deterministic sequence of malloc/free with a sliding live set, sizes skewed
// small the way real C/C++ programs are, and every byte of each object written
// once so the heap's memory is really used. Only the heap type differs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <strata/random.hpp>

namespace strata::bench {

// strata's one generator: the same sequence for every contender.
using Rng = strata::Random;

// 70% 8-64 B, 25% 65-512 B, 5% 513-4096 B.
inline std::size_t object_size(Rng& rng) noexcept {
  std::uint64_t r = rng.next();
  unsigned pick = static_cast<unsigned>(r % 100);
  r >>= 8;
  if (pick < 70) return 8 + r % 57;
  if (pick < 95) return 65 + r % 448;
  return 513 + r % 3584;
}

struct WorkloadResult {
  std::uint64_t checksum;  // keeps the compiler from dropping the writes
  std::size_t operations;
};

// `operations` allocations; the live set holds up to `window` objects, each
// slot freed at random before it is reused, so lifetimes vary.
template <class H>
WorkloadResult run_workload(H& heap, std::size_t operations, std::size_t window) {
  std::vector<void*> live(window, nullptr);
  Rng rng(0x9E3779B97F4A7C15ull);
  std::uint64_t checksum = 0;
  for (std::size_t i = 0; i < operations; ++i) {
    std::size_t slot = rng.next() % window;
    if (live[slot]) {
      checksum += *static_cast<unsigned char*>(live[slot]);
      heap.free(live[slot]);
    }
    std::size_t size = object_size(rng);
    void* p = heap.malloc(size);
    if (!p) return {checksum, i};
    std::memset(p, static_cast<int>(i), size);
    live[slot] = p;
  }
  for (void* p : live)
    if (p) heap.free(p);
  return {checksum, operations};
}

}  // namespace strata::bench
