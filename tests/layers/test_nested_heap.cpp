// NestedHeap: a tree of heaps walked parents-first (clear) or children-first
// (destroy), without recursion.
#include <gtest/gtest.h>

#include <vector>

#include "strata/layers.hpp"

namespace {

struct Named {
  int name = 0;
};
using Node = strata::layers::NestedHeap<Named>;

std::vector<int> pre_order(Node& top) {
  std::vector<int> seen;
  top.forEachPreOrder([&](Node* n) { seen.push_back(n->name); });
  return seen;
}
std::vector<int> post_order(Node& top) {
  std::vector<int> seen;
  top.forEachPostOrder([&](Node* n) { seen.push_back(n->name); });
  return seen;
}

// n[1..6] as:  1 ─┬─ 2 ─┬─ 4
//                  │     └─ 5
//                  └─ 3 ── 6      (children are linked in front: the last attached comes first)
void build_sample_tree(Node (&n)[7]) {
  for (int i = 1; i <= 6; ++i) n[i].name = i;
  n[2].attachTo(&n[1]);
  n[3].attachTo(&n[1]);
  n[4].attachTo(&n[2]);
  n[5].attachTo(&n[2]);
  n[6].attachTo(&n[3]);
}

TEST(NestedHeap, WalksSubtreesParentsFirstOrChildrenFirst) {
  Node n[7];
  build_sample_tree(n);
  EXPECT_EQ(pre_order(n[1]), (std::vector<int>{1, 3, 6, 2, 5, 4}));
  EXPECT_EQ(post_order(n[1]), (std::vector<int>{6, 3, 5, 4, 2, 1}));
  EXPECT_EQ(pre_order(n[2]), (std::vector<int>{2, 5, 4}));  // a subtree stays inside itself
  EXPECT_EQ(post_order(n[2]), (std::vector<int>{5, 4, 2}));
  EXPECT_EQ(n[4].parent(), &n[2]);
  n[2].detach();
  EXPECT_EQ(pre_order(n[1]), (std::vector<int>{1, 3, 6}));
  EXPECT_EQ(n[2].parent(), nullptr);
  n[6].detach();
  n[3].detach();
  EXPECT_EQ(post_order(n[1]), (std::vector<int>{1}));
}

TEST(NestedHeap, PostOrderLetsTheCallbackDestroyEachNode) {
  // A deep chain: no recursion, and each node is gone before its parent.
  constexpr int kDepth = 100000;
  std::vector<Node*> nodes;
  for (int i = 0; i < kDepth; ++i) {
    nodes.push_back(new Node);
    nodes.back()->name = i;
    if (i > 0) nodes.back()->attachTo(nodes[i - 1]);
  }
  int expected = kDepth - 1;
  nodes[0]->forEachPostOrder([&](Node* n) {
    ASSERT_EQ(n->name, expected--);
    delete n;
  });
  EXPECT_EQ(expected, -1);
}

std::vector<int> marked_pre_order(Node& top) {
  std::vector<int> seen;
  top.forEachMarkedPreOrder([&](Node* n) { seen.push_back(n->name); });
  return seen;
}

TEST(NestedHeap, MarkedWalkVisitsOnlyHeapsNotedInUseAndTheWayToThem) {
  Node n[7];
  build_sample_tree(n);
  EXPECT_EQ(marked_pre_order(n[1]), std::vector<int>{}) << "nothing noted";
  n[4].noteInUse();
  EXPECT_TRUE(n[2].inUseNoted() && n[1].inUseNoted()) << "the ancestors are flagged";
  EXPECT_FALSE(n[3].inUseNoted() || n[5].inUseNoted());
  n[6].noteInUse();
  EXPECT_EQ(marked_pre_order(n[1]), (std::vector<int>{1, 3, 6, 2, 4}));
  EXPECT_EQ(marked_pre_order(n[1]), std::vector<int>{}) << "the walk unflags what it visits";
  n[5].noteInUse();
  EXPECT_EQ(marked_pre_order(n[2]), (std::vector<int>{2, 5})) << "a subtree stays inside itself";
  EXPECT_TRUE(n[1].inUseNoted()) << "an ancestor outside the subtree stays flagged";
  EXPECT_EQ(marked_pre_order(n[1]), (std::vector<int>{1}));
  n[4].noteInUse();
  n[6].noteInUse();
  EXPECT_EQ(pre_order(n[1]), (std::vector<int>{1, 3, 6, 2, 5, 4})) << "the full walk ignores the flags";
  EXPECT_EQ(marked_pre_order(n[1]), (std::vector<int>{1, 3, 6, 2, 4}));
  Node late;
  late.name = 7;
  late.noteInUse();
  late.attachTo(&n[5]);  // a flagged heap attached later flags its new ancestors
  EXPECT_EQ(marked_pre_order(n[1]), (std::vector<int>{1, 2, 5, 7}));
  late.detach();
}

}  // namespace
