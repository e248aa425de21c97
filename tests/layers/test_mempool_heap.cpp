#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <set>
#include <vector>

#include "strata/layers.hpp"
#include "util_test_heaps.hpp"

using strata::layers::MempoolHeap;
using strata::test::FailingHeap;

namespace {

// 40-byte elements (48-byte slots), 8 per chunk.
struct Element {
  std::uint64_t id;
  std::uint64_t generation;  // second word: never the free tag
  char payload[24];
};
using Pool = MempoolHeap<sizeof(Element), 8, FailingHeap>;
static_assert(strata::layers::ClearableHeap<Pool>);
static_assert(Pool::kSlotSize == 48);

Element* make(Pool& pool, std::uint64_t id) {
  auto* e = static_cast<Element*>(pool.malloc(sizeof(Element)));
  if (e != nullptr) *e = Element{id, 1, {}};
  return e;
}

std::vector<std::uint64_t> ids_in_order(Pool& pool) {
  std::vector<std::uint64_t> ids;
  pool.forEach([&](void* p) { ids.push_back(static_cast<Element*>(p)->id); });
  return ids;
}

TEST(MempoolHeap, HandsOutConsecutiveSlotsOfAFreshChunk) {
  Pool pool;
  auto* a = reinterpret_cast<char*>(make(pool, 0));
  auto* b = reinterpret_cast<char*>(make(pool, 1));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b, a + Pool::kSlotSize);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
  EXPECT_EQ(pool.mallocs, 1u);  // one chunk
  EXPECT_EQ(pool.liveObjects(), 2u);
}

TEST(MempoolHeap, ReusesTheLastFreedSlotFirst) {
  Pool pool;
  Element* a = make(pool, 0);
  Element* b = make(pool, 1);
  make(pool, 2);
  pool.free(a);
  pool.free(b);
  EXPECT_EQ(make(pool, 3), b);
  EXPECT_EQ(make(pool, 4), a);
}

TEST(MempoolHeap, TakesANewChunkWhenFullAndIteratesInChunkOrder) {
  Pool pool;
  for (std::uint64_t i = 0; i < 20; ++i) ASSERT_NE(make(pool, i), nullptr);
  EXPECT_EQ(pool.chunkCount(), 3u);
  std::vector<std::uint64_t> expected(20);
  for (std::uint64_t i = 0; i < 20; ++i) expected[i] = i;
  EXPECT_EQ(ids_in_order(pool), expected);
}

TEST(MempoolHeap, IterationSkipsFreedSlots) {
  Pool pool;
  std::vector<Element*> elements;
  for (std::uint64_t i = 0; i < 20; ++i) elements.push_back(make(pool, i));
  for (std::uint64_t i = 0; i < 20; i += 3) pool.free(elements[i]);
  std::vector<std::uint64_t> expected;
  for (std::uint64_t i = 0; i < 20; ++i)
    if (i % 3 != 0) expected.push_back(i);
  EXPECT_EQ(ids_in_order(pool), expected);
  EXPECT_EQ(pool.liveObjects(), expected.size());
}

TEST(MempoolHeap, ObjectsCanBeFreedAndAllocatedWhileIterating) {
  Pool pool;
  std::vector<Element*> elements;
  for (std::uint64_t i = 0; i < 16; ++i) elements.push_back(make(pool, i));
  std::vector<std::uint64_t> seen;
  std::uint64_t next_id = 100;
  auto it = pool.iterate();
  while (void* p = it.next()) {
    auto* e = static_cast<Element*>(p);
    seen.push_back(e->id);
    if (e->id == 2) pool.free(elements[5]);  // ahead: never visited
    if (e->id % 2 == 0 && e->id < 16) {
      pool.free(e);                         // the current one
      ASSERT_NE(make(pool, next_id++), nullptr);  // takes e's slot: behind the iterator
    }
  }
  // 0..15 without 5 (freed ahead of the iterator); the replacements reuse
  // slots already passed, so none of them is visited.
  std::vector<std::uint64_t> expected;
  for (std::uint64_t i = 0; i < 16; ++i)
    if (i != 5) expected.push_back(i);
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(pool.liveObjects(), 15u);
}

TEST(MempoolHeap, ObjectsInANewChunkAreVisitedByARunningIteration) {
  Pool pool;
  for (std::uint64_t i = 0; i < 8; ++i) make(pool, i);  // one full chunk
  std::set<std::uint64_t> seen;
  auto it = pool.iterate();
  while (void* p = it.next()) {
    auto* e = static_cast<Element*>(p);
    seen.insert(e->id);
    if (e->id == 0) make(pool, 50);  // a second chunk, after the first
  }
  EXPECT_EQ(seen.size(), 9u);
  EXPECT_TRUE(seen.count(50));
}

TEST(MempoolHeap, ClearGivesEveryChunkBack) {
  Pool pool;
  for (std::uint64_t i = 0; i < 30; ++i) make(pool, i);
  EXPECT_EQ(pool.live(), 4u);  // FailingHeap's live chunks
  pool.clear();
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.liveObjects(), 0u);
  EXPECT_TRUE(ids_in_order(pool).empty());
  ASSERT_NE(make(pool, 7), nullptr);  // usable again
  EXPECT_EQ(ids_in_order(pool), std::vector<std::uint64_t>{7});
}

TEST(MempoolHeap, TooLargeARequestIsEinval) {
  Pool pool;
  errno = 0;
  EXPECT_EQ(pool.malloc(Pool::kSlotSize + 1), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_NE(pool.malloc(Pool::kSlotSize), nullptr);
}

TEST(MempoolHeap, ParentFailureIsNullAndEnomem) {
  Pool pool;
  pool.fail_after(1);
  for (int i = 0; i < 8; ++i) ASSERT_NE(make(pool, i), nullptr);
  errno = 0;
  EXPECT_EQ(make(pool, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  pool.never_fail();
  EXPECT_NE(make(pool, 8), nullptr);
  EXPECT_EQ(pool.liveObjects(), 9u);
}

TEST(MempoolHeapDeathTest, DoubleFreeAbortsWithTheAddress) {
  Pool pool;
  Element* e = make(pool, 1);
  pool.free(e);
  EXPECT_DEATH(pool.free(e), "strata MempoolHeap: double free 0x");
}

}  // namespace
