// Borrowed slots (config.hpp, kBorrowedSlotsMax): a heap's class without a
// block takes its first objects from a bigger class's front block, on a page
// already resident, so that a program making a handful of objects of many
// sizes does not touch an OS page for each size. Each test runs in a thread
// of its own, which never exits: a fresh heap, whose classes have no blocks
// yet (a heap abandoned by an exiting thread would be adopted, blocks and all).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <thread>
#include <vector>

#include "config.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;

std::uintptr_t block_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) & ~(cfg::kPageSize - 1); }

// Run f in a new thread, which then stays (detached, asleep) to the end.
template <class F>
void in_fresh_heap(F f) {
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread([f, &done] {
    f();
    done.set_value();
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }).detach();
  finished.wait();
}

TEST(BorrowedSlots, AClassWithoutBlocksTakesABiggerClassSlotOnAResidentPage) {
  in_fresh_heap([] {
    void* host = strata_malloc(400);  // the 400-byte class's front block, its first page touched
    void* p = strata_malloc(272);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(block_of(p), block_of(host)) << "the 272-byte object lies in the 400-byte class's block";
    EXPECT_EQ(strata_usable_size(p), strata_usable_size(host));
    // Freed, it goes back to the host's block: its next object is that slot.
    strata_free(p);
    EXPECT_EQ(strata_malloc(400), p);
  });
}

TEST(BorrowedSlots, PastTheLimitAClassTakesABlockOfItsOwn) {
  in_fresh_heap([] {
    std::vector<void*> borrowed;
    borrowed.reserve(2 * cfg::kBorrowedSlotsMax);  // one allocation, before the host's
    void* host = strata_malloc(160);               // its first OS page holds the host and every borrowed slot
    for (std::uint32_t i = 0; i < cfg::kBorrowedSlotsMax; ++i) {
      borrowed.push_back(strata_malloc(80));
      EXPECT_EQ(block_of(borrowed.back()), block_of(host)) << "object " << i;
    }
    void* own = strata_malloc(80);
    EXPECT_NE(block_of(own), block_of(host));
    EXPECT_EQ(strata_usable_size(own), 80u);
    // The class has a block now: no more borrowing, even once it is free.
    strata_free(own);
    for (void* p : borrowed) strata_free(p);
    void* again = strata_malloc(80);
    EXPECT_EQ(strata_usable_size(again), 80u);
  });
}

TEST(BorrowedSlots, ABorrowedSlotKeepsTheClassAlignment) {
  in_fresh_heap([] {
    // The 144-byte class has a block, the 256-byte one none: a 128-byte
    // object must not take a 144-byte slot (allocate_aligned counts on the
    // 128-byte class's slots being 128-aligned).
    void* warm = strata_malloc(144);
    void* p = strata_aligned_alloc(128, 128);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 128, 0u);
    EXPECT_NE(block_of(p), block_of(warm));
  });
}

TEST(BorrowedSlots, NoSlotOnAPageNotYetTouched) {
  in_fresh_heap([] {
    // Fill the 1024-byte class's first OS page exactly: its next object
    // would start a fresh page, which borrowing must not touch.
    std::vector<void*> host;
    for (std::size_t i = 0; i < cfg::kOsPageSize / 1024; ++i) host.push_back(strata_malloc(1024));
    void* p = strata_malloc(768);
    EXPECT_NE(block_of(p), block_of(host.front()));
  });
}

}  // namespace
