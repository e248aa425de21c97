// IntrusiveSList: a LIFO list threaded through links inside the nodes.
#include <gtest/gtest.h>

#include <vector>

#include "intrusive_list_items.hpp"
#include "strata/layers/building_blocks/intrusive_slist.hpp"

using strata::layers::IntrusiveSList;
using strata::test::ListItem;
using strata::test::NumberedItems;
using strata::test::values;

namespace {
using Items = IntrusiveSList<ListItem, &ListItem::slink>;
using OtherItems = IntrusiveSList<ListItem, &ListItem::other_slink>;
}  // namespace

static_assert(sizeof(Items) == sizeof(ListItem*), "the list is one pointer");

TEST(IntrusiveSList, IsLastInFirstOut) {
  NumberedItems<3> items;
  Items list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.pop_front(), nullptr);
  for (ListItem& item : items) list.push_front(&item);
  EXPECT_EQ(list.front(), &items[2]);
  EXPECT_EQ(values(list), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(list.pop_front(), &items[2]);
  EXPECT_EQ(list.pop_front(), &items[1]);
  EXPECT_EQ(list.pop_front(), &items[0]);
  EXPECT_EQ(list.pop_front(), nullptr);
  EXPECT_TRUE(list.empty());
}

TEST(IntrusiveSList, WalksWithNext) {
  NumberedItems<3> items;
  Items list;
  for (ListItem& item : items) list.push_front(&item);
  EXPECT_EQ(Items::next(&items[2]), &items[1]);
  EXPECT_EQ(Items::next(&items[1]), &items[0]);
  EXPECT_EQ(Items::next(&items[0]), nullptr);
}

TEST(IntrusiveSList, LeavesTheRestOfTheNodeAlone) {
  ListItem item;
  item.before = 7;
  item.value = 9;
  Items list;
  list.push_front(&item);
  EXPECT_EQ(list.pop_front(), &item);
  EXPECT_EQ(item.before, 7);
  EXPECT_EQ(item.value, 9);
}

TEST(IntrusiveSList, ANodeCanBeInOneListPerLink) {
  NumberedItems<2> items;
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
  NumberedItems<4> items;
  Items list;
  for (ListItem& item : items) list.push_front(&item);
  Items elsewhere;
  std::vector<int> seen;
  list.drain([&](ListItem* item) {
    seen.push_back(item->value);
    elsewhere.push_front(item);  // overwrites the link drain has already read
  });
  EXPECT_EQ(seen, (std::vector<int>{3, 2, 1, 0}));
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(values(elsewhere), (std::vector<int>{0, 1, 2, 3}));
}

TEST(IntrusiveSList, MovingTakesTheNodesAndClearForgetsThem) {
  NumberedItems<2> items;
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
  ListItem items[3];
  Items list;
  for (int i = 0; i < 3; ++i) {
    items[i].value = i + 1;
    list.push_front(&items[i]);
  }
  int weighted = 0, position = 1;
  while (ListItem* item = list.pop_front()) weighted += item->value * position++;
  return weighted;  // 3*1 + 2*2 + 1*3
}
static_assert(sum_in_lifo_order() == 10);
