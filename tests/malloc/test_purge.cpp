// Purging on a clock (config.hpp, kPurgeDelayMs): freed memory waits the
// purge delay before it goes back to the OS, so a burst after a burst reuses
// it without a page fault, and a 1 GiB burst freed, by its own thread or by
// another, goes back once the delay is over: at the owner's first refill
// after it (here, one page block's worth of mallocs).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "config.hpp"
#include "huge_heap.hpp"
#include "large_heap.hpp"
#include "options.hpp"
#include "os.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;
namespace md = strata::malloc_detail;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kBurst = std::size_t{1} << 30;
// What may stay beyond the baseline once the delay is over: the retain
// limit's blocks at its highest, the front blocks, and the test's own vector.
constexpr std::size_t kSlack = 24 * kMiB;

std::size_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f) {
    if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

struct PurgeDelay {
  std::uint32_t saved;
  explicit PurgeDelay(std::uint32_t ms) : saved(md::g_purge_delay_ms.exchange(ms)) {}
  ~PurgeDelay() { md::g_purge_delay_ms.store(saved); }
};

// A block's worth of objects of a class the burst did not use: at least one refill.
void refill_once() {
  std::vector<void*> objects;
  for (std::size_t i = 0; i < 2 * cfg::kPageSize / 96; ++i) objects.push_back(strata_malloc(96));
  for (void* p : objects) strata_free(p);
}

// Of the OS pages in [p, p + bytes), how many are resident.
std::size_t resident_pages(const void* p, std::size_t bytes) {
  auto lo = reinterpret_cast<std::uintptr_t>(p) & ~(cfg::kOsPageSize - 1);
  auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes + cfg::kOsPageSize - 1) & ~(cfg::kOsPageSize - 1);
  std::vector<unsigned char> pages((hi - lo) / cfg::kOsPageSize);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, pages.data()) != 0) return 0;
  std::size_t n = 0;
  for (unsigned char page : pages) n += page & 1;
  return n;
}

// Large objects freed between live ones (free chunks that cannot coalesce,
// far fewer bytes than the arenas' dirty limit): how many of them still have
// the 4 OS pages in their middle resident.
constexpr std::size_t kLargeSize = 192 * 1024;
constexpr std::size_t kLargeHoles = 24;
std::size_t resident_holes(const std::vector<unsigned char*>& objects) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < objects.size(); i += 2)
    n += resident_pages(reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(objects[i] + kLargeSize / 2) &
                                                ~(cfg::kOsPageSize - 1)),
                        4 * cfg::kOsPageSize) == 4;
  return n;
}
std::vector<unsigned char*> large_holes() {
  std::vector<unsigned char*> objects(2 * kLargeHoles);
  for (auto& p : objects) {
    p = static_cast<unsigned char*>(strata_malloc(kLargeSize));
    std::memset(p, 0x5a, kLargeSize);
  }
  for (std::size_t i = 0; i < objects.size(); i += 2) strata_free(objects[i]);
  return objects;
}
void free_live(const std::vector<unsigned char*>& objects) {
  for (std::size_t i = 1; i < objects.size(); i += 2) strata_free(objects[i]);
}

std::vector<void*> burst(std::size_t size) {
  std::vector<void*> objects(kBurst / size);
  for (auto& p : objects) {
    p = strata_malloc(size);
    std::memset(p, 0x5a, size);
  }
  return objects;
}

TEST(StrataPurge, ABurstAfterABurstReusesItsBlocksWithoutDiscarding) {
  PurgeDelay delay(60 * 1000);
  std::thread([] {
    std::vector<void*> objects(64 * cfg::kPageSize / 256);
    for (int round = 0; round < 3; ++round) {
      std::size_t before = md::discarded_os_pages();
      for (auto& p : objects) p = strata_malloc(256);
      for (void* p : objects) strata_free(p);
      EXPECT_EQ(md::discarded_os_pages(), before) << "round " << round;
    }
  }).join();
}

TEST(StrataPurge, EmptyBlocksGoBackOnceTheDelayIsOver) {
  PurgeDelay delay(300);
  std::thread([] {
    std::vector<void*> objects(64 * cfg::kPageSize / 256);
    std::size_t before = md::discarded_os_pages();
    for (auto& p : objects) p = strata_malloc(256);
    for (void* p : objects) strata_free(p);
    std::size_t right_after = md::discarded_os_pages() - before;
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    refill_once();
    std::size_t later = md::discarded_os_pages() - before;
    // Freeing 4 MiB takes less than 300 ms on any machine the tests run on;
    // after the delay, all but the retained few are gone.
    EXPECT_LT(right_after, later);
    EXPECT_GE(later, (64 - cfg::kRetainedEmptyPages - 2) * (cfg::kPageSize / cfg::kOsPageSize));
  }).join();
}

TEST(StrataPurge, AGiBBurstFreedLocallyGoesBackAfterTheDelay) {
  PurgeDelay delay(cfg::kPurgeDelayMs);
  std::thread([] {
    std::size_t baseline = rss_bytes();
    std::vector<void*> objects = burst(4096);
    ASSERT_GE(rss_bytes(), baseline + kBurst * 9 / 10);
    for (void* p : objects) strata_free(p);
    // At once, at most kDelayedEmptyMax blocks wait for the clock.
    EXPECT_LE(rss_bytes(), baseline + cfg::kDelayedEmptyMax * cfg::kPageSize + kSlack);
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * cfg::kPurgeDelayMs + 20));
    refill_once();
    EXPECT_LE(rss_bytes(), baseline + kSlack) << "baseline " << baseline / kMiB << " MiB";
  }).join();
}

TEST(StrataPurge, AGiBBurstFreedByAnotherThreadGoesBackAfterTheDelay) {
  PurgeDelay delay(cfg::kPurgeDelayMs);
  std::size_t baseline = rss_bytes();
  std::vector<void*> objects;
  std::thread owner([&] {
    objects = burst(2048);
    std::thread([&] {
      for (void* p : objects) strata_free(p);
    }).join();
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * cfg::kPurgeDelayMs + 20));
    refill_once();
    EXPECT_LE(rss_bytes(), baseline + kSlack + objects.capacity() * sizeof(void*))
        << "baseline " << baseline / kMiB << " MiB";
  });
  owner.join();
}

TEST(StrataPurge, FreedHugeObjectsLeaveTheCacheAfterTheDelay) {
  PurgeDelay delay(50);
  // Allocated below glibc's mmap threshold (risen as after the free of a
  // mapped chunk of its upper bound): above it, the free would discard it.
  (void)md::first_free_of_its_size(cfg::kEraseUpTo);
  std::thread([] {
    md::huge_discard_cache();
    void* p = strata_malloc(64 * kMiB);
    std::memset(p, 1, 64 * kMiB);
    strata_free(p);
    EXPECT_GE(md::huge_stats().cached_bytes, 60 * kMiB) << "kept warm at first";
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    refill_once();
    EXPECT_EQ(md::huge_stats().cached_bytes, 0u);
  }).join();
}

}  // namespace

// Free chunks of the large arenas wait the delay too, then go back at the
// arena's next malloc or free (before: only once an arena held 64 MiB of them).
TEST(StrataPurge, FreedLargeChunksGoBackAfterTheDelay) {
  PurgeDelay delay(100);
  std::thread([] {
    std::vector<unsigned char*> objects = large_holes();
    // (The first free of a new big size is discarded at once, as glibc unmaps it.)
    EXPECT_GE(resident_holes(objects), kLargeHoles - 2) << "warm right after the free";
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    strata_free(strata_malloc(kLargeSize));
    EXPECT_LE(resident_holes(objects), 1u) << "gone after the delay";
    free_live(objects);
  }).join();
}

// Reused within the delay, they stay warm: no system call, no fault.
TEST(StrataPurge, LargeChunksReusedWithinTheDelayAreNotDiscarded) {
  PurgeDelay delay(60 * 1000);
  std::thread([] {
    std::vector<unsigned char*> objects = large_holes();
    std::size_t before = md::discarded_os_pages();
    for (int round = 0; round < 3; ++round) {
      for (std::size_t i = 0; i < objects.size(); i += 2)
        objects[i] = static_cast<unsigned char*>(strata_malloc(kLargeSize));
      for (std::size_t i = 0; i < objects.size(); i += 2) strata_free(objects[i]);
    }
    EXPECT_EQ(md::discarded_os_pages(), before);
    free_live(objects);
  }).join();
}

// A thread that stops using large objects gives their free chunks back at
// its next small refill after the delay.
TEST(StrataPurge, FreedLargeChunksGoBackAtASmallRefillAfterTheDelay) {
  PurgeDelay delay(100);
  std::thread([] {
    std::vector<unsigned char*> objects = large_holes();
    EXPECT_GE(resident_holes(objects), kLargeHoles - 2);
    EXPECT_GT(md::large_stats().dirty_bytes, (kLargeHoles - 2) * kLargeSize);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    refill_once();
    EXPECT_LE(resident_holes(objects), 1u);
    free_live(objects);
  }).join();
}
