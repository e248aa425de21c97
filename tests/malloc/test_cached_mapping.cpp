// A double free or realloc of a huge object whose mapping of its own was freed
// into the cache is named as such, not as an invalid pointer. Built three
// times: against the default, checked and hardened cores. Labelled no-asan
// no-tsan: the child runs under setrlimit(RLIMIT_AS), which sanitizers'
// terabyte reservations do not survive.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "address_space.hpp"
#include "huge_heap.hpp"
#include "strata/strata.h"

namespace {

// Without a region, a freed huge object's mapping of its own stays in the
// cache: a second free or a realloc of it names the misuse, not "invalid".
// Runs in the death test's child; exits 0 (no abort) if the object did not
// get a mapping of its own, so the expected message is then missing.
void misuse_freed_cached_mapping(bool by_realloc) {
  struct rlimit limit{};
  limit.rlim_cur = limit.rlim_max = current_address_space() + (std::size_t{64} << 20);
  if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(0);
  void* p = strata_malloc(std::size_t{20} << 20);
  if (!p || strata::malloc_detail::huge_stats().reserved_bytes != 0) _exit(0);
  strata_free(p);
  if (strata::malloc_detail::huge_stats().cache_entries == 0) _exit(0);
  if (by_realloc) (void)strata_realloc(p, 100);
  strata_free(p);
  _exit(0);
}

TEST(StrataCachedMappingDeathTest, ADoubleFreeOrReallocOfItIsNamed) {
  EXPECT_DEATH(misuse_freed_cached_mapping(false), "strata: double free of 0x[0-9a-f]+\n");
  EXPECT_DEATH(misuse_freed_cached_mapping(true), "strata: realloc of freed 0x[0-9a-f]+\n");
}

}  // namespace
