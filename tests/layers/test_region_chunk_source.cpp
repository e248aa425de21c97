// ChunkSource: whole mappings, counted, through a process-wide cache of
// given-back mappings; fresh memory hidden from ASan/Valgrind.
#include <gtest/gtest.h>

#include <cstddef>

#include "strata/layers.hpp"

namespace {

using strata::layers::ChunkSource;

TEST(ChunkSource, CountsWhatItHoldsAndReusesGivenBackMappings) {
  ChunkSource source;
  void* a = source.map(64 * 1024);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(source.bytesHeld(), 64u * 1024);
  EXPECT_EQ(source.mappings(), 1u);
  strata::layers::instrument::expose(a, 64 * 1024);
  static_cast<char*>(a)[100] = 1;  // really mapped, writable
  source.unmap(a, 64 * 1024);
  EXPECT_EQ(source.bytesHeld(), 0u);
  EXPECT_EQ(source.mappings(), 0u);
  void* b = source.map(64 * 1024);  // the process-wide cache gives it back
  EXPECT_EQ(b, a);
  source.unmap(b, 64 * 1024);
}

TEST(ChunkSource, MapsWholePagesThatCanBeWritten) {
  EXPECT_EQ(strata::layers::round_to_pages(1), strata::platform::page_size());
  EXPECT_EQ(strata::layers::round_to_pages(strata::platform::page_size()), strata::platform::page_size());
  ChunkSource source;
  const std::size_t bytes = 3 * strata::platform::page_size();
  auto* p = static_cast<unsigned char*>(source.map(bytes));
  ASSERT_NE(p, nullptr);
  strata::layers::instrument::expose(p, bytes);
  for (std::size_t i = 0; i < bytes; i += 512) p[i] = 7;
  source.unmap(p, bytes);
  EXPECT_EQ(source.mappings(), 0u);
}

}  // namespace
