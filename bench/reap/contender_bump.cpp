// Contender "bump": the plain bump-pointer region (bump_region.hpp), the ideal
// every other row is measured against.  alloc() is kept out of line (noipa) so
// that, like every library contender, it costs a real call.
#include "bump_region.hpp"
#include "workload.hpp"

namespace {

struct Bump {
  static constexpr const char* kName = "bump";
  static constexpr bool kCanFree = false;
  static constexpr std::size_t kAlignment = 16;

  [[gnu::noipa]] void* alloc(std::size_t size) { return region.malloc(size); }
  void free(void*, std::size_t) {}
  [[gnu::noipa]] void clear() { region.clear(); }
  std::optional<std::size_t> held() const { return region.held(); }

  strata::bench_reap::BumpRegion region;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Bump>(argc, argv); }
