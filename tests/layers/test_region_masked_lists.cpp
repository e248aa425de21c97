// MaskedLists (region/detail/masked_lists.hpp): the numbered free lists and
// their mask that ClearOptimizedHeap and SizedReuseHeap share. (The
// instrumented links are the reaps' to test: they hide freed objects.)
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "strata/layers/region/detail/masked_lists.hpp"

namespace {

struct Node {
  Node* next;
};

using strata::layers::detail::MaskedLists;

TEST(RegionMaskedLists, PushAndPopAreLifoPerList) {
  MaskedLists<Node, 130> lists;
  Node a{}, b{}, c{};
  EXPECT_TRUE(lists.empty(7));
  lists.push<false>(7, &a);
  lists.push<false>(7, &b);
  lists.push<false>(129, &c);
  EXPECT_EQ(lists.front(7), &b);
  EXPECT_EQ(lists.pop<false>(7), &b);
  EXPECT_EQ(lists.pop<false>(7), &a);
  EXPECT_TRUE(lists.empty(7));
  EXPECT_EQ(lists.pop<false>(129), &c);
  EXPECT_TRUE(lists.empty(129));
}

TEST(RegionMaskedLists, FirstFromFindsTheFirstListHoldingANodeAcrossWords) {
  MaskedLists<Node, 257> lists;  // five mask words, the last one used by one list
  Node nodes[4]{};
  EXPECT_EQ(lists.firstFrom(0), lists.kNone);
  lists.push<false>(3, &nodes[0]);
  lists.push<false>(64, &nodes[1]);
  lists.push<false>(200, &nodes[2]);
  lists.push<false>(256, &nodes[3]);
  EXPECT_EQ(lists.firstFrom(0), 3u);
  EXPECT_EQ(lists.firstFrom(3), 3u);
  EXPECT_EQ(lists.firstFrom(4), 64u);    // the next word
  EXPECT_EQ(lists.firstFrom(65), 200u);  // a word with nothing skipped
  EXPECT_EQ(lists.firstFrom(201), 256u);
  EXPECT_EQ(lists.firstFrom(257), lists.kNone);  // past the last list
  EXPECT_EQ(lists.pop<false>(256), &nodes[3]);   // the emptied list leaves the mask
  EXPECT_EQ(lists.firstFrom(201), lists.kNone);
}

TEST(RegionMaskedLists, ClearEmptiesEveryList) {
  MaskedLists<Node, 64> lists;
  std::vector<Node> nodes(64);
  for (std::size_t i = 0; i < nodes.size(); i += 5) lists.push<false>(i, &nodes[i]);
  lists.clear();
  for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_TRUE(lists.empty(i)) << i;
  EXPECT_EQ(lists.firstFrom(0), lists.kNone);
  lists.push<false>(63, &nodes[63]);  // usable again
  EXPECT_EQ(lists.firstFrom(0), 63u);
}

}  // namespace
