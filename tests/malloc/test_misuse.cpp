// The checks of every libstrata build (no STRATA_CHECK, no hardened build):
// a double free, a free of a pointer strata never returned or into the middle
// of an object aborts with one line naming the error and the address; correct
// use that merely looks like misuse is no false alarm.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "config.hpp"
#include "fast_paths.hpp"
#include "os.hpp"
#include "segment.hpp"
#include "size_classes.hpp"
#include "strata/strata.h"

namespace {

namespace cfg = strata::malloc_config;

std::string message(const char* what, const void* p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "strata: %s %p\n", what, p);
  return buf;
}

// The report is one line and nothing else: the regex matches all of stderr.
std::string line(const char* what, const void* p) {
  std::string regex(1, '^');
  regex.append(message(what, p));
  regex.push_back('$');
  return regex;
}

// The default ("fast") death tests fork without exec, so the addresses the
// child reports are the parent's; no test has a thread running when it forks.
using StrataMisuseDeathTest = testing::Test;

TEST(StrataSlotMagic, FindsExactlyTheSlotStartsOfEveryClass) {
  for (std::size_t cls = 0; cls < strata::malloc_detail::kClassCount; ++cls) {
    strata::malloc_detail::Page page{};
    std::uint32_t size = strata::malloc_detail::kClassSize[cls];
    page.set_block_size(size);
    for (std::uintptr_t offset = 0; offset < cfg::kPageSize; ++offset)
      ASSERT_EQ(page.is_slot_start(reinterpret_cast<void*>(offset)), offset % size == 0) << size << " " << offset;
  }
}

TEST_F(StrataMisuseDeathTest, DoubleFreeOfASmallObject) {
  void* p = strata_malloc(40);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), line("double free of", p));
}

TEST_F(StrataMisuseDeathTest, DelayedDoubleFreeOfASmallObject) {
  void* p = strata_malloc(40);
  void* q = strata_malloc(40);
  void* r = strata_malloc(40);
  strata_free(p);
  strata_free(q);
  strata_free(r);  // p is deep in the free list now
  EXPECT_DEATH(strata_free(p), line("double free of", p));
}

TEST_F(StrataMisuseDeathTest, DoubleFreeAfterAnotherThreadFreedIt) {
  void* p = strata_malloc(64);
  std::thread([p] { strata_free(p); }).join();  // on the block's remote list
  EXPECT_DEATH(strata_free(p), line("double free of", p));
}

TEST_F(StrataMisuseDeathTest, DoubleFreeByAnotherThread) {
  void* keep = strata_malloc(64);  // the block stays in use
  void* p = strata_malloc(64);
  strata_free(p);
  EXPECT_DEATH(std::thread([p] { strata_free(p); }).join(), line("double free of", p));
  strata_free(keep);
}

TEST_F(StrataMisuseDeathTest, DoubleFreeIntoABlockAnotherThreadReclaimed) {
  // A block of an exited thread (its heap idle), filled and then freed whole by
  // this thread: the last free discards it and leaves the reclaimed marker.
  constexpr std::size_t kSize = 4096;
  constexpr std::size_t kPerBlock = strata::malloc_config::kPageSize / kSize;
  std::vector<void*> objects(kPerBlock + 1);  // one more: the first block goes full
  std::thread([&objects] {
    for (auto& o : objects) o = strata_malloc(kSize);
  }).join();
  std::size_t reclaimed_before = strata::malloc_detail::reclaimed_blocks();
  for (std::size_t i = 0; i < kPerBlock; ++i) strata_free(objects[i]);
  ASSERT_EQ(strata::malloc_detail::reclaimed_blocks(), reclaimed_before + 1);
  EXPECT_DEATH(strata_free(objects[3]), line("double free of", objects[3]));
  strata_free(objects[kPerBlock]);
}

TEST_F(StrataMisuseDeathTest, DoubleFreeIntoARetiredBlock) {
  // Fill a block of 4 KiB objects, free it all: the block is retired (empty).
  void* objects[64];
  for (auto& o : objects) o = strata_malloc(4000);
  void* other = strata_malloc(4000);  // a newer block, the class's front
  for (auto& o : objects) strata_free(o);
  EXPECT_DEATH(strata_free(objects[3]), line("double free of", objects[3]));
  strata_free(other);
}

// Issue 33's messages: the real error named, not "invalid free".
TEST_F(StrataMisuseDeathTest, DoubleFreeOfAHugeObjectIsNamed) {
  auto* p = static_cast<char*>(strata_malloc(std::size_t{5} << 20));
  std::memset(p, 1, std::size_t{5} << 20);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), line("double free of", p));
}

TEST_F(StrataMisuseDeathTest, OverflowPastALargeObjectIsNamed) {
  auto* p = static_cast<char*>(strata_malloc(100000));
  auto* q = static_cast<char*>(strata_malloc(100000));
  EXPECT_DEATH(
      {
        std::memset(p, 'A', 100000 + 64);  // into q's boundary tags
        strata_free(p);
      },
      line("heap overflow past", p));
  strata_free(q);
  strata_free(p);
}

// A slot start of a live block that malloc never handed out (past the bump
// pointer): the fast free sends it to the checks.
TEST_F(StrataMisuseDeathTest, FreeOfASlotNeverHandedOut) {
  auto* p = static_cast<char*>(strata_malloc(6544));  // a class no other test here takes: its block is fresh
  ASSERT_EQ(strata_usable_size(p), 6544u);
  EXPECT_DEATH(strata_free(p + 6544), line("invalid free of", p + 6544));
  strata_free(p);
}

TEST_F(StrataMisuseDeathTest, DoubleFreeOfALargeObject) {
  void* keep = strata_malloc(30000);  // a live neighbour on each side
  void* p = strata_malloc(30000);
  void* keep2 = strata_malloc(30000);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), line("double free of", p));
  strata_free(keep);
  strata_free(keep2);
}

TEST_F(StrataMisuseDeathTest, DelayedDoubleFreeOfACoalescedLargeObject) {
  void* a = strata_malloc(30000);
  void* b = strata_malloc(30000);
  void* keep = strata_malloc(30000);
  strata_free(a);
  strata_free(b);  // coalesces into a's chunk: b's header is absorbed
  EXPECT_DEATH(strata_free(b), line("double free of", b));
  EXPECT_DEATH(strata_free(a), line("double free of", a));
  strata_free(keep);
}

TEST_F(StrataMisuseDeathTest, DoubleFreeOfAHugeObject) {
  void* p = strata_malloc(5 << 20);
  strata_free(p);
  EXPECT_DEATH(strata_free(p), line("double free of", p));
}

TEST_F(StrataMisuseDeathTest, FreeIntoTheMiddleOfAnObject) {
  auto* small = static_cast<char*>(strata_malloc(64));
  auto* large = static_cast<char*>(strata_malloc(40000));
  auto* huge = static_cast<char*>(strata_malloc(5 << 20));
  EXPECT_DEATH(strata_free(small + 16), line("invalid free of", small + 16));
  EXPECT_DEATH(strata_free(large + 4096), line("invalid free of", large + 4096));
  EXPECT_DEATH(strata_free(huge + 4096), line("invalid free of", huge + 4096));
  EXPECT_DEATH(strata_free(huge + (4 << 20)), line("invalid free of", huge + (4 << 20)));
  strata_free(small);
  strata_free(large);
  strata_free(huge);
}

TEST_F(StrataMisuseDeathTest, FreeOfAnUnalignedPointer) {
  auto* small = static_cast<char*>(strata_malloc(64));
  auto* large = static_cast<char*>(strata_malloc(40000));
  EXPECT_DEATH(strata_free(small + 1), line("invalid free of", small + 1));
  EXPECT_DEATH(strata_free(small + 8), line("invalid free of", small + 8));
  EXPECT_DEATH(strata_free(large + 8), line("invalid free of", large + 8));
  strata_free(small);
  strata_free(large);
}

TEST_F(StrataMisuseDeathTest, FreeOfPointersStrataNeverReturned) {
  auto* p = static_cast<char*>(strata_malloc(48));
  // The segment's header page, and memory mapped by someone else where a
  // segment header would be. (A slot start that bumping never reached passes
  // the fast path's checks: only the hardened build catches that one.)
  auto* header_page = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(p) & ~(cfg::kSegmentSize - 1)) + 512;
  void* mapping = mmap(nullptr, 2 * cfg::kSegmentSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  auto aligned = (reinterpret_cast<std::uintptr_t>(mapping) + cfg::kSegmentSize - 1) & ~(cfg::kSegmentSize - 1);
  auto* foreign = reinterpret_cast<char*>(aligned) + 64;
  EXPECT_DEATH(strata_free(header_page), line("invalid free of", header_page));
  EXPECT_DEATH(strata_free(foreign), line("invalid free of", foreign));
  munmap(mapping, 2 * cfg::kSegmentSize);
  strata_free(p);
}

TEST_F(StrataMisuseDeathTest, ReallocOfFreedAndInvalidPointers) {
  auto* small = static_cast<char*>(strata_malloc(64));
  auto* large = static_cast<char*>(strata_malloc(40000));
  EXPECT_DEATH((void)strata_realloc(small + 16, 100), line("invalid realloc of", small + 16));
  EXPECT_DEATH((void)strata_realloc(large + 32, 100), line("invalid realloc of", large + 32));
  void* freed = strata_malloc(64);
  void* keep = strata_malloc(64);
  strata_free(freed);
  EXPECT_DEATH((void)strata_realloc(freed, 100), line("realloc of freed", freed));
  void* freed_large = strata_malloc(40000);
  void* keep_large = strata_malloc(40000);
  strata_free(freed_large);
  EXPECT_DEATH((void)strata_realloc(freed_large, 100), line("realloc of freed", freed_large));
  strata_free(small);
  strata_free(large);
  strata_free(keep);
  strata_free(keep_large);
}

TEST_F(StrataMisuseDeathTest, UsableSizeOfFreedAndInvalidPointers) {
  auto* small = static_cast<char*>(strata_malloc(64));
  EXPECT_DEATH((void)strata_usable_size(small + 16), line("invalid malloc_usable_size of", small + 16));
  void* freed = strata_malloc(64);
  void* keep = strata_malloc(64);
  strata_free(freed);
  EXPECT_DEATH((void)strata_usable_size(freed), line("malloc_usable_size of freed", freed));
  strata_free(small);
  strata_free(keep);
}

// ---- pointers into memory strata never mapped ----------------------------------
// free, realloc and malloc_usable_size read the segment header at
// segment_of(p): for these pointers it may be unmapped (the process died of
// SIGSEGV, without a word). The free gate sends them to the area map first.

char g_static_array[256];

// Hides a pointer from the optimiser (GCC warns about freeing a non-heap object).
char* hidden(char* p) {
  asm volatile("" : "+r"(p));
  return p;
}

// Memory someone else mapped, whose would-be segment header is unmapped.
class ForeignMapping {
 public:
  ForeignMapping() {
    base_ = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    auto aligned = (reinterpret_cast<std::uintptr_t>(base_) + cfg::kSegmentSize - 1) & ~(cfg::kSegmentSize - 1);
    segment_ = reinterpret_cast<char*>(aligned);
    munmap(segment_, 4096);  // where free would read the header
  }
  ~ForeignMapping() { munmap(base_, kBytes); }
  ForeignMapping(const ForeignMapping&) = delete;
  ForeignMapping& operator=(const ForeignMapping&) = delete;
  bool ok() const { return base_ != MAP_FAILED; }
  char* object() const { return segment_ + 4096 + 64; }

 private:
  static constexpr std::size_t kBytes = 2 * cfg::kSegmentSize;
  char* base_;
  char* segment_;
};

void expect_every_use_reported(char* p) {
  EXPECT_DEATH(strata_free(hidden(p)), line("invalid free of", p));
  EXPECT_DEATH((void)strata_realloc(hidden(p), 100), line("invalid realloc of", p));
  EXPECT_DEATH((void)strata_usable_size(hidden(p)), line("invalid malloc_usable_size of", p));
}

TEST_F(StrataMisuseDeathTest, FreeAndReallocOfAStaticArray) { expect_every_use_reported(g_static_array + 64); }

TEST_F(StrataMisuseDeathTest, FreeAndReallocOfAStackAddress) {
  char stack_array[256];
  std::memset(hidden(stack_array), 0, sizeof stack_array);
  expect_every_use_reported(stack_array + 64);
}

TEST_F(StrataMisuseDeathTest, FreeAndReallocOfAForeignMapping) {
  ForeignMapping foreign;
  ASSERT_TRUE(foreign.ok());
  expect_every_use_reported(foreign.object());
}

TEST_F(StrataMisuseDeathTest, FreeIntoTheSegmentRangeWhereNoSegmentIsReportsIt) {
  // The range's last segment, carved only once every other one is: its
  // header reads as zeros (no kind, no owner).
  strata::malloc_detail::AddressRange range = strata::malloc_detail::reserve_segment_range();
  ASSERT_GE(range.bytes, cfg::kSegmentRangeMinBytes) << "no segment range reserved";
  auto* p = reinterpret_cast<char*>(range.base + range.bytes - cfg::kSegmentSize) + cfg::kPageSize + 64;
  EXPECT_DEATH(strata_free(hidden(p)), line("invalid free of", p));
  EXPECT_DEATH((void)strata_realloc(hidden(p), 100), line("invalid realloc of", p));
}

TEST(StrataSegmentRange, SmallAndLargeObjectsTakeTheFastGate) {
  void* small = strata_malloc(48);
  void* large = strata_malloc(40000);
  EXPECT_TRUE(strata::malloc_detail::in_free_gate(small)) << small;
  EXPECT_TRUE(strata::malloc_detail::in_free_gate(large)) << large;
  EXPECT_FALSE(strata::malloc_detail::in_free_gate(nullptr));
  strata_free(small);
  strata_free(large);
}

TEST(StrataSegmentRange, AGivenBackSegmentStaysReadableAndComesBackZeroed) {
  namespace sm = strata::malloc_detail;
  auto* segment = static_cast<char*>(sm::map_segment());
  ASSERT_NE(segment, nullptr);
  sm::AddressRange range = sm::reserve_segment_range();
  ASSERT_LT(reinterpret_cast<std::uintptr_t>(segment) - range.base, range.bytes) << "carved from the range";
  std::memset(segment, 0x5a, 2 * cfg::kPageSize);
  sm::unmap_segment(segment);
  // No hole in the range: the header of a given-back segment reads as zeros.
  EXPECT_EQ(*static_cast<volatile char*>(segment + 100), 0);
  auto* again = static_cast<char*>(sm::map_segment());
  ASSERT_NE(again, nullptr);
  for (std::size_t i = 0; i < 2 * cfg::kPageSize; ++i) ASSERT_EQ(again[i], 0) << i;
  again[0] = 1;  // read-write again
  sm::unmap_segment(again);
}

// ---- no false alarms ----------------------------------------------------------

TEST(StrataMisuse, LiveDataThatHoldsTheFreedTagIsFreedNormally) {
  // The freed tag is the block descriptor's address: copy it out of a freed
  // object into a live one, as a program could by accident.
  auto* p = static_cast<void**>(strata_malloc(32));
  strata_free(p);
  void* tag = p[1];
  // Fresh memory comes before the free list: allocate until p comes back.
  std::vector<void*> taken;
  void** q = nullptr;
  while (taken.size() < 5000 && q != p) {
    q = static_cast<void**>(strata_malloc(32));
    taken.push_back(q);
  }
  ASSERT_EQ(q, p);
  EXPECT_EQ(q[1], nullptr) << "malloc clears the tag";
  q[1] = tag;
  strata_free(q);  // the owner finds q on no free list: a legitimate free
  taken.pop_back();
  for (void* t : taken) strata_free(t);
}

TEST(StrataMisuse, ObjectsThatWriteOnlyTheirFirstWordAreReusedFreely) {
  // 8-byte payloads in 16-byte slots leave old tags in place unless malloc clears them.
  for (int round = 0; round < 50; ++round) {
    void* objects[3000];
    for (auto& o : objects) {
      o = strata_malloc(8);
      std::memcpy(o, &o, sizeof o);
    }
    for (auto* o : objects) strata_free(o);
  }
}

TEST(StrataMisuse, InteriorPointersOfAlignedObjectsAreFreedNormally) {
  for (std::size_t align : {32, 64, 128, 256, 1024, 4096}) {
    void* a = strata_aligned_alloc(align, 48);
    void* b = strata_aligned_alloc(align, 48);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % align, 0u);
    strata_free(a);
    strata_free(b);
  }
}

}  // namespace
