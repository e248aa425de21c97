// IntrusiveDList: a doubly linked list threaded through links inside the nodes,
// with a tail (kHeadAndTail) or without (kHeadOnly).
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include "intrusive_list_items.hpp"
#include "strata/layers/building_blocks/intrusive_dlist.hpp"

using strata::layers::IntrusiveDList;
using strata::layers::ListEnds;
using strata::test::ListItem;
using strata::test::values;

namespace {

using Items = IntrusiveDList<ListItem, &ListItem::link>;
using HeadOnlyItems = IntrusiveDList<ListItem, &ListItem::link, ListEnds::kHeadOnly>;
using OtherItems = IntrusiveDList<ListItem, &ListItem::other_link>;

// Walks back from the tail: the prev links must mirror the next links.
std::vector<int> values_backwards(const Items& list) {
  std::vector<int> out;
  for (ListItem* item = list.back(); item != nullptr; item = Items::prev(item)) out.push_back(item->value);
  std::reverse(out.begin(), out.end());
  return out;
}

// Five items numbered 0..4 for each test.
class DListOfFive : public ::testing::Test {
 protected:
  strata::test::NumberedItems<5> items;
};

}  // namespace

static_assert(sizeof(Items) == 2 * sizeof(ListItem*));
static_assert(sizeof(HeadOnlyItems) == sizeof(ListItem*), "a head-only list is one pointer");

TEST_F(DListOfFive, PushBackAndPopFrontIsFirstInFirstOut) {
  Items list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.pop_front(), nullptr);
  for (ListItem& item : items) list.push_back(&item);
  EXPECT_EQ(list.front(), &items[0]);
  EXPECT_EQ(list.back(), &items[4]);
  EXPECT_EQ(values(list), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values_backwards(list), (std::vector<int>{0, 1, 2, 3, 4}));
  for (ListItem& item : items) EXPECT_EQ(list.pop_front(), &item);
  EXPECT_EQ(list.pop_front(), nullptr);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.back(), nullptr) << "the tail went with the last node";
}

TEST_F(DListOfFive, PushFrontPrepends) {
  Items list;
  list.push_front(&items[1]);
  list.push_back(&items[2]);
  list.push_front(&items[0]);
  EXPECT_EQ(values(list), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(values_backwards(list), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(list.back(), &items[2]);
}

TEST_F(DListOfFive, RemovesFromAnywhere) {
  Items list;
  for (ListItem& item : items) list.push_back(&item);
  list.remove(&items[2]);  // middle
  EXPECT_EQ(values(list), (std::vector<int>{0, 1, 3, 4}));
  list.remove(&items[0]);  // head
  EXPECT_EQ(list.front(), &items[1]);
  list.remove(&items[4]);  // tail
  EXPECT_EQ(list.back(), &items[3]);
  EXPECT_EQ(values(list), (std::vector<int>{1, 3}));
  EXPECT_EQ(values_backwards(list), (std::vector<int>{1, 3}));
  list.remove(&items[1]);
  list.remove(&items[3]);  // the only one
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.back(), nullptr);
  list.push_back(&items[2]);
  EXPECT_EQ(list.front(), &items[2]) << "head and tail were reset properly";
  EXPECT_EQ(list.back(), &items[2]);
}

TEST_F(DListOfFive, HeadOnlyPushesFrontAndRemovesFromAnywhere) {
  HeadOnlyItems list;
  for (ListItem& item : items) list.push_front(&item);
  EXPECT_EQ(values(list), (std::vector<int>{4, 3, 2, 1, 0}));
  list.remove(&items[0]);  // last
  list.remove(&items[4]);  // first
  list.remove(&items[2]);  // middle
  EXPECT_EQ(values(list), (std::vector<int>{3, 1}));
  EXPECT_EQ(HeadOnlyItems::prev(&items[1]), &items[3]);
  EXPECT_EQ(list.pop_front(), &items[3]);
  EXPECT_EQ(HeadOnlyItems::prev(list.front()), nullptr) << "the new first node has no prev";
  EXPECT_EQ(list.pop_front(), &items[1]);
  EXPECT_EQ(list.pop_front(), nullptr);
}

TEST_F(DListOfFive, ReplaceKeepsTheNodesPlace) {
  Items list;
  for (int i = 0; i < 3; ++i) list.push_back(&items[i]);
  list.replace(&items[1], &items[3]);  // middle
  EXPECT_EQ(values(list), (std::vector<int>{0, 3, 2}));
  list.replace(&items[0], &items[4]);  // head
  EXPECT_EQ(list.front(), &items[4]);
  list.replace(&items[2], &items[1]);  // tail
  EXPECT_EQ(list.back(), &items[1]);
  EXPECT_EQ(values(list), (std::vector<int>{4, 3, 1}));
  EXPECT_EQ(values_backwards(list), (std::vector<int>{4, 3, 1}));
  Items one;
  one.push_back(&items[0]);
  one.replace(&items[0], &items[2]);  // the only one
  EXPECT_EQ(one.front(), &items[2]);
  EXPECT_EQ(one.back(), &items[2]);
  EXPECT_EQ(values_backwards(one), (std::vector<int>{2}));
}

TEST_F(DListOfFive, HeadOnlyReplaceKeepsTheNodesPlace) {
  HeadOnlyItems list;
  for (int i = 0; i < 3; ++i) list.push_front(&items[i]);  // 2 1 0
  list.replace(&items[2], &items[4]);  // head
  list.replace(&items[0], &items[3]);  // last
  EXPECT_EQ(values(list), (std::vector<int>{4, 1, 3}));
  EXPECT_EQ(HeadOnlyItems::prev(&items[1]), &items[4]);
  EXPECT_EQ(HeadOnlyItems::prev(&items[3]), &items[1]);
  EXPECT_EQ(HeadOnlyItems::prev(&items[4]), nullptr);
}

TEST_F(DListOfFive, ANodeCanBeInOneListPerLink) {
  Items first;
  OtherItems second;
  for (ListItem& item : items) {
    first.push_back(&item);
    second.push_front(&item);
  }
  second.remove(&items[2]);
  EXPECT_EQ(values(first), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values(second), (std::vector<int>{4, 3, 1, 0}));
  EXPECT_EQ(items[2].before, 0);
}

TEST_F(DListOfFive, DrainHandsOutEveryNodeAndMayReuseIt) {
  Items list;
  for (ListItem& item : items) list.push_back(&item);
  Items elsewhere;
  std::vector<int> seen;
  list.drain([&](ListItem* item) {
    seen.push_back(item->value);
    elsewhere.push_front(item);  // overwrites the links drain has already read
  });
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.back(), nullptr);
  EXPECT_EQ(values(elsewhere), (std::vector<int>{4, 3, 2, 1, 0}));
}

TEST_F(DListOfFive, MovingTakesTheNodesAndClearForgetsThem) {
  Items list;
  for (ListItem& item : items) list.push_back(&item);
  Items moved(std::move(list));
  EXPECT_TRUE(list.empty());  // NOLINT(bugprone-use-after-move): moving empties the source
  EXPECT_EQ(list.back(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(values(moved), (std::vector<int>{0, 1, 2, 3, 4}));
  list = std::move(moved);
  EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(list.back(), &items[4]);
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.back(), nullptr);
}

// Random pushes, pops and removes against a std::deque, both kinds of list.
template <class List>
void check_against_model(unsigned seed) {
  constexpr int kNodes = 64;
  std::vector<ListItem> items(kNodes);
  for (int i = 0; i < kNodes; ++i) items[i].value = i;
  std::vector<bool> in_list(kNodes, false);
  std::deque<int> model;
  List list;
  std::mt19937 rng(seed);
  for (int step = 0; step < 20000; ++step) {
    const int i = static_cast<int>(rng() % kNodes);
    const unsigned op = rng() % 4;
    if (!in_list[i] && op == 0) {
      list.push_front(&items[i]);
      model.push_front(i);
      in_list[i] = true;
    } else if (!in_list[i]) {
      if constexpr (requires { list.push_back(&items[i]); }) {
        list.push_back(&items[i]);
        model.push_back(i);
      } else {
        list.push_front(&items[i]);
        model.push_front(i);
      }
      in_list[i] = true;
    } else if (op == 0) {
      ListItem* first = list.pop_front();
      ASSERT_NE(first, nullptr);
      ASSERT_EQ(first->value, model.front());
      in_list[model.front()] = false;
      model.pop_front();
    } else {
      list.remove(&items[i]);
      model.erase(std::find(model.begin(), model.end(), i));
      in_list[i] = false;
    }
    ASSERT_EQ(list.empty(), model.empty());
    if (step % 97 == 0) {
      ASSERT_EQ(values(list), std::vector<int>(model.begin(), model.end()));
    }
  }
  ASSERT_EQ(values(list), std::vector<int>(model.begin(), model.end()));
}

TEST(IntrusiveDList, FollowsADequeModel) {
  for (unsigned seed = 1; seed <= 4; ++seed) check_against_model<Items>(seed);
}

TEST(IntrusiveDList, HeadOnlyFollowsADequeModel) {
  for (unsigned seed = 1; seed <= 4; ++seed) check_against_model<HeadOnlyItems>(seed);
}

// Usable in constant expressions (so in constexpr code and constinit data).
constexpr int order_after_removals() {
  ListItem items[4];
  Items list;
  for (int i = 0; i < 4; ++i) {
    items[i].value = i + 1;
    list.push_back(&items[i]);
  }
  list.remove(&items[1]);
  list.remove(&items[3]);
  int digits = 0;
  for (const ListItem& item : list) digits = digits * 10 + item.value;
  return digits;
}
static_assert(order_after_removals() == 13);
