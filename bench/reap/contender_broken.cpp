// Test-only contender "broken": a bump region that hands out the previous
// object again every 97th allocation.  The smoke tests run it to show that the
// workloads' own checks catch an allocator that overlaps live objects.
#include "bump_region.hpp"
#include "workload.hpp"

namespace {

struct Broken {
  static constexpr const char* kName = "broken";
  static constexpr bool kCanFree = false;
  static constexpr std::size_t kAlignment = 16;

  void* alloc(std::size_t size) {
    if (++count % 97 == 0 && last != nullptr) return last;
    last = region.malloc(size < 1024 ? 1024 : size);  // room for any reused size
    return last;
  }
  void free(void*, std::size_t) {}
  void clear() {
    region.clear();
    last = nullptr;
  }
  std::optional<std::size_t> held() const { return region.held(); }

  strata::bench_reap::BumpRegion region;
  void* last = nullptr;
  std::size_t count = 0;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Broken>(argc, argv); }
