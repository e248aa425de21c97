// Idle front blocks (config.hpp, kIdleFrontScanMs): a class's front block
// stays when it empties, so that a loop of one malloc and one free keeps it
// warm; but one found empty at two of its heap's looks (at refills,
// kIdleFrontScanMs apart) gives its pages back and starts afresh. Before,
// the classes a program used only for a while kept a block each, resident,
// to the end.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "config.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;

std::uintptr_t block_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) & ~(cfg::kPageSize - 1); }

// Of the block's OS pages, how many are resident.
std::size_t resident_pages(std::uintptr_t block) {
  unsigned char pages[cfg::kPageSize / cfg::kOsPageSize];
  if (mincore(reinterpret_cast<void*>(block), cfg::kPageSize, pages) != 0) return 0;
  std::size_t n = 0;
  for (unsigned char page : pages) n += page & 1;
  return n;
}

// Long enough for the heap's clock (coarse: a few ms a tick) to see a look's period pass.
void wait_a_look() { std::this_thread::sleep_for(std::chrono::milliseconds(3 * cfg::kIdleFrontScanMs + 10)); }

// Fill most of one block of `size` objects, written, and free them all but
// `keep`: the class's front block, every OS page of it touched.
std::uintptr_t front_block(std::size_t size, std::size_t keep, std::vector<void*>& kept) {
  std::vector<void*> objects(cfg::kPageSize / size - 4);
  for (auto& p : objects) {
    p = strata_malloc(size);
    std::memset(p, 0x5a, size);
  }
  std::uintptr_t block = block_of(objects.front());
  for (void* p : objects) EXPECT_EQ(block_of(p), block) << "the objects span one block";
  for (std::size_t i = 0; i < objects.size(); ++i) (i < keep ? kept.push_back(objects[i]) : strata_free(objects[i]));
  return block;
}

// At least one refill (the heap looks at its front blocks there): more
// objects of `size` than a block holds, whatever the class's blocks held.
void refill(std::size_t size, std::vector<void*>& kept) {
  for (std::size_t i = 0; i <= cfg::kPageSize / size; ++i) kept.push_back(strata_malloc(size));
}

// Two looks, a look's period apart, each after a wait.
void two_looks(std::vector<void*>& kept) {
  wait_a_look();
  refill(1000, kept);
  wait_a_look();
  refill(2000, kept);
}

TEST(StrataIdleFronts, AnIdleEmptyFrontBlockGivesItsPagesBack) {
  std::thread([] {
    std::vector<void*> kept;
    std::uintptr_t block = front_block(320, 0, kept);
    ASSERT_GE(resident_pages(block), cfg::kPageSize / cfg::kOsPageSize - 2);
    two_looks(kept);
    EXPECT_EQ(resident_pages(block), 0u);
    void* again = strata_malloc(320);  // still the class's front, afresh
    EXPECT_EQ(block_of(again), block);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again), block);
    kept.push_back(again);
    for (void* p : kept) strata_free(p);
  }).join();
}

TEST(StrataIdleFronts, AFrontBlockInUseKeepsItsPages) {
  std::thread([] {
    std::vector<void*> kept;
    std::uintptr_t block = front_block(320, 1, kept);
    std::size_t before = resident_pages(block);
    two_looks(kept);
    EXPECT_EQ(resident_pages(block), before);
    for (void* p : kept) strata_free(p);
  }).join();
}

TEST(StrataIdleFronts, AFrontBlockEmptyAtOneLookOnlyKeepsItsPages) {
  std::thread([] {
    std::vector<void*> kept;
    std::uintptr_t block = front_block(320, 0, kept);
    std::size_t before = resident_pages(block);
    wait_a_look();
    refill(1000, kept);               // the first look: empty
    void* busy = strata_malloc(320);  // in use at the second
    wait_a_look();
    refill(2000, kept);
    EXPECT_EQ(resident_pages(block), before);
    strata_free(busy);
    for (void* p : kept) strata_free(p);
  }).join();
}

}  // namespace
