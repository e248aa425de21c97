#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "strata/layers.hpp"
#include "util_test_heaps.hpp"

using strata::layers::NestedRegionHeap;
using strata::layers::ZoneHeap;
using strata::test::FailingHeap;

namespace {

constexpr std::size_t kChunk = 1024;
using Pool = NestedRegionHeap<ZoneHeap<kChunk, FailingHeap>>;
static_assert(strata::layers::ClearableHeap<Pool>);

// Allocates n objects of 100 bytes, writing each (so ASan sees real use).
void fill(Pool& pool, int n) {
  for (int i = 0; i < n; ++i) {
    void* p = pool.malloc(100);
    ASSERT_NE(p, nullptr);
    std::memset(p, i, 100);
  }
}

TEST(NestedRegionHeap, ARootIsTheRegionBelow) {
  Pool pool;
  EXPECT_EQ(pool.parent(), nullptr);
  fill(pool, 30);
  EXPECT_GE(pool.live(), 3u);  // chunks from FailingHeap
  pool.clear();
  EXPECT_EQ(pool.live(), 0u);
}

TEST(NestedRegionHeap, ClearingAParentClearsEveryDescendant) {
  Pool connection;
  Pool request(connection);
  Pool subrequest(request);
  Pool other(connection);
  EXPECT_EQ(request.parent(), &connection);
  EXPECT_EQ(subrequest.parent(), &request);
  fill(connection, 20);
  fill(request, 20);
  fill(subrequest, 20);
  fill(other, 20);
  connection.clear();
  EXPECT_EQ(connection.live(), 0u);
  EXPECT_EQ(request.live(), 0u);
  EXPECT_EQ(subrequest.live(), 0u);
  EXPECT_EQ(other.live(), 0u);
  // Still attached and usable.
  EXPECT_EQ(subrequest.parent(), &request);
  fill(subrequest, 5);
  EXPECT_GT(subrequest.live(), 0u);
}

TEST(NestedRegionHeap, ClearingAChildLeavesTheParentAndSiblings) {
  Pool parent;
  Pool a(parent), b(parent);
  fill(parent, 20);
  fill(a, 20);
  fill(b, 20);
  const std::size_t parent_chunks = parent.live();
  const std::size_t b_chunks = b.live();
  a.clear();
  EXPECT_EQ(a.live(), 0u);
  EXPECT_EQ(parent.live(), parent_chunks);
  EXPECT_EQ(b.live(), b_chunks);
}

TEST(NestedRegionHeap, ADestroyedChildLeavesItsParentsList) {
  Pool parent;
  {
    Pool a(parent);
    {
      Pool b(parent);
      Pool c(parent);
      EXPECT_EQ(parent.firstChild(), &c);
      EXPECT_EQ(c.nextSibling(), &b);
      fill(b, 10);
    }  // c, then b: from the head and from the middle of the list
    EXPECT_EQ(parent.firstChild(), &a);
    EXPECT_EQ(a.nextSibling(), nullptr);
  }
  EXPECT_EQ(parent.firstChild(), nullptr);
  parent.clear();  // touches no destroyed child (ASan would say so)
}

TEST(NestedRegionHeap, ADestroyedParentLetsItsChildrenGoEmpty) {
  auto* parent = new Pool;
  Pool child(*parent);
  fill(*parent, 10);
  fill(child, 10);
  delete parent;
  EXPECT_EQ(child.parent(), nullptr);
  EXPECT_EQ(child.live(), 0u);
  fill(child, 3);  // a root now
  EXPECT_GT(child.live(), 0u);
}

// A clearable heap that records which heap cleared, in order.
std::vector<int> g_cleared;
struct RecordingRegion {
  int id = 0;
  void* malloc(std::size_t) { return nullptr; }
  void free(void*) {}
  void clear() { g_cleared.push_back(id); }
};
using RecordingPool = NestedRegionHeap<RecordingRegion>;

TEST(NestedRegionHeap, ClearReachesChildrenBeforeTheirParent) {
  RecordingPool root;
  RecordingPool a(root), b(root);
  RecordingPool a1(a), a2(a);
  RecordingPool b1(b);
  int id = 0;
  for (RecordingPool* pool : {&root, &a, &b, &a1, &a2, &b1}) pool->id = ++id;
  g_cleared.clear();
  root.clear();
  // Children newest first (b before a), each subtree before its root.
  EXPECT_EQ(g_cleared, (std::vector<int>{6, 3, 5, 4, 2, 1}));
  g_cleared.clear();
  a.clear();
  EXPECT_EQ(g_cleared, (std::vector<int>{5, 4, 2})) << "a's subtree only";
  g_cleared.clear();
}

TEST(NestedRegionHeap, OutOfMemoryIsNull) {
  Pool parent;
  Pool child(parent);
  child.fail_after(0);
  EXPECT_EQ(child.malloc(10), nullptr);
  child.never_fail();
  EXPECT_NE(child.malloc(10), nullptr);
}

}  // namespace
