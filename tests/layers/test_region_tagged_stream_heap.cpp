// TaggedStreamHeap: one bump stream for every size, each object's length in
// the boundary tag byte before it; the inline window an inline fast path
// bumps through; large objects with a header, huge ones mapped alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "region_test_heaps.hpp"
#include "strata/layers.hpp"
#include "support/heap_model.hpp"

namespace {

using namespace strata::layers;
using Stream = TaggedStreamHeap<RegionChunkHeap<ChunkSource>>;
static_assert(SizedHeap<Stream> && ClearableHeap<Stream>);

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// What an inline fast path does with the cursor (strata/reap.h's strata_reap_malloc).
void* inline_bump(BumpCursor& c, std::size_t size) {
  const std::size_t slot = tagged_slot_of(size);
  if (slot - 1 < kMaxTaggedSlot && slot - 1 < c.limit - c.bump) {  // as strata_reap_malloc
    const std::uintptr_t p = c.bump;
    c.bump = p + slot;
    set_tag(reinterpret_cast<void*>(p), slot / 16);  // a plain byte store, seen through ASan here
    return reinterpret_cast<void*>(p);
  }
  return nullptr;
}

TEST(TaggedStreamHeap, ObjectsOfEverySizeFollowEachOtherAndKnowTheirSize) {
  Stream heap;
  strata::test::RegionOwner<Stream> owner{heap};
  char* prev = static_cast<char*>(owner.malloc(1));
  std::size_t prev_size = 1;
  for (std::size_t size : {0u, 15u, 16u, 17u, 100u, 1000u, 4079u, 33u}) {
    char* p = static_cast<char*>(owner.malloc(size));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(addr(p), addr(prev) + tagged_slot_of(prev_size)) << size;
    EXPECT_EQ(heap.getSize(p), tagged_slot_of(size) - 1);
    EXPECT_EQ(addr(p) % 16, 0u);
    std::memset(p, 0xab, heap.getSize(p));  // the whole usable size is the object's
    prev = p;
    prev_size = size;
  }
  EXPECT_EQ(tag_of(prev), tagged_slot_of(33) / 16) << "the tag byte sits in the previous slot's spare byte";
  heap.catchUp();
  EXPECT_EQ(heap.streamObjects(), 9u);
}

TEST(TaggedStreamHeap, LargeObjectsHaveAHeaderHugeOnesTheirOwnMapping) {
  Stream heap;
  strata::test::RegionOwner<Stream> owner{heap};
  void* small = owner.malloc(10);
  void* large = owner.malloc(5000);
  EXPECT_EQ(addr(large), addr(small) + 16 + kLargeHeaderBytes) << "in the stream, after its header";
  EXPECT_EQ(tag_of(large), 0u);
  EXPECT_GE(heap.getSize(large), 5000u);
  const std::size_t held = heap.bytesHeld();
  void* huge = owner.malloc(1u << 20);
  ASSERT_NE(huge, nullptr);
  EXPECT_GE(heap.getSize(huge), 1u << 20);
  EXPECT_GE(heap.bytesHeld(), held + (1u << 20));
  owner.free(huge);
  EXPECT_EQ(heap.bytesHeld(), held) << "free gives a mapped object back at once";
  errno = 0;
  EXPECT_EQ(heap.malloc(SIZE_MAX - 4), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(TaggedStreamHeap, AlignedObjectsLeaveFillersThatAreNotCounted) {
  Stream heap;
  strata::test::RegionOwner<Stream> owner{heap};
  owner.malloc(10);
  for (std::size_t alignment : {32u, 64u, 256u, 4096u, 8192u}) {
    void* p = heap.mallocAligned(100, alignment);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(addr(p) % alignment, 0u) << alignment;
    EXPECT_GE(heap.getSize(p), 100u);
    void* q = heap.mallocAligned(6000, alignment);
    EXPECT_EQ(addr(q) % alignment, 0u) << alignment;
  }
  heap.catchUp();
  EXPECT_EQ(heap.streamObjects(), 11u);
}

TEST(TaggedStreamHeap, TheInlineWindowSpansTheRunAndClosesOnRequest) {
  Stream heap;
  BumpCursor cursor;
  heap.useCursor(&cursor);
  std::vector<void*> objects;
  // The layer opens the window over its run; inline bumps fill it, then the layer gives the next run.
  objects.push_back(heap.malloc(8));
  std::size_t inline_count = 0, jumps = 0;
  for (int i = 0; i < 3000; ++i) {
    ASSERT_GE(cursor.limit, cursor.bump);
    void* p = inline_bump(cursor, 40);
    if (p == nullptr) p = heap.malloc(40);
    else ++inline_count;
    if (addr(p) != addr(objects.back()) + (objects.size() == 1 ? 16 : 48)) ++jumps;  // a new chunk
    objects.push_back(p);
  }
  EXPECT_LE(jumps, 6u) << "144 KB from chunks doubling from 8 KiB";
  EXPECT_GT(inline_count, 2990u) << "all allocations bump inline but the first of each run";
  heap.catchUp();
  EXPECT_EQ(heap.streamObjects(), objects.size()) << "inline objects are counted by walking their tags";
  EXPECT_EQ(heap.getSize(objects[500]), 47u);
  heap.closeInline(kInlineClosedFreed);
  EXPECT_EQ(cursor.limit, cursor.bump);
  EXPECT_EQ(inline_bump(cursor, 8), nullptr);
  heap.openInline(kInlineClosedFreed);
  EXPECT_NE(inline_bump(cursor, 8), nullptr);
  heap.clear();
  EXPECT_EQ(cursor.limit, cursor.bump) << "after clear the next allocation takes a run first";
}

TEST(TaggedStreamHeap, GrowLastExtendsOnlyTheLastObjectWithinTheTagsReach) {
  Stream heap;
  strata::test::RegionOwner<Stream> owner{heap};
  void* first = owner.malloc(40);
  void* last = owner.malloc(10);
  EXPECT_FALSE(heap.growLast(first, 100)) << "not the last object";
  EXPECT_EQ(heap.getSize(first), 47u);
  heap.catchUp();  // counted before it grows
  EXPECT_TRUE(heap.growLast(last, 500));
  EXPECT_EQ(heap.getSize(last), 511u);
  EXPECT_EQ(addr(owner.malloc(1)), addr(last) + 512) << "the stream continues after the grown object";
  void* top = owner.malloc(20);
  EXPECT_FALSE(heap.growLast(top, 4080)) << "a slot longer than a tag can say";
  EXPECT_TRUE(heap.growLast(top, 3)) << "already big enough";
  heap.catchUp();
  EXPECT_EQ(heap.streamObjects(), 4u);
  EXPECT_EQ(heap.streamBytes(), 47u + 511u + 15u + 31u);
  void* large = owner.malloc(5000);
  EXPECT_FALSE(heap.growLast(large, 6000)) << "large objects have no tag";
}

// A round that stayed in one run is cleared in place: the stream bumps that
// run again from its start, the window open at once; a round that needed a
// second run, or mapped an object of its own, is cleared in full.
TEST(TaggedStreamHeap, ClearStartsARoundThatStayedInOneRunAgainInPlace) {
  Stream stream;
  void* first = stream.malloc(40);
  stream.malloc(100);
  const std::uintptr_t limit = stream.cursor().limit;
  stream.clear();
  EXPECT_EQ(stream.cursor().bump, addr(first)) << "the run starts again";
  EXPECT_EQ(stream.cursor().limit, limit) << "and the window spans it at once";
  stream.catchUp();
  EXPECT_EQ(stream.streamObjects(), 0u);
  EXPECT_EQ(stream.streamBytes(), 0u);
  EXPECT_EQ(stream.malloc(40), first);
  void* huge = stream.malloc(1 << 20);  // mapped alone: the full clear unmaps it
  ASSERT_NE(huge, nullptr);
  stream.clear();
  EXPECT_EQ(stream.cursor().bump, 0u);
  EXPECT_EQ(stream.mappings(), 1u) << "the chunk is kept, the huge object gone";
  EXPECT_EQ(stream.malloc(40), first);
  for (int i = 0; i < 400; ++i) stream.malloc(100);  // past the first chunk
  stream.clear();
  EXPECT_EQ(stream.cursor().bump, 0u) << "two runs: the full clear";
  EXPECT_EQ(stream.malloc(40), first);
}

TEST(TaggedStreamHeap, PassesTheHeapModelAsARegion) {
  Stream heap;
  strata::test::RegionOwner<Stream> owner{heap};
  strata::test::run_heap_model(owner, {.seed = 5, .operations = 20000, .max_size = 90000});
  heap.clear();
  strata::test::run_heap_model(owner, {.seed = 6, .operations = 5000, .max_size = 9000});
}

}  // namespace
