// strata::platform's page mapping beyond map_pages: at an address, over a
// range, moved and grown by the kernel.
#include <gtest/gtest.h>

#include <cstring>

#include "strata/platform.hpp"

namespace platform = strata::platform;

namespace {
char* byte_ptr(void* p) { return static_cast<char*>(p); }
}  // namespace

TEST(PlatformPages, MapPagesUnreservedGivesZeroedWritablePages) {
  const std::size_t bytes = 4 * platform::page_size();
  char* p = byte_ptr(platform::map_pages(bytes, platform::Swap::kUnreserved));
  ASSERT_NE(p, nullptr);
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(p[i], 0);
  std::memset(p, 7, bytes);
  platform::unmap_pages(p, bytes);
}

TEST(PlatformPages, MapPagesAtTakesAFreeAddressAndRefusesATakenOne) {
  const std::size_t page = platform::page_size();
  char* hole = byte_ptr(platform::map_pages(2 * page));
  ASSERT_NE(hole, nullptr);
  platform::unmap_pages(hole + page, page);  // [hole+page, hole+2*page) is free now
  EXPECT_EQ(platform::map_pages_at(hole, page), nullptr) << "taken: never mapped over";
  void* p = platform::map_pages_at(hole + page, page);
  ASSERT_EQ(p, hole + page);
  byte_ptr(p)[0] = 1;
  platform::unmap_pages(hole, 2 * page);
}

TEST(PlatformPages, ReplacePagesGivesZeroesInPlace) {
  const std::size_t bytes = 2 * platform::page_size();
  char* p = byte_ptr(platform::map_pages(bytes));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x5a, bytes);
  ASSERT_TRUE(platform::replace_pages(p, bytes));
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(p[i], 0);
  platform::unmap_pages(p, bytes);
}

TEST(PlatformPages, MovePagesKeepsTheContents) {
  const std::size_t page = platform::page_size();
  char* from = byte_ptr(platform::map_pages(page));
  char* to = byte_ptr(platform::map_pages(2 * page));
  ASSERT_NE(from, nullptr);
  ASSERT_NE(to, nullptr);
  std::memset(from, 0x3c, page);
  ASSERT_TRUE(platform::move_pages(from, page, 2 * page, to));
  for (std::size_t i = 0; i < page; ++i) ASSERT_EQ(to[i], 0x3c);
  for (std::size_t i = page; i < 2 * page; ++i) ASSERT_EQ(to[i], 0) << "the grown part is fresh";
  EXPECT_NE(platform::map_pages_at(from, page), nullptr) << "the old range is free again";
  platform::unmap_pages(from, page);
  platform::unmap_pages(to, 2 * page);
}

TEST(PlatformPages, GrowPagesInPlaceOnlyIntoFreeSpace) {
  const std::size_t page = platform::page_size();
  char* p = byte_ptr(platform::map_pages(3 * page));
  ASSERT_NE(p, nullptr);
  platform::unmap_pages(p + page, 2 * page);
  p[0] = 9;
  ASSERT_TRUE(platform::grow_pages_in_place(p, page, 2 * page));
  EXPECT_EQ(p[0], 9);
  p[page] = 1;  // the grown page is writable
  ASSERT_NE(platform::map_pages_at(p + 2 * page, page), nullptr);
  EXPECT_FALSE(platform::grow_pages_in_place(p, 2 * page, 3 * page)) << "the next page is taken";
  platform::unmap_pages(p, 3 * page);
}
