// bench_special CONTENDER [OPERATIONS]
// The 2001 paper's §5: special-purpose allocators built from layers against
// the originals they replace, each pair on the same sequence
// (special_workloads.hpp). Prints "contender=… operations=… seconds=… cpu_seconds=… checksum=…";
// the lab interleaves the contenders and pairs them by round.
//   xalloc-layers    XallocHeap<32 MiB, MmapHeap> (the paper: over MmapHeap)
//   xalloc-hand      197.parser's xalloc written by hand as one struct: SPEC's
//                    source is not public, so this follows the paper's
//                    description (one fixed region, bump after the last block
//                    in use, free marks and pops back, reset frees everything)
//   obstack-layers   ObstackHeap<4096, HybridHeap<4096, FreelistHeap<...>, ...>>
//                    over malloc (the paper's ObstackType)
//   obstack-gnu      GNU obstacks: glibc's <obstack.h> macros over malloc,
//                    16-byte alignment like ObstackHeap's
#include <obstack.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "special_workloads.hpp"
#include "strata/layers.hpp"
#include "strata/platform.hpp"
#include "timed_loop.hpp"

#define obstack_chunk_alloc std::malloc
#define obstack_chunk_free std::free

namespace {

using namespace strata::layers;
constexpr std::size_t kRegion = std::size_t{32} << 20;  // 197.parser's is 30 MB

// 197.parser's xalloc by hand: blocks of [previous block, size | free bit, data].
class XallocHand {
 public:
  void* malloc(std::size_t size) {
    if (region_ == nullptr) {
      region_ = top_ = static_cast<char*>(strata::platform::map_pages(kRegion));
      if (region_ == nullptr) return nullptr;
    }
    size = (size + 15) & ~std::size_t{15};
    if (size + sizeof(Block) > static_cast<std::size_t>(region_ + kRegion - top_)) return nullptr;
    auto* block = reinterpret_cast<Block*>(top_);
    block->prev = last_;
    block->size = size;
    top_ += sizeof(Block) + size;
    last_ = block;
    return block + 1;
  }
  void free(void* ptr) {
    Block* block = static_cast<Block*>(ptr) - 1;
    block->size |= 1;
    while (last_ != nullptr && (last_->size & 1)) {  // the freed blocks at the top go back
      top_ = reinterpret_cast<char*>(last_);
      last_ = last_->prev;
    }
  }
  void clear() {
    top_ = region_;
    last_ = nullptr;
  }

 private:
  struct alignas(16) Block {
    Block* prev;
    std::size_t size;
  };
  char* region_ = nullptr;
  char* top_ = nullptr;
  Block* last_ = nullptr;
};

// The paper's ObstackType: 4 KiB chunks recycled on a free list, bigger ones from malloc.
using ObstackType = ObstackHeap<4096, HybridHeap<4096, FreelistHeap<SizeHeap<MallocHeap>>, SizeHeap<MallocHeap>>>;

struct LayeredObstack {
  ObstackType heap;
  void* alloc(std::size_t n) { return heap.malloc(n); }
  void grow1(char c) { heap.append(&c, 1); }
  void* finish() { return heap.finish(); }
  void free_to(void* p) { heap.free(p); }
};

struct GnuObstack {
  struct obstack stack;
  GnuObstack() {
    obstack_init(&stack);
    obstack_alignment_mask(&stack) = 15;
  }
  ~GnuObstack() { obstack_free(&stack, nullptr); }
  void* alloc(std::size_t n) { return obstack_alloc(&stack, n); }
  void grow1(char c) { obstack_1grow(&stack, c); }
  void* finish() { return obstack_finish(&stack); }
  void free_to(void* p) { obstack_free(&stack, p); }
};

template <class Run>
int measure(std::string_view name, std::size_t ops, Run run) {
  strata::bench::LoopTimes times;
  const std::uint64_t checksum = strata::bench::timed(run, &times);
  strata::bench::print_loop(name, ops, times, checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s xalloc-layers|xalloc-hand|obstack-layers|obstack-gnu [OPERATIONS]\n", argv[0]);
    return 2;
  }
  const std::string_view name = argv[1];
  const std::size_t ops = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4000000;
  if (name == "xalloc-layers") {
    static XallocHeap<kRegion, MmapHeap> heap;
    return measure(name, ops, [&] { return strata::bench::parser_workload(heap, ops); });
  }
  if (name == "xalloc-hand") {
    static XallocHand heap;
    return measure(name, ops, [&] { return strata::bench::parser_workload(heap, ops); });
  }
  if (name == "obstack-layers") {
    static LayeredObstack obstack;
    return measure(name, ops, [&] { return strata::bench::gcc_workload(obstack, ops); });
  }
  if (name == "obstack-gnu") {
    static GnuObstack obstack;
    return measure(name, ops, [&] { return strata::bench::gcc_workload(obstack, ops); });
  }
  std::fprintf(stderr, "bench_special: unknown contender '%s'\n", argv[1]);
  return 2;
}
