// Inside libstrata (src/malloc headers): large objects coalesce back into
// whole regions; empty page blocks are discarded with hysteresis.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "config.hpp"
#include "large_heap.hpp"
#include "os.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;
using strata::malloc_detail::large_stats;

TEST(StrataLarge, FreedNeighboursCoalesceIntoOneChunk) {
  // In a fresh thread, so that the objects come from one arena in order.
  std::thread([] {
    auto before = large_stats();
    std::vector<void*> objects;
    for (int i = 0; i < 30; ++i) objects.push_back(strata_malloc(100000 + static_cast<std::size_t>(i) * 1000));
    std::mt19937 rng(4);
    std::shuffle(objects.begin(), objects.end(), rng);
    for (void* p : objects) strata_free(p);
    auto after = large_stats();
    EXPECT_EQ(after.live_objects, before.live_objects);
    // 30 neighbours (3.4 MB in a 4 MiB region), freed in random order: only
    // coalescing leaves a free chunk that big (the region's tail was < 1 MB).
    EXPECT_GE(after.largest_free, std::size_t{3400000});
    void* big = strata_malloc(cfg::kLargeMax);
    ASSERT_NE(big, nullptr);
    strata_free(big);
    EXPECT_EQ(large_stats().regions, after.regions) << "the coalesced space holds the largest large object";
  }).join();
}

TEST(StrataLarge, ReallocGrowsInPlaceIntoAFreeNeighbour) {
  std::thread([] {
    void* a = strata_malloc(50000);
    void* b = strata_malloc(50000);
    void* c = strata_malloc(50000);
    ASSERT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 50016) << "consecutive chunks in a fresh arena";
    strata_free(b);
    EXPECT_EQ(strata_realloc(a, 90000), a);
    strata_free(a);
    strata_free(c);
  }).join();
}

TEST(StrataPages, EmptyBlocksAreDiscardedBeyondTheRetainedFew) {
  std::thread([] {
    std::size_t before = strata::malloc_detail::discarded_os_pages();
    std::vector<void*> objects;
    // 64 page blocks worth of 256-byte objects
    for (std::size_t i = 0; i < 64 * cfg::kPageSize / 256; ++i) objects.push_back(strata_malloc(256));
    for (void* p : objects) strata_free(p);
    std::size_t discarded = strata::malloc_detail::discarded_os_pages() - before;
    // all but the retained blocks (and the front one) were handed back
    std::size_t expected = (64 - cfg::kRetainedEmptyPages - 1) * (cfg::kPageSize / cfg::kOsPageSize);
    EXPECT_GE(discarded, expected);
  }).join();
}

TEST(StrataPages, AMallocFreeLoopOnABlockBoundaryDoesNotDiscard) {
  std::thread([] {
    std::vector<void*> fill;
    for (std::size_t i = 0; i < cfg::kPageSize / 1024; ++i) fill.push_back(strata_malloc(1024));  // exactly one block
    std::size_t before = strata::malloc_detail::discarded_os_pages();
    for (int i = 0; i < 10000; ++i) strata_free(strata_malloc(1024));  // each turn empties a new block
    EXPECT_EQ(strata::malloc_detail::discarded_os_pages(), before);
    for (void* p : fill) strata_free(p);
  }).join();
}

}  // namespace
