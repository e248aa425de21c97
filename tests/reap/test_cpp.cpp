// strata/reap.hpp: strata::reap (RAII, move, children) and
// strata::reap_resource (std::pmr) — against the real reap and the emulator.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory_resource>
#include <string>
#include <type_traits>
#include <vector>

#include "reap_test_support.hpp"
#include "strata/reap.hpp"

namespace {

static_assert(!std::is_copy_constructible_v<strata::reap>);
static_assert(!std::is_copy_assignable_v<strata::reap>);
static_assert(std::is_nothrow_move_constructible_v<strata::reap>);
static_assert(std::is_nothrow_move_assignable_v<strata::reap>);
static_assert(!std::is_copy_constructible_v<strata::reap_resource>);
static_assert(!std::is_copy_constructible_v<strata::sized_reap>);
static_assert(!std::is_copy_assignable_v<strata::sized_reap>);
static_assert(std::is_nothrow_move_constructible_v<strata::sized_reap>);
static_assert(std::is_nothrow_move_assignable_v<strata::sized_reap>);
static_assert(sizeof(strata::reap) == sizeof(strata_reap*) && sizeof(strata::sized_reap) == sizeof(strata_reap*));

TEST(ReapCpp, AllocatesAndFrees) {
  strata::reap r;
  ASSERT_NE(r.get(), nullptr);
  auto* p = static_cast<char*>(r.malloc(100));
  ASSERT_NE(p, nullptr);
  std::strcpy(p, "reap");
  EXPECT_GE(r.usable_size(p), 100u);
  p = static_cast<char*>(r.realloc(p, 5000));
  EXPECT_STREQ(p, "reap");
  auto* z = static_cast<int*>(r.calloc(4, sizeof(int)));
  EXPECT_EQ(z[3], 0);
  void* a = r.aligned_alloc(128, 10);
  EXPECT_TRUE(strata::test::aligned(a, 128));
  EXPECT_EQ(r.stats().objects_live, 3u);
  r.free(p);
  r.free(z);
  r.free(a);
  EXPECT_EQ(r.stats().objects_live, 0u);
}

// Both kinds own their reap alike (one base, detail::reap_owner).
template <class Reap>
class ReapCppOwner : public ::testing::Test {};
using ReapKinds = ::testing::Types<strata::reap, strata::sized_reap>;
TYPED_TEST_SUITE(ReapCppOwner, ReapKinds);

void free_object(strata::reap& r, void* p, std::size_t) { r.free(p); }
void free_object(strata::sized_reap& r, void* p, std::size_t size) { r.free(p, size); }

TYPED_TEST(ReapCppOwner, MoveTransfersTheReap) {
  TypeParam a;
  void* p = a.malloc(10);
  strata_reap* handle = a.get();
  TypeParam b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(b.get(), handle);
  EXPECT_NE(b.stats().bytes_live, 0u);
  TypeParam c;
  c.malloc(1);
  c = std::move(b);  // c's old reap is destroyed
  EXPECT_EQ(c.get(), handle);
  free_object(c, p, 10);
  EXPECT_EQ(c.stats().bytes_live, 0u);
  c = std::move(c);  // self-move keeps the reap
  EXPECT_EQ(c.get(), handle);
}

TEST(ReapCpp, ChildIsClearedWithItsParent) {
  strata::reap parent;
  strata::reap child(parent);
  strata::reap grandchild(child);
  parent.malloc(10);
  child.malloc(10);
  grandchild.malloc(10);
  child.clear();
  EXPECT_EQ(parent.stats().objects_live, 1u);
  EXPECT_EQ(child.stats().objects_live, 0u);
  EXPECT_EQ(grandchild.stats().objects_live, 0u);
  grandchild.malloc(10);
  parent.clear();
  EXPECT_EQ(grandchild.stats().objects_live, 0u);
}  // grandchild, child, parent destroyed in that order

TEST(ReapCpp, ResourceDeallocateReallyFrees) {
  strata::reap_resource arena;
  void* p = arena.allocate(200, 8);
  void* q = arena.allocate(64, 64);
  EXPECT_TRUE(strata::test::aligned(q, 64));
  EXPECT_EQ(strata::test::stats_of(arena.get()).bytes_live, 264u) << "a sized reap: sizes exactly (multiples of 8)";
  arena.deallocate(p, 200, 8);
  EXPECT_EQ(strata::test::stats_of(arena.get()).bytes_live, 64u);
  if (!strata::test::kEmulator) {
    // The freed memory comes back, at the latest when the reap's run is used
    // up (fewer than kReapWaitBytes wait: the stream bumps on until then).
    const std::size_t held = strata::test::stats_of(arena.get()).bytes_held;
    bool back = false;
    for (int i = 0; i < 100000 && !back; ++i) back = arena.allocate(200, 8) == p;
    EXPECT_TRUE(back);
    EXPECT_EQ(strata::test::stats_of(arena.get()).bytes_held, held) << "before the reap took more memory";
  }
  arena.release();
  EXPECT_EQ(strata::test::stats_of(arena.get()).bytes_live, 0u);
}

TEST(ReapCpp, PmrContainers) {
  strata::reap_resource arena;
  {
    std::pmr::vector<int> v(&arena);
    for (int i = 0; i < 100000; ++i) v.push_back(i);
    std::pmr::map<int, std::pmr::string> m(&arena);
    for (int i = 0; i < 2000; ++i) m.emplace(i, std::pmr::string(static_cast<std::size_t>(i % 90), 'x'));
    for (int i = 0; i < 100000; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], i);
    for (auto& [k, s] : m) ASSERT_EQ(s.size(), static_cast<std::size_t>(k % 90));
    EXPECT_GT(strata::test::stats_of(arena.get()).bytes_live, 400000u);
  }
  // Every container gave its memory back one object at a time.
  EXPECT_EQ(strata::test::stats_of(arena.get()).bytes_live, 0u);
}

TEST(ReapCpp, ResourcesCompareByReap) {
  strata::reap r;
  strata::reap_resource a(r), b(r), c;
  EXPECT_TRUE(a.is_equal(b));
  EXPECT_FALSE(a.is_equal(c));
  EXPECT_FALSE(a.is_equal(*std::pmr::new_delete_resource()));
  EXPECT_EQ(a.get(), r.get());
}

TEST(ReapCpp, ChildResource) {
  strata::reap_resource parent;
  strata::reap_resource child(parent);
  EXPECT_NE(child.allocate(1000, 16), nullptr);
  EXPECT_NE(parent.allocate(16), nullptr);
  EXPECT_EQ(strata::test::stats_of(child.get()).bytes_live, 1000u);
  parent.release();  // clears the child too
  EXPECT_EQ(strata::test::stats_of(child.get()).bytes_live, 0u);
  EXPECT_EQ(strata::test::stats_of(parent.get()).bytes_live, 0u);
  std::pmr::vector<int> v(1000, 7, &child);  // and the child is usable
  EXPECT_EQ(v[999], 7);
}

TEST(ReapCpp, ResourceThrowsBadAllocWhenOutOfMemory) {
  strata::reap_resource arena;
  EXPECT_THROW(static_cast<void>(arena.allocate(SIZE_MAX / 2, 16)), std::bad_alloc);
  EXPECT_NE(arena.allocate(16), nullptr);
}

}  // namespace
