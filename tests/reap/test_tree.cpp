// Trees of reaps created, cleared and destroyed in every order: after each
// step every surviving reap still holds exactly its own objects, intact, and
// can allocate; clearing or destroying a reap reaches its whole subtree.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "reap_test_support.hpp"

namespace {

using strata::test::stats_of;

// The shape:  root ─┬─ a ── a1
//                   └─ b ── b1
constexpr int kNodes = 5;
constexpr std::array<int, kNodes> kParent = {-1, 0, 0, 1, 2};  // root, a, b, a1, b1

struct Node {
  strata_reap* reap = nullptr;
  std::vector<unsigned char*> objects;  // each filled with its node's tag
};

class Tree {
 public:
  // Creates the nodes parents first; siblings in the order given by `a_first`.
  explicit Tree(bool a_first) {
    const std::array<int, kNodes> order =
        a_first ? std::array<int, kNodes>{0, 1, 3, 2, 4} : std::array<int, kNodes>{0, 2, 4, 1, 3};
    for (int n : order) {
      nodes_[n].reap = strata_reap_create(kParent[n] < 0 ? nullptr : nodes_[kParent[n]].reap);
      EXPECT_NE(nodes_[n].reap, nullptr);
      fill(n, 8);
    }
  }
  ~Tree() {
    if (alive(0)) strata_reap_destroy(nodes_[0].reap);
  }

  bool alive(int n) const { return nodes_[n].reap != nullptr; }

  void clear(int n) {
    strata_reap_clear(nodes_[n].reap);
    forSubtree(n, [&](int m) { nodes_[m].objects.clear(); });
  }
  void destroy(int n) {
    strata_reap_destroy(nodes_[n].reap);
    forSubtree(n, [&](int m) { nodes_[m] = Node{}; });
  }

  // Every surviving reap: its objects intact, its count right, still allocating.
  void verify(const char* after) {
    for (int n = 0; n < kNodes; ++n) {
      if (!alive(n)) continue;
      std::vector<unsigned char> expected(size(n), tag(n));
      for (unsigned char* p : nodes_[n].objects)
        ASSERT_EQ(std::memcmp(p, expected.data(), size(n)), 0) << "node " << n << " after " << after;
      ASSERT_EQ(stats_of(nodes_[n].reap).objects_live, nodes_[n].objects.size()) << "node " << n << " after " << after;
      fill(n, 2);
    }
  }

 private:
  static unsigned char tag(int n) { return static_cast<unsigned char>(0x40 + n); }
  static std::size_t size(int n) { return 24 + 40 * static_cast<std::size_t>(n) + (n == 4 ? 5000 : 0); }

  void fill(int n, int count) {
    for (int i = 0; i < count; ++i) {
      auto* p = static_cast<unsigned char*>(strata_reap_malloc(nodes_[n].reap, size(n)));
      ASSERT_NE(p, nullptr);
      std::memset(p, tag(n), size(n));
      nodes_[n].objects.push_back(p);
    }
  }

  template <class Fn>
  void forSubtree(int n, Fn fn) {
    for (int m = 0; m < kNodes; ++m)
      for (int up = m; up >= 0; up = kParent[up])
        if (up == n) {
          fn(m);
          break;
        }
  }

  std::array<Node, kNodes> nodes_;
};

TEST(ReapTree, EveryOrderOfClearAndDestroy) {
  std::array<int, kNodes> order = {0, 1, 2, 3, 4};
  int scenarios = 0;
  do {
    for (unsigned destroy_mask = 0; destroy_mask < (1u << kNodes); ++destroy_mask) {
      for (bool a_first : {true, false}) {
        Tree tree(a_first);
        for (int n : order) {
          if (!tree.alive(n)) continue;
          const bool destroy = (destroy_mask >> n) & 1u;
          if (destroy) tree.destroy(n);
          else tree.clear(n);
          tree.verify(destroy ? "destroy" : "clear");
          if (::testing::Test::HasFatalFailure()) {
            ADD_FAILURE() << "scenario: order " << order[0] << order[1] << order[2] << order[3] << order[4]
                          << " destroy mask " << destroy_mask;
            return;
          }
        }
        ++scenarios;
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(scenarios, 120 * 32 * 2);
}

TEST(ReapTree, ChildrenCreatedAfterAClearBelongToTheTree) {
  strata_reap* root = strata_reap_create(nullptr);
  strata_reap_malloc(root, 10);
  strata_reap_clear(root);
  strata_reap* child = strata_reap_create(root);
  strata_reap* grandchild = strata_reap_create(child);
  strata_reap_malloc(child, 10);
  strata_reap_malloc(grandchild, 10);
  strata_reap_clear(root);
  EXPECT_EQ(stats_of(child).objects_live, 0u);
  EXPECT_EQ(stats_of(grandchild).objects_live, 0u);
  strata_reap_destroy(root);  // takes child and grandchild along (ASan/LSan would see leaks)
}

TEST(ReapTree, DeepChainsAreWalkedWithoutRecursion) {
  strata_reap* root = strata_reap_create(nullptr);
  strata_reap* leaf = root;
  for (int i = 0; i < 2000; ++i) {
    leaf = strata_reap_create(leaf);
    ASSERT_NE(leaf, nullptr);
    strata_reap_malloc(leaf, 16);
  }
  strata_reap_clear(root);
  EXPECT_EQ(stats_of(leaf).objects_live, 0u);
  strata_reap_destroy(root);
}

TEST(ReapTree, WideTreesAreDestroyedWhole) {
  strata_reap* root = strata_reap_create(nullptr);
  std::vector<strata_reap*> kids;
  for (int i = 0; i < 300; ++i) kids.push_back(strata_reap_create(i % 3 == 0 || kids.empty() ? root : kids[i / 2]));
  for (strata_reap* k : kids) strata_reap_malloc(k, 100);
  for (std::size_t i = 0; i < kids.size(); i += 7) strata_reap_clear(kids[i]);
  strata_reap_destroy(kids[1]);  // a subtree in the middle first
  strata_reap_destroy(root);
}

// A clear visits only reaps allocated from since their last clear (and the
// way to them): objects below a reap nothing was allocated from, made by any
// of the calls that allocate, still go.
TEST(ReapTree, ClearReachesObjectsBelowReapsNothingWasAllocatedFrom) {
  using Allocate = void* (*)(strata_reap*);
  const Allocate kWays[] = {
      [](strata_reap* r) { return strata_reap_malloc(r, 40); },
      [](strata_reap* r) { return strata_reap_malloc(r, 2u << 20); },  // a mapping of its own
      [](strata_reap* r) { return strata_reap_aligned_alloc(r, 256, 100); },
      [](strata_reap* r) { return strata_reap_calloc(r, 3, 50); },
      [](strata_reap* r) { return strata_reap_realloc(r, nullptr, 70); },
  };
  for (Allocate allocate : kWays) {
    strata_reap* root = strata_reap_create(nullptr);
    strata_reap* child = strata_reap_create(root);
    strata_reap* grandchild = strata_reap_create(child);
    const std::size_t chunks_empty = stats_of(grandchild).chunks;
    for (int round = 0; round < 3; ++round) {
      ASSERT_NE(allocate(grandchild), nullptr);
      ASSERT_NE(allocate(grandchild), nullptr);
      EXPECT_EQ(stats_of(grandchild).objects_live, 2u);
      if (round == 1) strata_reap_clear(child);  // through the untouched child itself
      else strata_reap_clear(root);               // through two reaps nothing was allocated from
      EXPECT_EQ(stats_of(grandchild).objects_live, 0u) << "round " << round;
      EXPECT_EQ(stats_of(grandchild).chunks, chunks_empty) << "round " << round;
      EXPECT_EQ(stats_of(child).objects_live, 0u);
    }
    ASSERT_NE(allocate(root), nullptr);  // a touched parent, an untouched subtree
    strata_reap_clear(root);
    EXPECT_EQ(stats_of(root).objects_live, 0u);
    strata_reap_destroy(root);
  }
}

}  // namespace
