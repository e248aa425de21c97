// Contender "mimalloc": a mimalloc heap as the region (mi_heap_new,
// mi_heap_malloc, mi_free for single objects, mi_heap_destroy + mi_heap_new
// as clear).  Linking libmimalloc also replaces malloc in this process, which
// is why each contender is its own program.
#include <mimalloc.h>

#include "workload.hpp"

namespace {

struct Mimalloc {
  static constexpr const char* kName = "mimalloc";
  static constexpr bool kCanFree = true;
  static constexpr std::size_t kAlignment = 8;  // mimalloc aligns small sizes to 8 only

  Mimalloc() : heap(mi_heap_new()) {
    if (heap == nullptr) strata::bench_reap::fail("mi_heap_new failed");
  }
  Mimalloc(const Mimalloc&) = delete;
  Mimalloc& operator=(const Mimalloc&) = delete;
  ~Mimalloc() { mi_heap_destroy(heap); }

  void* alloc(std::size_t size) { return mi_heap_malloc(heap, size); }
  void free(void* p, std::size_t) { mi_free(p); }
  void clear() {
    mi_heap_destroy(heap);
    heap = mi_heap_new();
    if (heap == nullptr) strata::bench_reap::fail("mi_heap_new failed");
  }
  std::optional<std::size_t> held() const { return std::nullopt; }

  mi_heap_t* heap;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Mimalloc>(argc, argv); }
