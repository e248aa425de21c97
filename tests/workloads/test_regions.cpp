// The workloads' regions (workloads/common/regions.hpp): the three backings
// keep one vocabulary, each does what its mode promises with release and
// clear, and children nest where the backing nests.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include <strata/layers.hpp>

#include "regions.hpp"

namespace {

using strata::workload::LayerRegion;
using strata::workload::MallocRegion;
using strata::workload::ReapRegion;
using Zone = LayerRegion<strata::layers::ZoneHeap<4096, strata::layers::MallocHeap>>;
using NestedZone =
    LayerRegion<strata::layers::NestedRegionHeap<strata::layers::ZoneHeap<4096, strata::layers::MallocHeap>>>;

template <class Region>
class Regions : public ::testing::Test {};
using AllRegions = ::testing::Types<Zone, NestedZone, MallocRegion, ReapRegion>;
TYPED_TEST_SUITE(Regions, AllRegions);

TYPED_TEST(Regions, ObjectsAreDistinctAlignedAndKeepTheirBytesUntilClear) {
  TypeParam region;
  std::vector<unsigned char*> objects;
  for (int i = 0; i < 500; ++i) {
    const std::size_t size = 1 + static_cast<std::size_t>(i % 97);
    auto* p = static_cast<unsigned char*>(region.allocate(size));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t), 0u);
    std::memset(p, i & 0xff, size);
    objects.push_back(p);
  }
  for (int i = 0; i < 500; ++i) {
    const std::size_t size = 1 + static_cast<std::size_t>(i % 97);
    for (std::size_t b = 0; b < size; ++b) ASSERT_EQ(objects[i][b], i & 0xff) << "object " << i;
  }
  region.clear();
  EXPECT_NE(region.allocate(64), nullptr);  // usable again after clear
}

TYPED_TEST(Regions, AChildIsAUsableRegionOfItsOwn) {
  TypeParam parent;
  void* in_parent = parent.allocate(32);
  ASSERT_NE(in_parent, nullptr);
  std::memset(in_parent, 0xab, 32);
  {
    TypeParam child(parent);
    void* in_child = child.allocate(32);
    ASSERT_NE(in_child, nullptr);
    EXPECT_NE(in_child, in_parent);
    std::memset(in_child, 0xcd, 32);
    child.clear();
  }
  EXPECT_EQ(static_cast<unsigned char*>(in_parent)[31], 0xab);  // the child's clear left the parent alone
}

TEST(ReapRegion, ReleaseGivesTheObjectBackAtOnce) {
  static_assert(ReapRegion::kFreesEarly && !MallocRegion::kFreesEarly && !Zone::kFreesEarly);
  ReapRegion region;
  void* first = region.allocate(48);
  ASSERT_NE(first, nullptr);
  region.release(first);
  EXPECT_EQ(region.allocate(48), first);  // the reap reuses the freed object
}

TEST(LayerRegion, ReleaseKeepsTheObjectToTheClear) {
  Zone region;
  void* first = region.allocate(48);
  ASSERT_NE(first, nullptr);
  region.release(first);
  EXPECT_NE(region.allocate(48), first);  // a bump region frees nothing early
}

TEST(AllocateOrThrow, ThrowsBadAllocWhenTheRegionSaysNo) {
  struct Exhausted {
    void* allocate(std::size_t) noexcept { return nullptr; }
  } exhausted;
  EXPECT_THROW(strata::workload::allocate_or_throw(exhausted, 8), std::bad_alloc);
  MallocRegion region;
  EXPECT_NE(strata::workload::allocate_or_throw(region, 8), nullptr);
}

}  // namespace
