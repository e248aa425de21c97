// Contender "apr": an APR pool (apr_pool_create, apr_palloc, apr_pool_clear).
// The pool keeps its blocks across clears (its allocator's free list); no
// individual free.
#include <apr_general.h>
#include <apr_pools.h>

#include "workload.hpp"

namespace {

struct Apr {
  static constexpr const char* kName = "apr";
  static constexpr bool kCanFree = false;
  static constexpr std::size_t kAlignment = 8;  // APR_ALIGN_DEFAULT

  Apr() {
    if (apr_initialize() != APR_SUCCESS || apr_pool_create(&pool, nullptr) != APR_SUCCESS) {
      strata::bench_reap::fail("APR pool creation failed");
    }
  }
  Apr(const Apr&) = delete;
  Apr& operator=(const Apr&) = delete;
  ~Apr() {
    apr_pool_destroy(pool);
    apr_terminate();
  }

  void* alloc(std::size_t size) { return apr_palloc(pool, size); }
  void free(void*, std::size_t) {}
  void clear() { apr_pool_clear(pool); }
  std::optional<std::size_t> held() const { return std::nullopt; }

  apr_pool_t* pool = nullptr;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Apr>(argc, argv); }
