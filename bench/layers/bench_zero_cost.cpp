// bench_zero_cost CONTENDER [OPERATIONS]
// Runs the shared allocation workload (workload.hpp) on one heap and prints
// "contender=… operations=… seconds=… cpu_seconds=… checksum=…" (timed_loop.hpp).
// The driver `run` interleaves contenders and compares them; this program only
// measures one.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "monolithic_kingsley.hpp"
#include "strata/layers.hpp"
#include "timed_loop.hpp"
#include "workload.hpp"

namespace {

// The workload's own cost: a bump pointer over one big mapping, free does
// nothing. Subtracting its instruction count isolates the allocators'.
class BumpHeap {
 public:
  explicit BumpHeap(std::size_t bytes)
      : next_(static_cast<char*>(strata::platform::map_pages(bytes))), end_(next_ + bytes) {}
  void* malloc(std::size_t size) {
    size = strata::layers::align_up(size, 16);
    if (next_ == nullptr || size > static_cast<std::size_t>(end_ - next_)) return nullptr;
    void* p = next_;
    next_ += size;
    return p;
  }
  void free(void*) {}

 private:
  char* next_;
  char* end_;
};

template <class H>
int measure(std::string_view name, H& heap, std::size_t ops) {
  constexpr std::size_t kWindow = 20000;  // live objects at once
  strata::bench::LoopTimes times;
  strata::bench::WorkloadResult r =
      strata::bench::timed([&] { return strata::bench::run_workload(heap, ops, kWindow); }, &times);
  if (r.operations != ops) {
    std::fprintf(stderr, "bench_zero_cost: %.*s ran out of memory after %zu allocations\n",
                 static_cast<int>(name.size()), name.data(), r.operations);
    return 1;
  }
  strata::bench::print_loop(name, ops, times, r.checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s kingsley-layers|kingsley-monolithic|lea-layers|glibc|bump [OPERATIONS]\n",
                 argv[0]);
    return 2;
  }
  const std::string_view name = argv[1];
  const std::size_t ops = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4000000;
  if (name == "kingsley-layers") {
    static strata::layers::KingsleyHeap heap;
    return measure(name, heap, ops);
  }
  if (name == "kingsley-monolithic") {
    static strata::bench::MonolithicKingsley heap;
    return measure(name, heap, ops);
  }
#if __has_include("strata/layers/general/lea_heap.hpp")
  if (name == "lea-layers") {
    static strata::layers::LeaHeap heap;
    return measure(name, heap, ops);
  }
#endif
  if (name == "glibc") {
    strata::layers::MallocHeap heap;
    return measure(name, heap, ops);
  }
  if (name == "bump") {
    BumpHeap heap(ops * 4096 / 20 + (std::size_t{64} << 20));  // mean request ≈ 200 B
    return measure(name, heap, ops);
  }
  std::fprintf(stderr, "bench_zero_cost: unknown contender '%s'\n", argv[1]);
  return 2;
}
