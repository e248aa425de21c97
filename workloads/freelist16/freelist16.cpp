// freelist16 — the 2026 paper's upper-bound microbenchmark for per-class
// allocation (§4.3, RQ1): "it exclusively measures allocation throughput
// using intrusive pointers for zero memory overhead in building the linked
// freelist. With 16-byte allocations, this upper bound shows the per-class
// allocator outperforms naïve allocation with glibc malloc by only 24%,
// jemalloc by 11%, and mimalloc by 8%."
//
// Nothing but that: allocate a batch of kBatch 16-byte objects, free the
// batch, repeat. Each object gets one word written on allocation and read
// back on free, the least that keeps the compiler from dropping the pair.
// (workloads/freelist-mix is our own, more realistic mix of the same two
// allocators.)
//
// Modes:
//   custom  a hand-written intrusive LIFO freelist inline in the loop: a freed
//           object's first word links it to the next; a miss calls
//           malloc(16) (only the first batch misses);
//   naive   malloc(16) / free for every object ("remove freelist", 2026 Table 4).
// The checksum digests the words read back, in program order: the same in
// both modes and under any malloc.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Mode;
using strata::workload::Options;

constexpr std::uint64_t kAllocationsPerScale = 1'000'000;
constexpr std::size_t kBatch = 1000;  // divides kAllocationsPerScale
constexpr std::size_t kObjectBytes = 16;

// custom: the freelist a programmer writes by hand.
struct FreeObject {
  FreeObject* next;
};

template <Mode M>
std::uint64_t run(const Options& options) {
  static_assert(kAllocationsPerScale % kBatch == 0);
  static_assert(sizeof(FreeObject) <= kObjectBytes);
  void* batch[kBatch];
  FreeObject* freelist = nullptr;  // custom mode only
  std::uint64_t digest = 0;
  const std::uint64_t batches = options.scale * (kAllocationsPerScale / kBatch);
  for (std::uint64_t b = 0; b < batches; ++b) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      void* object;
      if (M == Mode::custom && freelist != nullptr) {
        object = freelist;
        freelist = freelist->next;
      } else {
        object = std::malloc(kObjectBytes);
        if (object == nullptr) throw std::bad_alloc();
      }
      *static_cast<std::uint64_t*>(object) = (b * kBatch + i) ^ options.seed;
      batch[i] = object;
    }
    for (std::size_t i = 0; i < kBatch; ++i) {
      digest = digest * 0x100000001b3ULL + *static_cast<std::uint64_t*>(batch[i]);
      if (M == Mode::custom) {
        auto* free_object = static_cast<FreeObject*>(batch[i]);
        free_object->next = freelist;
        freelist = free_object;
      } else {
        std::free(batch[i]);
      }
    }
  }
  while (FreeObject* object = freelist) {  // the cached objects go back at exit
    freelist = object->next;
    std::free(object);
  }

  Checksum sum;
  sum.add(batches * kBatch);
  sum.add(digest);
  std::printf("freelist16: %llu objects of %zu bytes in batches of %zu\n",
              static_cast<unsigned long long>(batches * kBatch), kObjectBytes, kBatch);
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main(argc, argv, "freelist16", {Mode::custom, Mode::naive}, [](const Options& o) {
    return o.mode == Mode::custom ? run<Mode::custom>(o) : run<Mode::naive>(o);
  });
}
