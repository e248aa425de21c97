// The real reap's promises beyond the API: one stream for all sizes (the
// locality of a bump region), header-free objects, reuse of freed memory
// across sizes, the inline window, clear back to pure bumping, the chunk policy.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "reap_test_support.hpp"
#include "strata/layers/region/region_chunk_heap.hpp"

namespace {

using strata::test::kReapWaitBytes;
using strata::test::ScopedReap;
using strata::test::start_reusing;
using strata::test::stats_of;

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Slot of a request: the object and at least one spare byte (the next
// object's boundary tag), in 16-byte steps.
std::size_t slot_of(std::size_t size) { return (size + 16) / 16 * 16; }


TEST(ReapInternals, BeforeAnyFreeConsecutiveObjectsAreAdjacent) {
  // The locality property: objects of every size, allocated one after the
  // other, sit one after the other (up to the 16-byte alignment padding and
  // the tag byte), as in a hand-written bump region.
  ScopedReap reap;
  void* prev = strata_reap_malloc(reap, 24);
  std::size_t prev_size = 24;
  std::size_t adjacent = 0, jumps = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::size_t size = 1 + (static_cast<std::size_t>(i) * 37) % 200;  // 1..200 bytes, mixed
    void* p = strata_reap_malloc(reap, size);
    ASSERT_NE(p, nullptr);
    const std::uintptr_t gap = addr(p) - addr(prev);
    if (gap == slot_of(prev_size)) {
      ASSERT_LT(gap - prev_size, 17u) << "more than alignment padding between neighbours";
      ++adjacent;
    } else {
      ++jumps;  // the stream moved to its next chunk
    }
    prev = p;
    prev_size = size;
  }
  // ~2 MB in chunks doubling from 8 KiB: about 8 chunk changes, nothing else.
  EXPECT_LE(jumps, 10u);
  EXPECT_EQ(adjacent + jumps, 20000u);
}

TEST(ReapInternals, SmallObjectsHaveNoHeader) {
  ScopedReap reap;
  for (std::size_t size : {8u, 15u, 24u, 40u, 63u, 100u, 1000u}) {
    void* first = strata_reap_malloc(reap, size);
    void* second = strata_reap_malloc(reap, size);
    EXPECT_EQ(addr(second) - addr(first), slot_of(size)) << "objects of " << size << " bytes are not packed";
    EXPECT_EQ(strata_reap_usable_size(reap, first), slot_of(size) - 1);
  }
  // 100000 objects of 15 bytes cost barely more than 1.6 MB.
  ScopedReap dense;
  const std::size_t before = stats_of(dense).bytes_held;
  for (int i = 0; i < 100000; ++i) strata_reap_malloc(dense, 15);
  const std::size_t used = stats_of(dense).bytes_held - before;
  EXPECT_LT(used, 1600000u * 2);  // chunks double: at most half of the last chunk unused
  EXPECT_EQ(stats_of(dense).bytes_live, 1500000u);
}

TEST(ReapInternals, FreedObjectsAreReusedFirst) {
  ScopedReap reap;
  start_reusing(reap);
  void* a = strata_reap_malloc(reap, 40);
  void* b = strata_reap_malloc(reap, 40);
  strata_reap_malloc(reap, 8);  // so that neither is the stream's last object
  strata_reap_free(reap, a);
  strata_reap_free(reap, b);
  EXPECT_EQ(strata_reap_malloc(reap, 33), b);  // same slot length, last freed first
  EXPECT_EQ(strata_reap_malloc(reap, 47), a);
  void* big = strata_reap_malloc(reap, 10000);
  strata_reap_malloc(reap, 8);
  strata_reap_free(reap, big);
  EXPECT_EQ(strata_reap_malloc(reap, 9000), big);  // a freed large slot that fits
}

TEST(ReapInternals, AFreedObjectServesASmallerRequestAndTheRestToo) {
  ScopedReap reap;
  start_reusing(reap);
  auto* big = static_cast<char*>(strata_reap_malloc(reap, 140));  // a 144-byte slot
  void* guard = strata_reap_malloc(reap, 8);
  strata_reap_free(reap, big);
  void* smaller = strata_reap_malloc(reap, 48);  // a 64-byte slot: the front of the freed one
  EXPECT_EQ(smaller, big);
  EXPECT_EQ(strata_reap_usable_size(reap, smaller), 63u);
  void* rest = strata_reap_malloc(reap, 10);  // bumped from the 80 bytes left
  EXPECT_EQ(rest, big + 64);
  EXPECT_EQ(strata_reap_usable_size(reap, rest), 15u);
  EXPECT_EQ(stats_of(reap).objects_live, 3u);
  strata_reap_free(reap, guard);
  strata_reap_free(reap, rest);
  strata_reap_free(reap, smaller);
  EXPECT_EQ(stats_of(reap).objects_live, 0u);
  EXPECT_EQ(stats_of(reap).bytes_live, 0u);
}

TEST(ReapInternals, InlineWindowClosesWhileFreedObjectsWaitAndReopens) {
  ScopedReap reap;
  const auto* head = reinterpret_cast<const strata_reap_head*>(reap.reap);
  EXPECT_EQ(head->version, unsigned{STRATA_REAP_HEAD_VERSION});
  strata_reap_malloc(reap, 10);  // the first allocation opens the window
  if (head->flags & STRATA_REAP_SLOW_CHECKED) GTEST_SKIP() << "checked mode (Valgrind or STRATA_REAP_CHECK)";
  EXPECT_EQ(head->flags, 0u);
  EXPECT_GT(head->limit, head->bump);
  EXPECT_GT(head->limit - head->bump, 4080u) << "the window spans the run (the inline path bounds slots itself)";
  void* big = strata_reap_malloc(reap, 4080);  // a slot of 4096 > 4080: its tag would not fit
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(static_cast<const unsigned char*>(big)[-1], 0u) << "larger slots are large objects (tag 0), made out of line";
  EXPECT_GE(strata_reap_usable_size(reap, big), 4080u);
  void* p = strata_reap_malloc(reap, 30);
  strata_reap_malloc(reap, 8);  // p is not the stream's last object
  strata_reap_free(reap, p);
  EXPECT_EQ(head->flags, 0u) << "fewer than kReapWaitBytes wait: the stream bumps on";
  EXPECT_NE(strata_reap_malloc(reap, 30), p);
  void* waits = strata_reap_malloc(reap, kReapWaitBytes - 64);  // with p: 32 bytes short of the bound
  strata_reap_malloc(reap, 8);
  strata_reap_free(reap, waits);
  EXPECT_EQ(head->flags, 0u) << "still short of kReapWaitBytes";
  void* more = strata_reap_malloc(reap, 40);
  strata_reap_malloc(reap, 8);
  strata_reap_free(reap, more);  // now kReapWaitBytes wait
  EXPECT_EQ(head->flags, unsigned{STRATA_REAP_SLOW_FREED});
  EXPECT_EQ(head->limit, head->bump) << "a closed window must fail the inline test";
  EXPECT_EQ(strata_reap_malloc(reap, 30), p);
  EXPECT_EQ(strata_reap_malloc(reap, 40), more);
  EXPECT_EQ(head->flags, unsigned{STRATA_REAP_SLOW_FREED}) << "an object still waits";
  EXPECT_EQ(strata_reap_malloc(reap, kReapWaitBytes - 64), waits);
  EXPECT_EQ(head->flags, 0u) << "nothing waits any more: bumping again";
  EXPECT_GT(head->limit, head->bump);
}

TEST(ReapInternals, AFreedObjectWaitsUntilTheRunIsUsedUp) {
  // Fewer than kReapWaitBytes wait: the stream bumps on, and takes the freed
  // object before it asks for its next run.
  ScopedReap reap;
  void* p = strata_reap_malloc(reap, 30);
  strata_reap_malloc(reap, 8);
  strata_reap_free(reap, p);
  const std::size_t held = stats_of(reap).bytes_held;
  int bumped = 0;
  for (void* q = strata_reap_malloc(reap, 30); q != p; q = strata_reap_malloc(reap, 30)) ASSERT_LT(++bumped, 100000);
  EXPECT_GT(bumped, 100) << "the stream bumped on through its run";
  EXPECT_EQ(stats_of(reap).bytes_held, held) << "the freed object came back before any more memory";
  EXPECT_EQ(stats_of(reap).objects_live, static_cast<std::size_t>(bumped) + 2);
}

TEST(ReapInternals, AFreedSlotLessThanTwiceTheRequestWaitsForItsOwnSize) {
  ScopedReap reap;
  start_reusing(reap);
  const auto* head = reinterpret_cast<const strata_reap_head*>(reap.reap);
  auto* big = static_cast<char*>(strata_reap_malloc(reap, 64));  // an 80-byte slot
  strata_reap_malloc(reap, 8);
  strata_reap_free(reap, big);
  void* smaller = strata_reap_malloc(reap, 48);  // a 64-byte slot: bumped, the 80-byte one waits
  EXPECT_NE(smaller, big);
  EXPECT_EQ(strata_reap_usable_size(reap, smaller), 63u);
  if (!(head->flags & STRATA_REAP_SLOW_CHECKED)) {
    EXPECT_EQ(head->flags, 0u) << "the window is open until the next free";
    EXPECT_GT(head->limit, head->bump);
  }
  EXPECT_EQ(stats_of(reap).objects_live, 2u);
  EXPECT_EQ(stats_of(reap).bytes_live, 63u + 15u);
  void* other = strata_reap_malloc(reap, 48);  // bumped too (out of line in a checked reap: same answer)
  strata_reap_free(reap, smaller);             // not the last object: it waits, and the window closes
  EXPECT_EQ(strata_reap_malloc(reap, 64), big) << "a request of its own size takes it";
  strata_reap_free(reap, other);
}

TEST(ReapInternals, TheRestOfACutSlotIsTheInlineWindow) {
  ScopedReap reap;
  start_reusing(reap);
  const auto* head = reinterpret_cast<const strata_reap_head*>(reap.reap);
  auto* big = static_cast<char*>(strata_reap_malloc(reap, 1000));  // a 1008-byte slot
  if (head->flags & STRATA_REAP_SLOW_CHECKED) GTEST_SKIP() << "checked mode (Valgrind or STRATA_REAP_CHECK)";
  strata_reap_malloc(reap, 8);
  strata_reap_free(reap, big);
  EXPECT_EQ(head->limit, head->bump);
  EXPECT_EQ(strata_reap_malloc(reap, 100), big);  // a 112-byte slot cut from the freed one
  EXPECT_EQ(head->flags, 0u);
  EXPECT_EQ(head->bump, reinterpret_cast<std::uintptr_t>(big) + 112);
  EXPECT_EQ(head->limit, reinterpret_cast<std::uintptr_t>(big) + 1008) << "the window spans the rest";
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(strata_reap_malloc(reap, 100), big + 112 * i);
  EXPECT_EQ(stats_of(reap).objects_live, 10u);
  EXPECT_EQ(stats_of(reap).bytes_live, 9 * 111u + 15u);
  void* next = strata_reap_malloc(reap, 200);  // nothing left of the rest: the stream's own run
  EXPECT_GT(static_cast<char*>(next), big + 1008);
  EXPECT_EQ(stats_of(reap).objects_live, 11u);
}

TEST(ReapInternals, FreeingTheStreamsLastObjectUnbumpsIt) {
  // As an obstack frees its top object: nothing waits, the window stays open,
  // and the statistics agree whether or not they had counted the object.
  ScopedReap reap;
  const auto* head = reinterpret_cast<const strata_reap_head*>(reap.reap);
  void* keep = strata_reap_malloc(reap, 24);
  if (head->flags & STRATA_REAP_SLOW_CHECKED) GTEST_SKIP() << "checked mode (Valgrind or STRATA_REAP_CHECK)";
  void* a = strata_reap_malloc(reap, 40);
  void* b = strata_reap_malloc(reap, 100);
  EXPECT_EQ(stats_of(reap).objects_live, 3u);  // walks a and b
  strata_reap_free(reap, b);
  strata_reap_free(reap, a);  // now the last one
  EXPECT_EQ(head->flags, 0u) << "nothing waits: the window stays open";
  EXPECT_EQ(head->bump, reinterpret_cast<std::uintptr_t>(a));
  EXPECT_EQ(stats_of(reap).objects_live, 1u);
  EXPECT_EQ(stats_of(reap).bytes_live, strata_reap_usable_size(reap, keep));
  EXPECT_EQ(strata_reap_malloc(reap, 70), a) << "the next object takes the place back";
  void* c = strata_reap_malloc(reap, 8);
  strata_reap_free(reap, c);  // never walked before it goes
  EXPECT_EQ(stats_of(reap).objects_live, 2u);
  EXPECT_EQ(stats_of(reap).bytes_live, strata_reap_usable_size(reap, keep) + strata_reap_usable_size(reap, a));
}

TEST(ReapInternals, UnbumpingBackThroughAnEndedLoanKeepsTheStatistics) {
  // Found by fuzz_reap: a loan (the rest of a cut slot) lies inside the own
  // run; once it ended, freeing the run's top objects unbumps the stream down
  // through the loan's objects, which must have been counted already (or the
  // next object there was counted twice).
  ScopedReap reap;
  start_reusing(reap);  // a's free closes the window, so that c cuts a
  void* a = strata_reap_malloc(reap, 24);       // a 32-byte slot
  void* b = strata_reap_malloc(reap, 32);       // 48
  strata_reap_free(reap, a);
  void* c = strata_reap_malloc(reap, 2);        // a cut to 16; its rest lent
  void* d = strata_reap_malloc(reap, 6);        // fills the loan
  void* top = strata_reap_malloc(reap, 100);    // no room in the loan: it ends
  strata_reap_free(reap, c);
  strata_reap_free(reap, top);                  // the stream's last objects go,
  strata_reap_free(reap, b);                    // down into the loan's
  strata_reap_free(reap, d);
  void* e = strata_reap_malloc(reap, 50);
  void* f = strata_reap_malloc(reap, 32);
  ASSERT_NE(e, nullptr);
  ASSERT_NE(f, nullptr);
  const std::uintptr_t e_end = addr(e) + strata_reap_usable_size(reap, e);
  const std::uintptr_t f_end = addr(f) + strata_reap_usable_size(reap, f);
  EXPECT_TRUE(e_end <= addr(f) || f_end <= addr(e)) << "two live objects overlap";
  const strata_reap_stats s = stats_of(reap);
  EXPECT_EQ(s.objects_live, 2u);
  EXPECT_EQ(s.bytes_live, strata_reap_usable_size(reap, e) + strata_reap_usable_size(reap, f));
}

TEST(ReapInternals, ReallocGrowsTheStreamsLastObjectInPlace) {
  // As an obstack grows its top object: the object the stream bumped last
  // grows into the space after it; any other object moves. A checked reap
  // (Valgrind, ASan, STRATA_REAP_CHECK) records each object's size, so there
  // every growth moves.
  ScopedReap reap;
  const auto* head = reinterpret_cast<const strata_reap_head*>(reap.reap);
  auto* p = static_cast<unsigned char*>(strata_reap_malloc(reap, 10));
  const bool checked = (head->flags & STRATA_REAP_SLOW_CHECKED) != 0;
  for (int i = 0; i < 10; ++i) p[i] = static_cast<unsigned char>(i + 1);
  EXPECT_EQ(stats_of(reap).objects_live, 1u);  // the statistics have counted p's old length
  auto* q = static_cast<unsigned char*>(strata_reap_realloc(reap, p, 100));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(stats_of(reap).bytes_live, strata_reap_usable_size(reap, q)) << "statistics missed the growth";
  if (checked) {
    EXPECT_NE(q, p);
  } else {
    EXPECT_EQ(q, p) << "the last object must grow in place";
  }
  for (int i = 0; i < 10; ++i) ASSERT_EQ(q[i], i + 1);
  ASSERT_GE(strata_reap_usable_size(reap, q), 100u);
  for (int i = 10; i < 100; ++i) q[i] = static_cast<unsigned char>(i + 1);
  auto* next = static_cast<unsigned char*>(strata_reap_malloc(reap, 30));
  if (!checked) {
    EXPECT_EQ(addr(next), addr(q) + slot_of(100)) << "the stream goes on after the grown object";
  }
  std::memset(next, 0xee, 30);
  auto* r = static_cast<unsigned char*>(strata_reap_realloc(reap, q, 200));  // no longer last: moves
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r, q);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(r[i], i + 1);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(next[i], 0xee) << "growth in place overwrote the next object";
  auto* s = static_cast<unsigned char*>(strata_reap_realloc(reap, r, 5000));  // past a tag's reach: moves
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(s[i], i + 1);
  EXPECT_EQ(stats_of(reap).objects_live, 2u);
  EXPECT_EQ(stats_of(reap).bytes_live, strata_reap_usable_size(reap, s) + strata_reap_usable_size(reap, next));
}

TEST(ReapInternals, ClearReturnsToPureBumping) {
  ScopedReap reap;
  std::vector<void*> objects;
  for (int i = 0; i < 100; ++i) objects.push_back(strata_reap_malloc(reap, 32));
  for (void* p : objects) strata_reap_free(reap, p);  // free lists full
  strata_reap_clear(reap);
  void* first = strata_reap_malloc(reap, 32);
  for (int i = 1; i < 50; ++i) {
    void* next = strata_reap_malloc(reap, 32);
    ASSERT_EQ(addr(next), addr(first) + 48u * static_cast<unsigned>(i)) << "not bumping after clear";
  }
}

TEST(ReapInternals, ChunksGrowGeometrically) {
  ScopedReap reap;
  for (int i = 0; i < (1 << 18); ++i) strata_reap_malloc(reap, 64);  // 16 MiB
  const strata_reap_stats s = stats_of(reap);
  EXPECT_LE(s.chunks, 13u) << "16 MiB in chunks doubling from 8 KiB takes about 11";
  EXPECT_GE(s.bytes_held, s.bytes_live);
}

TEST(ReapInternals, RepeatedRoundsReuseTheSameChunks) {
  ScopedReap reap;
  std::size_t held[5] = {};
  void* first[5] = {};
  for (int round = 0; round < 5; ++round) {
    first[round] = strata_reap_malloc(reap, 32);
    for (int i = 0; i < 60000; ++i) strata_reap_malloc(reap, 8 + (i % 57));
    held[round] = stats_of(reap).bytes_held;
    strata_reap_clear(reap);
    EXPECT_EQ(stats_of(reap).bytes_held, held[round]) << "clear kept what the round used";
  }
  for (int round = 1; round < 5; ++round) {
    EXPECT_EQ(held[round], held[0]) << "round " << round << " mapped more memory";
    EXPECT_EQ(first[round], first[0]) << "round " << round << " did not start at the same place";
  }
}

TEST(ReapInternals, ChunksSmallerRoundsDidNotNeedGoBackAfterAWhile) {
  ScopedReap reap;
  const std::size_t empty = stats_of(reap).bytes_held;
  for (int i = 0; i < 200000; ++i) strata_reap_malloc(reap, 48);  // ~10 MB
  strata_reap_clear(reap);
  const std::size_t big = stats_of(reap).bytes_held;
  EXPECT_GT(big, empty + 9000000);
  for (std::uint32_t round = 1; round < strata::layers::kIdleRoundsKept; ++round) {
    strata_reap_malloc(reap, 48);  // small rounds
    strata_reap_clear(reap);
    ASSERT_EQ(stats_of(reap).bytes_held, big) << "a big round may come back: its chunks wait (round " << round << ")";
  }
  strata_reap_malloc(reap, 48);
  strata_reap_clear(reap);
  EXPECT_LT(stats_of(reap).bytes_held, empty + (64u << 10)) << "chunks idle for kIdleRoundsKept rounds were kept";
  EXPECT_LE(stats_of(reap).chunks, 2u);
}

TEST(ReapInternals, HugeObjectsGoBackToTheSystemOnFree) {
  ScopedReap reap;
  const std::size_t before = stats_of(reap).bytes_held;
  void* p = strata_reap_malloc(reap, 4u << 20);
  EXPECT_GE(stats_of(reap).bytes_held, before + (4u << 20));
  strata_reap_free(reap, p);
  EXPECT_EQ(stats_of(reap).bytes_held, before);
}

TEST(ReapInternals, DestroyedReapsGiveMemoryBack) {
  // A reap per request: creating and destroying many must not accumulate.
  for (int i = 0; i < 20000; ++i) {
    strata_reap* r = strata_reap_create(nullptr);
    ASSERT_NE(r, nullptr);
    for (int j = 0; j < 20; ++j) strata_reap_malloc(r, 100);
    strata_reap_destroy(r);
  }
}

}  // namespace
