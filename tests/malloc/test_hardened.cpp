// The hardened build (STRATA_MALLOC_HARDENED, libstrata-hardened.so): every
// hardening policy of config.hpp shown firing with its message, and what it
// changes for correct programs (usable sizes, zeroed frees, delayed reuse).
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <csignal>
#include <cstdlib>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "allocator.hpp"
#include "config.hpp"
#include "fast_paths.hpp"
#include "size_classes.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;
static_assert(cfg::kHardened, "this test links strata_core_hardened");

std::string line(const char* what, const void* p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "^strata: %s %p\n$", what, p);
  return buf;
}

// Free `count` objects of `size` so that everything freed before them leaves
// the calling thread's quarantine.
void push_through_quarantine(std::size_t size) {
  std::vector<void*> filler(cfg::kQuarantineSlots);
  for (auto& f : filler) f = strata_malloc(size);
  for (auto* f : filler) strata_free(f);
}

std::vector<void*> allocate_each(std::size_t count, std::size_t size) {
  std::vector<void*> objects(count);
  for (auto& o : objects) o = strata_malloc(size);
  return objects;
}

using StrataHardenedDeathTest = testing::Test;

TEST_F(StrataHardenedDeathTest, CanaryAfterASmallObject) {
  // Requests that end where their slot's tail word starts: a 1-byte overflow
  // lands in the tail's low byte, which must decode to zero whatever the key.
  for (std::size_t size : {8, 24, 40, 120}) {
    for (char byte : {'x', '\0', '\x01'}) {
      auto* p = static_cast<char*>(strata_malloc(size));
      ASSERT_EQ(strata_usable_size(p), size) << "the slot's last word is the canary";
      char kept = p[size];
      p[size] = static_cast<char>(kept ^ byte ^ 0x5a);  // one byte past the object, changed
      EXPECT_DEATH(strata_free(p), line("heap overflow past", p));
      p[size] = kept;
      strata_free(p);
    }
  }
}

TEST_F(StrataHardenedDeathTest, OneByteOverflowIntoTheSlack) {
  // 32 bytes take a 48-byte slot: bytes 32..39 are slack before the tail word.
  auto* p = static_cast<char*>(strata_malloc(32));
  ASSERT_EQ(strata_usable_size(p), 32u) << "usable up to the request, not the slot";
  p[32] = 'x';
  EXPECT_DEATH(strata_free(p), line("heap overflow past", p));
  p[32] = 0;
  strata_free(p);
}

TEST_F(StrataHardenedDeathTest, OneByteOverflowWhateverTheSlack) {
  // Requests of 25 to 40 bytes share the 48-byte class: slack 15 down to 0
  // bytes before the tail word (free masks the slack word by the slack's
  // length, without a branch).
  for (std::size_t size = 25; size <= 40; ++size) {
    auto* p = static_cast<char*>(strata_malloc(size));
    std::memset(p, 0x7e, size);  // every byte of the request: no alarm
    p[size] ^= 0x21;
    EXPECT_DEATH(strata_free(p), line("heap overflow past", p)) << size;
    p[size] ^= 0x21;
    strata_free(p);
  }
}

TEST_F(StrataHardenedDeathTest, PowerOfTwoRequestsTakeASlotOnlyTheTailBigger) {
  // The hardened classes above 512 B are the default's plus 16 bytes: a
  // request of 1024 takes a 1040-byte slot (not 1152), and the tail still
  // follows it, so a 1-byte overflow is seen.
  namespace md = strata::malloc_detail;
  for (std::size_t size : {512, 768, 1024, 2048, 4096}) {
    EXPECT_EQ(md::kClassSize[md::class_of(size + cfg::kCanaryBytes)], size + 16) << size;
    auto* p = static_cast<char*>(strata_malloc(size));
    ASSERT_EQ(strata_usable_size(p), size);
    std::memset(p, 0x3c, size);
    p[size] ^= 0x44;
    EXPECT_DEATH(strata_free(p), line("heap overflow past", p)) << size;
    p[size] ^= 0x44;
    strata_free(p);
  }
}

// malloc(0) answers from the zero area: no byte there can be read or
// written, each address comes once, and a second free is named.
// A fault: the signal itself, or a sanitizer's SEGV report (ASan's and TSan's handlers exit instead).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EXPECT_NO_ACCESS(statement) EXPECT_DEATH(statement, "SEGV")
#else
#define EXPECT_NO_ACCESS(statement) EXPECT_EXIT(statement, testing::KilledBySignal(SIGSEGV), "")
#endif

TEST_F(StrataHardenedDeathTest, ZeroSizeObjectsHaveNoAccess) {
  auto* p = static_cast<char*>(strata_malloc(0));
  auto* q = static_cast<char*>(strata_malloc(0));
  ASSERT_NE(p, nullptr);
  ASSERT_NE(p, q);
  EXPECT_EQ(strata_usable_size(p), 0u);
  EXPECT_NO_ACCESS(*static_cast<volatile char*>(p) = 'x');
  EXPECT_NO_ACCESS((void)*static_cast<volatile char*>(q));
  strata_free(p);
  EXPECT_DEATH(strata_free(p), line("double free of", p));
  EXPECT_DEATH(strata_free(p + 16 * 1000000), line("invalid free of", p + 16 * 1000000));  // never handed out
  auto* r = static_cast<char*>(strata_realloc(q, 24));  // nothing to copy; q is freed
  ASSERT_NE(r, nullptr);
  EXPECT_DEATH(strata_free(q), line("double free of", q));
  strata_free(r);
}

TEST(StrataHardened, ReallocInPlaceMovesTheEndOfTheRequest) {
  auto* p = static_cast<char*>(strata_malloc(100));
  std::memset(p, 0x11, 100);
  auto* q = static_cast<char*>(strata_realloc(p, 90));
  ASSERT_EQ(q, p) << "a close smaller size stays in its slot";
  EXPECT_EQ(strata_usable_size(q), 90u);
  EXPECT_EQ(q[89], 0x11);
  q = static_cast<char*>(strata_realloc(q, 104));  // grows in the same slot
  ASSERT_EQ(q, p);
  EXPECT_EQ(strata_usable_size(q), 104u);
  std::memset(q, 0x22, 104);
  strata_free(q);  // the slack the shrink gave up was zeroed: no alarm
}

TEST_F(StrataHardenedDeathTest, WriteAfterFreeSeenAtProcessExit) {
  // The program ends before the object leaves the quarantine: the exit checks it.
  auto* p = static_cast<char*>(strata_malloc(32));
  EXPECT_EXIT(
      {
        strata_free(p);
        p[20] = 1;
        std::exit(0);
      },
      testing::KilledBySignal(SIGABRT), line("write after free of", p));
  strata_free(p);
}

TEST_F(StrataHardenedDeathTest, WriteAfterFreeSeenAtThreadExit) {
  EXPECT_DEATH(std::thread([] {
                 auto* p = static_cast<char*>(strata_malloc(32));
                 strata_free(p);
                 p[0] = 1;
               }).join(),
               "^strata: write after free of 0x[0-9a-f]+\n$");
}

// Objects of one class, the first of which the test frees.
std::vector<void*> block_with_freed_first(std::size_t size) {
  std::vector<void*> objects(5 * cfg::kQuarantineSlots);
  for (auto& o : objects) o = strata_malloc(size);
  return objects;
}
// Every other object after the first: enough leave the quarantine to put the
// first one's block back in use with the first on its free list, while half
// of the block stays live (so it is never retired and bumped through afresh).
void free_every_other(const std::vector<void*>& objects) {
  for (std::size_t i = 1; i < objects.size(); i += 2) strata_free(objects[i]);
}

TEST_F(StrataHardenedDeathTest, WriteAfterFreeSeenOnReuse) {
  std::vector<void*> objects = block_with_freed_first(64);
  auto* p = static_cast<char*>(objects[0]);
  strata_free(p);
  free_every_other(objects);  // p leaves the quarantine (checked there) for its free list
  p[40] = 1;                  // the object is zero now; this write is the bug
  EXPECT_DEATH(
      {
        for (int i = 0; i < 100000; ++i) (void)strata_malloc(64);
      },
      line("write after free of", p));
  p[40] = 0;  // the death was the child's: mend this process's heap
}

TEST_F(StrataHardenedDeathTest, ForgedFreeListLink) {
  // Objects pushed out of the quarantine are on their block's free list; an
  // overflow that rewrites one's link is caught when malloc follows it.
  std::vector<void*> objects = block_with_freed_first(200);
  auto* p = static_cast<void**>(objects[0]);
  strata_free(p);
  free_every_other(objects);
  void* link = p[0];
  p[0] = reinterpret_cast<void*>(0x4141414141414141);
  EXPECT_DEATH(
      {
        for (int i = 0; i < 100000; ++i) (void)strata_malloc(200);
      },
      line("corrupted free list at", p));
  p[0] = link;  // the death was the child's: mend this process's heap
}

TEST_F(StrataHardenedDeathTest, DoubleFreeWhileQuarantined) {
  void* p = strata_malloc(64);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), line("double free of", p));
}

TEST_F(StrataHardenedDeathTest, SlotStartThatWasNeverHandedOut) {
  auto* p = static_cast<char*>(strata_malloc(2000));  // a fresh block of its class
  strata_free(strata_malloc(2000));  // a free in the same segment: later ones skip the area map
  char* unreached = p + 2048 * 20;
  EXPECT_DEATH(strata_free(unreached), line("invalid free of", unreached));
  strata_free(p);
}

// free reads a segment inside the free gate without asking the area map
// first: an aligned block takes any pointer into an object for the object,
// but not an unaligned one; and a pointer into a large region is no small
// object.
TEST_F(StrataHardenedDeathTest, UnalignedPointerIntoAnAlignedObject) {
  // Padded slots of 352 bytes: all but the first few objects start past
  // their slot's start, and the block takes interior pointers.
  std::vector<char*> objects(4);
  for (auto& o : objects) o = static_cast<char*>(strata_aligned_alloc(256, 100));
  char* p = objects.back();
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  EXPECT_DEATH(strata_free(p + 1), line("invalid free of", p + 1));
  EXPECT_DEATH(strata_free(p + 8), line("invalid free of", p + 8));
  for (char* o : objects) strata_free(o);
  auto* big = static_cast<char*>(strata_malloc(100000));
  EXPECT_DEATH(strata_free(big + 16), "invalid free of");
  strata_free(big);
}

TEST_F(StrataHardenedDeathTest, PointerNoSegmentHoldsIsReportedNotAFault) {
  int on_stack[8];
  static char global[64];
  strata_free(strata_malloc(64));  // the thread's free now knows a small segment: no shortcut for others
  EXPECT_DEATH(strata_free(on_stack + 4), line("invalid free of", on_stack + 4));
  EXPECT_DEATH(strata_free(global + 16), line("invalid free of", global + 16));
}

TEST_F(StrataHardenedDeathTest, SizedFreeWithTheWrongSize) {
  void* small = strata_malloc(100);
  void* large = strata_malloc(50000);
  EXPECT_DEATH(strata::malloc_detail::deallocate_sized(small, 300, 0), line("wrong size in sized free of", small));
  EXPECT_DEATH(strata::malloc_detail::deallocate_sized(small, 20, 0), line("wrong size in sized free of", small));
  EXPECT_DEATH(strata::malloc_detail::deallocate_sized(large, 10000, 0), line("wrong size in sized free of", large));
  strata::malloc_detail::deallocate_sized(small, 100, 0);
  strata::malloc_detail::deallocate_sized(large, 50000, 0);
}

// The same where free's inline path takes the sized free (a segment the
// thread's frees know, by the owner and by another thread with a heap): the
// size is checked against the one the tail records, with free's own checks.
TEST_F(StrataHardenedDeathTest, SizedFreeInAKnownSegment) {
  strata_free(strata_malloc(100));  // the segment is known now
  auto* small = static_cast<char*>(strata_malloc(100));
  EXPECT_DEATH(strata::malloc_detail::deallocate_sized(small, 300, 0), line("wrong size in sized free of", small));
  EXPECT_DEATH(strata::malloc_detail::deallocate_sized(small, 20, 0), line("wrong size in sized free of", small));
  small[100] = 1;  // an overflow is still named one
  EXPECT_DEATH(strata::malloc_detail::deallocate_sized(small, 100, 0), line("heap overflow past", small));
  small[100] = 0;
  strata::malloc_detail::deallocate_sized(small, 100, 0);
  EXPECT_DEATH(strata::malloc_detail::deallocate_sized(small, 100, 0), line("double free of", small));
  // Another thread with a heap and the segment known: both checks there too.
  auto* remote = static_cast<char*>(strata_malloc(40));
  void* first = strata_malloc(40);
  void* second = strata_malloc(40);
  std::thread([remote, first, second] {
    strata_free(first);  // the thread's heap and the segment known: the inline path from here on
    strata_free(second);
    EXPECT_DEATH(strata::malloc_detail::deallocate_sized(remote, 100, 0), line("wrong size in sized free of", remote));
    strata::malloc_detail::deallocate_sized(remote, 40, 0);
  }).join();
}

// C++'s aligned sized delete of large and huge objects: the size as for
// small ones, and the alignment must be the object's.
TEST_F(StrataHardenedDeathTest, AlignedSizedFreeOfBigObjects) {
  for (std::size_t size : {std::size_t{100000}, std::size_t{5} << 20}) {
    void* p = strata_aligned_alloc(64, size);
    ASSERT_NE(p, nullptr);
    EXPECT_DEATH(strata::malloc_detail::deallocate_sized(p, 50, 64), line("wrong size in sized free of", p)) << size;
    EXPECT_DEATH(strata::malloc_detail::deallocate_sized(p, 2 * size, 64), line("wrong size in sized free of", p));
    if (reinterpret_cast<std::uintptr_t>(p) % (std::size_t{1} << 20) != 0) {
      EXPECT_DEATH(strata::malloc_detail::deallocate_sized(p, size, std::size_t{1} << 20),
                   line("wrong alignment in aligned free of", p));
    }
    strata::malloc_detail::deallocate_sized(p, size, 64);
  }
}

// A write after free into the words a free list reuses (the link, the tag)
// is seen when the slot leaves the quarantine, even if it is never handed
// out again.
TEST_F(StrataHardenedDeathTest, WriteAfterFreeOfTheFirstWordsLeavingTheQuarantine) {
  for (std::size_t at : {0, 8, 20}) {
    EXPECT_DEATH(
        {
          auto* p = static_cast<char*>(strata_malloc(32));
          strata_free(p);
          p[at] ^= 1;  // the bug (a flip: byte 8 is the freed tag, which may hold 1)
          for (int i = 0; i < 600; ++i)
            strata_free(strata_malloc(48 + 16 * (i % 4)));  // other classes: p is not reused
        },
        "write after free of")
        << at;
  }
}

TEST(StrataHardened, SizedFreeAcceptsEverySizeTheObjectCouldHave) {
  for (std::size_t size = 0; size <= 20000; size += size < 600 ? 1 : 97) {
    void* p = strata_malloc(size);
    strata::malloc_detail::deallocate_sized(p, size, 0);
  }
  void* p = strata_malloc(1000);
  p = strata_realloc(p, 600);  // kept in place: 600 is its size now
  strata::malloc_detail::deallocate_sized(p, 600, 0);
  void* a = strata_aligned_alloc(4096, 16);
  strata::malloc_detail::deallocate_sized(a, 16, 4096);
}

TEST(StrataHardened, FreedObjectsAreZeroed) {
  auto* p = static_cast<unsigned char*>(strata_malloc(128));
  std::memset(p, 0xab, 128);
  strata_free(p);
  // Word 1 holds the freed tag (word 0, zero now, the free-list link once
  // the object leaves the quarantine).
  for (std::size_t i = 0; i < 128; ++i) {
    if (i >= 8 && i < 16) continue;
    ASSERT_EQ(p[i], 0) << i;
  }
}

TEST(StrataHardened, FreedObjectsOfEverySlotSizeAreZeroed) {
  // Each way free zeroes: slots of 16 to 64 bytes inline, bigger ones by
  // memset, and the free that drains a batch of the quarantine too (1 in 32):
  // the whole slot (tail word included) but the freed tag.
  namespace md = strata::malloc_detail;
  // The last 32 frees stay quarantined whatever their bytes (drain_due).
  static_assert(cfg::kQuarantineSlots >= 64, "the objects stay quarantined");
  for (std::size_t size : {1, 8, 20, 24, 40, 56, 72, 100, 1000, 4000}) {
    std::size_t slot = md::kClassSize[md::class_of(size + cfg::kCanaryBytes)];
    std::vector<unsigned char*> objects(32);
    for (auto& p : objects) {
      p = static_cast<unsigned char*>(strata_malloc(size));
      std::memset(p, 0xab, size);
    }
    for (auto* p : objects) strata_free(p);
    for (auto* p : objects) {
      for (std::size_t i = 0; i < slot; ++i) {
        if (i >= 8 && i < 16) continue;
        ASSERT_EQ(p[i], 0) << "size " << size << ", byte " << i;
      }
    }
  }
}

// The quarantine's ring holds about cfg::kQuarantineBytes of slots at most
// (and always the last 32 frees): slots of 4 KiB leave it long before the
// ring comes round to them, 80-byte slots wait for the whole ring.
TEST(StrataHardened, QuarantineHoldsAtMostItsBytes) {
  namespace md = strata::malloc_detail;
  static_assert(cfg::kEncodeFreeLists, "a released slot's first word is its encoded link, never 0");
  // Quarantined: the first word as free left it (zero).
  auto held = [](const std::vector<void*>& objects) {
    std::size_t n = 0;
    for (void* p : objects) n += *static_cast<std::uintptr_t*>(p) == 0;
    return n;
  };
  auto free_ring_of = [](std::size_t size) {
    std::vector<void*> objects(cfg::kQuarantineSlots);
    for (auto& p : objects) p = strata_malloc(size);
    for (void* p : objects) strata_free(p);
    return objects;
  };
  static_assert(4096 * cfg::kQuarantineSlots > 4 * cfg::kQuarantineBytes, "a ring of 4 KiB slots is over");
  std::vector<void*> big = free_ring_of(4000);
  std::size_t big_slot = md::kClassSize[md::class_of(4000 + cfg::kCanaryBytes)];
  EXPECT_GE(held(big), 32u);
  EXPECT_LE(held(big), cfg::kQuarantineBytes / big_slot + 64);
  static_assert(80 * cfg::kQuarantineSlots < cfg::kQuarantineBytes, "a ring of 80-byte slots is not");
  EXPECT_GE(held(free_ring_of(64)), cfg::kQuarantineSlots - 32);
}

TEST_F(StrataHardenedDeathTest, FreesAcrossMoreSegmentsThanTheThreadRemembers) {
  // hardened_free reads a segment's header inside the free gate, and
  // remembers the segments outside it that the area map vouched for, a few
  // per thread by segment number: objects spread over more segments than
  // that, freed in an order that hops between them, are all freed correctly
  // whichever way free finds their segment, and a bad pointer there is still
  // reported.
  constexpr std::size_t kSize = 4000;
  std::vector<char*> objects(12 * cfg::kSegmentSize / kSize);
  for (auto& p : objects) p = static_cast<char*>(strata_malloc(kSize));
  // Consecutive frees about a segment apart (12 groups of a segment's worth).
  const std::size_t per_group = objects.size() / 12;
  for (std::size_t j = 0; j < per_group; ++j) {
    for (std::size_t group = 0; group < 12; ++group) {
      char*& p = objects[group * per_group + j];
      strata_free(p);
      p = static_cast<char*>(strata_malloc(kSize));
      std::memset(p, 1, kSize);
    }
  }
  EXPECT_DEATH(strata_free(objects[5] + 16), line("invalid free of", objects[5] + 16));
  for (std::size_t i = 0; i < objects.size(); i += 2) strata_free(objects[i]);
  for (std::size_t i = 1; i < objects.size(); i += 2) strata_free(objects[i]);
}

// A thread that exits in the middle of a batch of its quarantine: the
// thread that takes its heap over starts the ring afresh, so that every batch
// is full or empty when the ring comes round to it (drain_quarantine skips
// an empty one at its first entry): no object is left behind in a batch
// skipped as empty, and the ring's byte count is its slots' bytes.
TEST(StrataHardened, AHeapTakenOverMidBatchReleasesEveryObject) {
  namespace md = strata::malloc_detail;
  md::PerThreadHeap* first = nullptr;
  std::thread([&] {
    for (int i = 0; i < 40; ++i) strata_free(strata_malloc(64));
    first = md::tl_heap;
  }).join();
  md::PerThreadHeap* second = nullptr;
  std::size_t held = 0, counted = 0;
  std::thread([&] {
    for (int i = 0; i < 4000; ++i) strata_free(strata_malloc(64));
    second = md::tl_heap;
    for (void* q : second->quarantine) held += q ? md::kClassSize[md::class_of(64 + cfg::kCanaryBytes)] : 0;
    counted = second->quarantine_bytes;
  }).join();
  ASSERT_EQ(second, first) << "the second thread took the first one's heap over";
  EXPECT_EQ(counted, held);
  EXPECT_GE(held, (cfg::kQuarantineSlots - 32) * md::kClassSize[md::class_of(64 + cfg::kCanaryBytes)]);
}

TEST(StrataHardened, QuarantineDelaysReuse) {
  void* p = strata_malloc(96);
  strata_free(p);
  std::vector<void*> later;
  for (std::size_t i = 0; i < cfg::kQuarantineSlots / 2; ++i) {
    later.push_back(strata_malloc(96));
    EXPECT_NE(later.back(), p) << "reused after " << i << " allocations";
  }
  for (void* q : later) strata_free(q);
}

// Frees `objects` from a new thread that never allocates (a consumer thread
// that only frees, as bench/malloc prodcons's): its first free claims it a
// heap, for its quarantine ring; its exit moves that ring to the shared one.
void free_from_a_thread_without_a_heap(const std::vector<void*>& objects) {
  std::thread([&] {
    for (void* o : objects) strata_free(o);
  }).join();
}

// The owner's next allocations of `size` never return `p`: `rounds` times
// more than its quarantine holds, far past a block's worth, so the owner has
// collected every remote free of the block long before.
void expect_not_reused(void* p, std::size_t size, std::size_t rounds) {
  std::vector<void*> later;
  for (std::size_t i = 0; i < rounds * cfg::kQuarantineSlots; ++i) {
    later.push_back(strata_malloc(size));
    ASSERT_NE(later.back(), p) << "reused after " << i << " allocations";
  }
  for (void* q : later) strata_free(q);
}

TEST(StrataHardened, QuarantineDelaysReuseOfARemoteFree) {
  void* p = strata_malloc(96);
  std::thread([p] {
    (void)strata_malloc(16);  // this thread has a heap, and its own quarantine
    strata_free(p);
  }).join();
  expect_not_reused(p, 96, 1);  // the exit released the thread's quarantine into the shared one
}

TEST(StrataHardened, QuarantineDelaysReuseOfAFreeByAThreadWithoutAHeap) {
  void* p = strata_malloc(96);
  free_from_a_thread_without_a_heap({p});
  expect_not_reused(p, 96, 8);
}

TEST(StrataHardened, AThreadThatOnlyFreesQuarantinesInARingOfItsOwn) {
  // No shared ring's atomics for a consumer: its first free claims a heap.
  namespace md = strata::malloc_detail;
  void* p = strata_malloc(96);
  bool own_heap = false, in_own_ring = false;
  std::thread([&] {
    strata_free(p);
    own_heap = md::tl_heap != &md::g_no_heap;
    if (own_heap)
      for (void* slot : md::tl_heap->quarantine) in_own_ring |= slot == p;
  }).join();
  EXPECT_TRUE(own_heap);
  EXPECT_TRUE(in_own_ring);
  expect_not_reused(p, 96, 8);  // its exit moved the ring to the shared one
}

// A consumer's drain chains the objects of each block and pushes the chain
// at once (hardened.cpp, RemoteChains): every object reaches its block's
// remote list, counted and linked, also when more blocks meet in a batch
// than the chains have places (12 classes, so 12 blocks, interleaved).
TEST(StrataHardened, AConsumerReleasesEveryObjectToItsBlocksRemoteList) {
  namespace md = strata::malloc_detail;
  constexpr std::size_t kClasses = 12, kEach = 64;
  std::vector<void*> produced;
  for (std::size_t i = 0; i < kEach; ++i)
    for (std::size_t c = 0; c < kClasses; ++c) produced.push_back(strata_malloc(16 + 48 * c));
  std::set<md::Page*> pages;
  for (void* o : produced) pages.insert(reinterpret_cast<md::SmallSegment*>(md::segment_of(o))->page_of(o));
  std::size_t counted = 0, linked = 0;
  std::set<void*> on_lists;
  std::thread([&] {
    std::vector<void*> own = allocate_each(cfg::kQuarantineSlots, 32);  // this thread's heap and filler
    for (void* o : produced) strata_free(o);
    for (void* o : own) strata_free(o);  // the produced objects all leave the ring
    for (md::Page* page : pages) {
      std::uintptr_t word = page->remote().load();
      counted += md::remote_count(word);
      for (md::FreeBlock* b = md::remote_head(word); b; b = b->next_block()) {
        ++linked;
        on_lists.insert(b);
      }
    }
  }).join();
  EXPECT_EQ(counted, produced.size());
  EXPECT_EQ(linked, produced.size());
  for (void* o : produced) EXPECT_EQ(on_lists.count(o), 1u) << o;
}

TEST(StrataHardened, AFreeByAThreadWithoutAHeapWaitsForMoreThanTheRingLessABatch) {
  // The shared ring's random order moves an object at most a batch (32)
  // earlier: after 224 later frees by threads without a heap it still waits.
  // Eight times, each from another place in the ring (225 frees apart).
  for (int round = 0; round < 8; ++round) {
    void* p = strata_malloc(96);
    std::vector<void*> later = allocate_each(cfg::kQuarantineSlots - 32, 96);
    later.insert(later.begin(), p);
    free_from_a_thread_without_a_heap(later);
    expect_not_reused(p, 96, 8);
  }
}

TEST(StrataHardened, ThreadsWithoutAHeapShareTheirQuarantineSafely) {
  // Each object leaves the shared quarantine once: the owner never gets one
  // slot twice while both are live.
  constexpr std::size_t kThreads = 4, kEach = 2 * cfg::kQuarantineSlots;
  std::vector<std::vector<void*>> batches(kThreads);
  for (auto& batch : batches)
    for (std::size_t i = 0; i < kEach; ++i) batch.push_back(strata_malloc(64));
  std::vector<std::thread> freers;
  for (auto& batch : batches) freers.emplace_back([&batch] {
    for (void* o : batch) strata_free(o);
  });
  for (auto& t : freers) t.join();
  std::set<void*> live;
  for (std::size_t i = 0; i < kThreads * kEach; ++i) ASSERT_TRUE(live.insert(strata_malloc(64)).second);
  for (void* o : live) strata_free(o);
}

TEST_F(StrataHardenedDeathTest, WriteAfterAFreeByAThreadWithoutAHeapSeenAtProcessExit) {
  auto* p = static_cast<char*>(strata_malloc(48));
  EXPECT_EXIT(
      {
        std::thread([p] {
          strata_free(p);
          p[20] = 1;
        }).join();
        std::exit(0);
      },
      testing::KilledBySignal(SIGABRT), line("write after free of", p));
  strata_free(p);  // the first free was the child's
}

TEST_F(StrataHardenedDeathTest, WriteAfterAFreeByAThreadWithoutAHeapSeenOnReuse) {
  std::vector<void*> objects = block_with_freed_first(64);
  auto* p = static_cast<char*>(objects[0]);
  std::vector<void*> others;  // freed after p, by threads without a heap: they push p out of the quarantine
  for (std::size_t i = 0; i < 2 * cfg::kQuarantineSlots; ++i) others.push_back(strata_malloc(64));
  EXPECT_DEATH(
      {
        std::thread([p] {
          strata_free(p);
          p[40] = 1;  // the object is zero now; this write is the bug
        }).join();
        free_from_a_thread_without_a_heap(others);
        free_every_other(objects);
        for (int i = 0; i < 100000; ++i) (void)strata_malloc(64);
      },
      line("write after free of", p));
  for (void* o : objects) strata_free(o);  // the frees and the write were the child's
  for (void* o : others) strata_free(o);
}

// The indices of `watched` in the order the calling thread's next
// allocations of `size` return them.
std::vector<std::size_t> reuse_order(const std::vector<void*>& watched, std::size_t size) {
  std::vector<std::size_t> order;
  for (int i = 0; i < 20000 && order.size() < watched.size(); ++i) {
    void* q = strata_malloc(size);
    for (std::size_t k = 0; k < watched.size(); ++k)
      if (watched[k] == q) order.push_back(k);
  }
  return order;
}

// Objects freed in index order and released in that order come back from
// their blocks' free lists (a stack) as ..., 2, 1, 0: the steps up in `order`
// count the pairs that do not.
std::size_t steps_up(const std::vector<std::size_t>& order) {
  std::size_t up = 0;
  for (std::size_t i = 1; i < order.size(); ++i) up += order[i] > order[i - 1];
  return up;
}

TEST(StrataHardened, SlotsAreNotReusedInFreeOrder) {
  std::vector<void*> a = allocate_each(200, 48);
  for (auto* o : a) strata_free(o);
  push_through_quarantine(48);
  std::vector<std::size_t> order = reuse_order(a, 48);
  ASSERT_GT(order.size(), a.size() / 2);
  EXPECT_GT(steps_up(order), order.size() / 10);
}

TEST(StrataHardened, SlotsFreedByThreadsWithoutAHeapAreNotReusedInFreeOrder) {
  // The shared quarantine is a ring: alone, it would release these to the
  // owner's remote list in the order they were freed.
  std::vector<void*> a = allocate_each(4 * cfg::kQuarantineSlots, 48);  // each round draws its own order
  std::vector<void*> others = allocate_each(2 * cfg::kQuarantineSlots, 48);  // push `a` out of the quarantine
  free_from_a_thread_without_a_heap(a);
  free_from_a_thread_without_a_heap(others);
  std::vector<std::size_t> order = reuse_order(a, 48);
  ASSERT_GT(order.size(), a.size() / 2);
  EXPECT_GT(steps_up(order), order.size() / 10);
}

// An emptied block that another class takes keeps its pages: free left its
// slots zero but for their first two words, which are cleared instead of
// the pages being discarded (and faulted in again at once). The new class's
// objects pass malloc's check that a reused slot is zero.
TEST(StrataHardened, AnEmptiedBlockTakesAnotherClassWithItsPagesResident) {
  constexpr std::size_t kOld = 48, kNew = 1500, kOsPage = 4096;  // 64-byte slots, 1536-byte slots
  std::vector<void*> old = allocate_each(4 * 1024, kOld);
  auto block_of = [](void* o) { return reinterpret_cast<std::uintptr_t>(o) & ~(cfg::kPageSize - 1); };
  std::map<std::uintptr_t, std::uintptr_t> last_old_page;  // block -> the last OS page its old objects reached
  for (void* o : old) {
    std::uintptr_t& last = last_old_page[block_of(o)];
    last = std::max(last, reinterpret_cast<std::uintptr_t>(o) & ~(kOsPage - 1));
  }
  for (void* o : old) strata_free(o);
  push_through_quarantine(16);  // the old objects leave the quarantine: their blocks empty
  std::vector<void*> fresh;
  bool probed = false;
  for (int i = 0; i < 400 && !probed; ++i) {
    fresh.push_back(strata_malloc(kNew));
    std::uintptr_t block = block_of(fresh.back());
    auto it = last_old_page.find(block);
    // The block's first object of the new class (only its first page written
    // yet), in a block whose old objects reached further.
    if (it == last_old_page.end() || fresh.back() != reinterpret_cast<void*>(block) || it->second < block + kNew)
      continue;
    unsigned char resident = 0;
    ASSERT_EQ(mincore(reinterpret_cast<void*>(it->second), kOsPage, &resident), 0);
    EXPECT_EQ(resident & 1, 1) << "the old class's pages were discarded";
    probed = true;
  }
  EXPECT_TRUE(probed) << "no emptied block of the old class was reused";
  for (void* o : fresh) std::memset(o, 1, kNew);
  for (void* o : fresh) strata_free(o);
}

TEST(StrataHardened, CorrectUseOfEveryKindWorks) {
  std::vector<void*> objects;
  for (std::size_t size : {1, 8, 24, 100, 1000, 8000, 8184, 8185, 50000, 3000000}) {
    auto* p = static_cast<unsigned char*>(strata_malloc(size));
    ASSERT_NE(p, nullptr);
    ASSERT_GE(strata_usable_size(p), size);
    std::memset(p, 0x5a, strata_usable_size(p));  // every usable byte, up to the canary
    objects.push_back(p);
  }
  for (std::size_t align : {32, 64, 256, 4096}) {
    void* p = strata_aligned_alloc(align, 40);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u);
    std::memset(p, 1, strata_usable_size(p));
    objects.push_back(p);
  }
  for (void* p : objects) strata_free(p);
}

}  // namespace
