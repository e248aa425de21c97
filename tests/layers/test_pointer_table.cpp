// PointerTable is the record behind DebugHeap and ANSIWrapper's over-aligned
// objects: checked here against std::unordered_map, with clustered keys so
// that probe runs wrap around and deletions shift entries back.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "strata/layers.hpp"
#include "util_test_heaps.hpp"

using strata::layers::detail::PointerTable;

namespace {

TEST(PointerTable, AgreesWithAReferenceMapUnderRandomInsertsAndErases) {
  strata::test::FailingHeap heap;
  PointerTable table;
  std::unordered_map<std::uintptr_t, std::uintptr_t> reference;
  std::mt19937_64 rng(5);
  // Keys from a small window: many share home slots, runs wrap the table's end.
  auto random_key = [&] { return static_cast<std::uintptr_t>(0x10000 + (rng() % 3000) * 16); };
  for (int step = 0; step < 200000; ++step) {
    const std::uintptr_t key = random_key();
    const void* k = reinterpret_cast<const void*>(key);
    switch (rng() % 3) {
      case 0: {
        const std::uintptr_t value = rng();
        ASSERT_TRUE(table.assign(heap, k, value));
        reference[key] = value;
        break;
      }
      case 1:
        ASSERT_EQ(table.erase(k), reference.erase(key) == 1) << step;
        break;
      default: {
        const std::uintptr_t* found = table.find(k);
        const auto it = reference.find(key);
        ASSERT_EQ(found != nullptr, it != reference.end()) << step;
        if (found) {
          ASSERT_EQ(*found, it->second);
        }
      }
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  for (const auto& [key, value] : reference) {
    const std::uintptr_t* found = table.find(reinterpret_cast<const void*>(key));
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, value);
  }
  table.release(heap);
  EXPECT_EQ(heap.live(), 0u);
}

TEST(PointerTable, AFailedGrowLeavesTheTableAsItWas) {
  strata::test::FailingHeap heap;
  PointerTable table;
  for (std::uintptr_t i = 1; i <= 32; ++i) {  // fills the first 64 slots to half
    ASSERT_TRUE(table.assign(heap, reinterpret_cast<const void*>(i * 16), i));
  }
  heap.fail_after(0);
  EXPECT_FALSE(table.assign(heap, reinterpret_cast<const void*>(33 * 16), 33));
  EXPECT_EQ(table.size(), 32u);
  for (std::uintptr_t i = 1; i <= 32; ++i) {
    const std::uintptr_t* found = table.find(reinterpret_cast<const void*>(i * 16));
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, i);
  }
  EXPECT_EQ(table.find(reinterpret_cast<const void*>(33 * 16)), nullptr);
  table.release(heap);
}

}  // namespace
