// IntrusiveSList: a LIFO list threaded through links inside the nodes.
#include <gtest/gtest.h>

#include <vector>

#include "strata/layers/building_blocks/intrusive_slist.hpp"

using strata::layers::IntrusiveSList;
using strata::layers::SListLink;

namespace {

// The link in the middle of the node: the list must find it there, not assume offset 0.
struct Item {
  int before = 0;
  SListLink<Item> link;
  SListLink<Item> other;  // a second list the same node can be in
  int value = 0;
};
using Items = IntrusiveSList<Item, &Item::link>;
using OtherItems = IntrusiveSList<Item, &Item::other>;

std::vector<int> values(const Items& list) {
  std::vector<int> out;
  for (const Item& item : list) out.push_back(item.value);
  return out;
}

}  // namespace

static_assert(sizeof(Items) == sizeof(Item*), "the list is one pointer");

TEST(IntrusiveSList, IsLastInFirstOut) {
  Item items[3];
  Items list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.pop_front(), nullptr);
  for (int i = 0; i < 3; ++i) {
    items[i].value = i;
    list.push_front(&items[i]);
  }
  EXPECT_EQ(list.front(), &items[2]);
  EXPECT_EQ(values(list), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(list.pop_front(), &items[2]);
  EXPECT_EQ(list.pop_front(), &items[1]);
  EXPECT_EQ(list.pop_front(), &items[0]);
  EXPECT_EQ(list.pop_front(), nullptr);
  EXPECT_TRUE(list.empty());
}

TEST(IntrusiveSList, WalksWithNext) {
  Item items[3];
  Items list;
  for (Item& item : items) list.push_front(&item);
  EXPECT_EQ(Items::next(&items[2]), &items[1]);
  EXPECT_EQ(Items::next(&items[1]), &items[0]);
  EXPECT_EQ(Items::next(&items[0]), nullptr);
}

TEST(IntrusiveSList, LeavesTheRestOfTheNodeAlone) {
  Item item;
  item.before = 7;
  item.value = 9;
  Items list;
  list.push_front(&item);
  EXPECT_EQ(list.pop_front(), &item);
  EXPECT_EQ(item.before, 7);
  EXPECT_EQ(item.value, 9);
}

TEST(IntrusiveSList, ANodeCanBeInOneListPerLink) {
  Item items[2];
  items[0].value = 0;
  items[1].value = 1;
  Items first;
  OtherItems second;
  first.push_front(&items[0]);
  first.push_front(&items[1]);
  second.push_front(&items[1]);
  second.push_front(&items[0]);
  EXPECT_EQ(values(first), (std::vector<int>{1, 0}));
  EXPECT_EQ(second.pop_front(), &items[0]);
  EXPECT_EQ(second.pop_front(), &items[1]);
  EXPECT_EQ(values(first), (std::vector<int>{1, 0})) << "the other list's link is untouched";
}

TEST(IntrusiveSList, DrainHandsOutEveryNodeAndMayReuseIt) {
  Item items[4];
  Items list;
  for (int i = 0; i < 4; ++i) {
    items[i].value = i;
    list.push_front(&items[i]);
  }
  Items elsewhere;
  std::vector<int> seen;
  list.drain([&](Item* item) {
    seen.push_back(item->value);
    elsewhere.push_front(item);  // overwrites the link drain has already read
  });
  EXPECT_EQ(seen, (std::vector<int>{3, 2, 1, 0}));
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(values(elsewhere), (std::vector<int>{0, 1, 2, 3}));
}

TEST(IntrusiveSList, MovingTakesTheNodesAndClearForgetsThem) {
  Item items[2];
  Items list;
  list.push_front(&items[0]);
  list.push_front(&items[1]);
  Items moved(std::move(list));
  EXPECT_TRUE(list.empty());  // NOLINT(bugprone-use-after-move): moving empties the source
  EXPECT_EQ(moved.front(), &items[1]);
  list = std::move(moved);
  EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(list.pop_front(), &items[1]);
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.pop_front(), nullptr);
}

// Usable in constant expressions (so in constexpr code and constinit data).
constexpr int sum_in_lifo_order() {
  Item items[3];
  Items list;
  for (int i = 0; i < 3; ++i) {
    items[i].value = i + 1;
    list.push_front(&items[i]);
  }
  int weighted = 0, position = 1;
  while (Item* item = list.pop_front()) weighted += item->value * position++;
  return weighted;  // 3*1 + 2*2 + 1*3
}
static_assert(sum_in_lifo_order() == 10);
