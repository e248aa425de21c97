// The nodes the intrusive list tests thread their lists through.
#pragma once
#include <vector>

#include "strata/layers/building_blocks/intrusive_dlist.hpp"
#include "strata/layers/building_blocks/intrusive_slist.hpp"

namespace strata::test {

// The links sit in the middle of the node, between other data: a list must
// find its link there (not assume offset 0) and touch nothing else. Two links
// of each kind: a node can be in two lists at once.
struct ListItem {
  int before = 0;
  strata::layers::SListLink<ListItem> slink;
  strata::layers::SListLink<ListItem> other_slink;
  strata::layers::DListLink<ListItem> link;
  strata::layers::DListLink<ListItem> other_link;
  int value = 0;
};

// Items numbered 0, 1, 2, ...
template <int N>
struct NumberedItems {
  NumberedItems() {
    for (int i = 0; i < N; ++i) items[i].value = i;
  }
  ListItem& operator[](int i) { return items[i]; }
  ListItem* begin() { return items; }
  ListItem* end() { return items + N; }
  ListItem items[N];
};

// The values of a list's nodes, first to last (by its iterator).
template <class List>
std::vector<int> values(const List& list) {
  std::vector<int> out;
  for (const ListItem& item : list) out.push_back(item.value);
  return out;
}

}  // namespace strata::test
