#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>

#include "strata/layers.hpp"

using namespace strata::layers;

namespace {

constexpr std::size_t sixteen_class(std::size_t size) { return size == 0 ? 0 : (size - 1) / 16; }
constexpr std::size_t sixteen_size(std::size_t c) { return (c + 1) * 16; }
constexpr std::size_t kArea = std::size_t{1} << 20;

template <class Area>
using Bin = FreelistHeap<ChunkHeap<4096, Area>>;
template <class Area>
using HeaderBin = SizeHeap<FreelistHeap<ChunkHeap<4096, Area>>>;

// Four bins of 16..64 bytes, 1 MiB areas; larger objects to a sized heap.
using Headerless = AreaSegHeap<4, sixteen_class, sixteen_size, Bin, SizeHeap<MallocHeap>, kArea>;
using WithHeader = AreaSegHeap<4, sixteen_class, sixteen_size, HeaderBin, SizeHeap<MallocHeap>, kArea>;

static_assert(SizedHeap<Headerless>);

}  // namespace

TEST(AreaSegHeap, PacksSmallObjectsOfOneClassWithoutHeaders) {
  Headerless heap;
  auto* a = static_cast<char*>(heap.malloc(20));
  auto* b = static_cast<char*>(heap.malloc(32));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b - a, 32) << "class 32 B objects sit side by side: no header";
  EXPECT_EQ(heap.getSize(a), 32u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
}

TEST(AreaSegHeap, KeepsEachClassInItsOwnArea) {
  Headerless heap;
  auto* small = static_cast<char*>(heap.malloc(16));
  auto* large = static_cast<char*>(heap.malloc(64));
  ASSERT_TRUE(small && large);
  const auto distance = static_cast<std::size_t>(large - small);
  EXPECT_GE(distance, 3 * kArea - 4096) << "bin 3's area is three areas above bin 0's";
  EXPECT_EQ(heap.getSize(small), 16u);
  EXPECT_EQ(heap.getSize(large), 64u);
}

TEST(AreaSegHeap, FreeFindsTheBinFromTheAddressAndReusesTheObject) {
  Headerless heap;
  void* a = heap.malloc(40);
  void* b = heap.malloc(10);
  heap.free(a);
  heap.free(b);
  EXPECT_EQ(heap.malloc(48), a) << "the 48 B class's freed object comes back";
  EXPECT_EQ(heap.malloc(16), b);
}

TEST(AreaSegHeap, SendsLargerObjectsToTheBigHeap) {
  Headerless heap;
  void* small = heap.malloc(64);
  auto* big = static_cast<char*>(heap.malloc(1000));
  ASSERT_TRUE(small && big);
  EXPECT_GE(heap.getSize(big), 1000u);
  std::memset(big, 1, 1000);
  heap.free(big);  // through the big heap: a wrong route would crash or leak under ASan
  heap.free(small);
}

TEST(AreaSegHeap, ABinWithHeadersSpacesObjectsByTheHeader) {
  WithHeader heap;
  auto* a = static_cast<char*>(heap.malloc(32));
  auto* b = static_cast<char*>(heap.malloc(32));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b - a, 48) << "32 B object + 16 B header";
  EXPECT_EQ(heap.getSize(a), 32u);
  heap.free(a);
  EXPECT_EQ(heap.malloc(30), a);
}

TEST(AreaSegHeap, ManyObjectsStayDistinctAndWritable) {
  Headerless heap;
  std::set<void*> seen;
  for (int i = 0; i < 20000; ++i) {
    const std::size_t size = 1 + static_cast<std::size_t>(i % 64);
    auto* p = static_cast<unsigned char*>(heap.malloc(size));
    ASSERT_NE(p, nullptr);
    std::memset(p, i & 0xff, size);
    EXPECT_TRUE(seen.insert(p).second);
  }
  for (void* p : seen) heap.free(p);
}
