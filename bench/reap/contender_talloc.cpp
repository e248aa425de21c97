// Contender "talloc": a talloc context as the region (talloc_new,
// talloc_size, talloc_free of one object, talloc_free of the context +
// talloc_new as clear).  Every talloc object carries a large header and is a
// malloc call (glibc).
#include <talloc.h>

#include "workload.hpp"

namespace {

struct Talloc {
  static constexpr const char* kName = "talloc";
  static constexpr bool kCanFree = true;
  static constexpr std::size_t kAlignment = 16;

  Talloc() : ctx(talloc_new(nullptr)) {
    if (ctx == nullptr) strata::bench_reap::fail("talloc_new failed");
  }
  Talloc(const Talloc&) = delete;
  Talloc& operator=(const Talloc&) = delete;
  ~Talloc() { talloc_free(ctx); }

  void* alloc(std::size_t size) { return talloc_size(ctx, size); }
  void free(void* p, std::size_t) { talloc_free(p); }
  void clear() {
    talloc_free(ctx);
    ctx = talloc_new(nullptr);
    if (ctx == nullptr) strata::bench_reap::fail("talloc_new failed");
  }
  std::optional<std::size_t> held() const { return std::nullopt; }

  void* ctx;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Talloc>(argc, argv); }
