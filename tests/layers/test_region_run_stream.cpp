// RunStream (region/run_stream.hpp): the contract both bump streams share —
// the cursor and its inline window, rounds, objects mapped alone — checked
// on the tagged and on the sized stream.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "strata/layers/region.hpp"

namespace {

using namespace strata::layers;
using Chunks = RegionChunkHeap<ChunkSource>;

struct Tagged {
  using Heap = TaggedStreamHeap<Chunks>;
  static void* alloc(Heap& h, std::size_t size) { return h.malloc(size); }
  static void release(Heap& h, void* p, std::size_t) { h.free(p); }
};
struct Sized {
  using Heap = SizedStreamHeap<Chunks, BumpCursor>;
  static void* alloc(Heap& h, std::size_t size) { return h.malloc(size); }
  static void release(Heap& h, void* p, std::size_t size) { h.free(p, size); }
};

template <class Kind>
class RunStreamContract : public ::testing::Test {};
using Kinds = ::testing::Types<Tagged, Sized>;
TYPED_TEST_SUITE(RunStreamContract, Kinds);

constexpr std::size_t kHuge = std::size_t{1} << 20;  // above either stream's largest slot: mapped alone

TYPED_TEST(RunStreamContract, UntouchedUntilAnAllocation) {
  typename TypeParam::Heap heap;
  EXPECT_TRUE(heap.untouched());
  void* huge = TypeParam::alloc(heap, kHuge);  // a mapping alone touches the heap too
  ASSERT_NE(huge, nullptr);
  EXPECT_FALSE(heap.untouched());
  TypeParam::release(heap, huge, kHuge);
  EXPECT_TRUE(heap.untouched());
  ASSERT_NE(TypeParam::alloc(heap, 16), nullptr);
  EXPECT_FALSE(heap.untouched());
}

TYPED_TEST(RunStreamContract, ARoundInOneRunStartsThatRunAgain) {
  typename TypeParam::Heap heap;
  void* first = TypeParam::alloc(heap, 40);
  for (int i = 0; i < 10; ++i) ASSERT_NE(TypeParam::alloc(heap, 40), nullptr);
  const std::size_t chunks = heap.chunks();
  heap.clear();
  EXPECT_EQ(heap.chunks(), chunks);  // kept, not relinked
  EXPECT_EQ(TypeParam::alloc(heap, 40), first);
}

TYPED_TEST(RunStreamContract, ClearGivesBackTheObjectsMappedAlone) {
  typename TypeParam::Heap heap;
  ASSERT_NE(TypeParam::alloc(heap, 16), nullptr);
  const std::size_t mappings = heap.mappings();
  ASSERT_NE(TypeParam::alloc(heap, kHuge), nullptr);
  ASSERT_NE(TypeParam::alloc(heap, kHuge), nullptr);
  EXPECT_EQ(heap.mappings(), mappings + 2);
  heap.clear();
  EXPECT_EQ(heap.mappings(), mappings);
  EXPECT_TRUE(heap.untouched());
}

TYPED_TEST(RunStreamContract, TheWindowIsClosedWhileAnyReasonHolds) {
  typename TypeParam::Heap heap;
  ASSERT_NE(TypeParam::alloc(heap, 16), nullptr);
  const auto open = [&heap] { return heap.cursor().limit > heap.cursor().bump; };
  EXPECT_TRUE(open());
  heap.closeInline(1);
  heap.closeInline(2);
  EXPECT_EQ(heap.cursor().limit, heap.cursor().bump);
  heap.openInline(1);
  EXPECT_FALSE(open());  // reason 2 still holds
  heap.openInline(2);
  EXPECT_TRUE(open());
}

TYPED_TEST(RunStreamContract, UseCursorMovesTheBumpAndTheWindow) {
  typename TypeParam::Heap heap;
  ASSERT_NE(TypeParam::alloc(heap, 16), nullptr);
  const std::uintptr_t bump = heap.cursor().bump;
  BumpCursor outside{};
  heap.useCursor(&outside);
  EXPECT_EQ(&heap.cursor(), &outside);
  EXPECT_EQ(outside.bump, bump);
  EXPECT_GT(outside.limit, outside.bump);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(TypeParam::alloc(heap, 16)), bump);  // bumps through it
  EXPECT_GT(outside.bump, bump);
}

}  // namespace
