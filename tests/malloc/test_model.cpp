// The project's model-based random test (tests/support/heap_model.hpp) on libstrata.
#include <gtest/gtest.h>

#include "strata/strata.h"
#include "support/heap_model.hpp"

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kScale = 4;  // the model checks every byte; sanitizers make that slow
#else
constexpr std::size_t kScale = 1;
#endif

// libstrata through its prefixed API, as a strata::layers::SizedHeap with realloc.
struct StrataHeap {
  void* malloc(std::size_t size) { return strata_malloc(size); }
  void free(void* p) { strata_free(p); }
  void* realloc(void* p, std::size_t size) { return strata_realloc(p, size); }
  std::size_t getSize(void* p) { return strata_usable_size(p); }
};
static_assert(strata::layers::SizedHeap<StrataHeap>);

TEST(StrataModel, SmallObjects) {
  StrataHeap heap;
  strata::test::run_heap_model(heap, {.seed = 1});
}

TEST(StrataModel, SmallObjectsOtherSeedManyLive) {
  StrataHeap heap;
  strata::test::run_heap_model(heap, {.seed = 77, .operations = 200000 / kScale, .max_live = 20000});
}

TEST(StrataModel, UpToLargeObjects) {
  StrataHeap heap;
  strata::test::run_heap_model(heap, {.seed = 2, .operations = 60000 / kScale, .max_live = 500, .max_size = 256 * 1024});
}

TEST(StrataModel, UpToHugeObjects) {
  StrataHeap heap;
  strata::test::run_heap_model(heap, {.seed = 3, .operations = 4000 / kScale, .max_live = 40, .max_size = 3 << 20});
}

}  // namespace
