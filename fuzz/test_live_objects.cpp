// The fuzz harnesses' model and input reader (docs/fuzzing.md): the model must
// notice each kind of damage the harnesses rely on it to find.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fuzz_input.hpp"
#include "live_objects.hpp"

namespace {

using namespace strata::fuzz;

TEST(FuzzModel, IntactObjectsVerify) {
  std::vector<unsigned char> memory(100);
  LiveObjects objects;
  objects.adopt(objects.slot(0), memory.data(), 37);
  objects.adopt(objects.slot(1), memory.data() + 48, 52);
  objects.verify_all();
  LiveObjects::grow_to(objects.slot(0), 48);
  objects.verify_all();
}

TEST(FuzzModelDeathTest, ChangedByteIsReported) {
  std::vector<unsigned char> memory(64);
  LiveObjects objects;
  objects.adopt(objects.slot(0), memory.data(), 64);
  memory[41] ^= 1;
  EXPECT_DEATH(objects.verify_all(), "fuzz model: live byte changed: offset, size \\(object 0x[0-9a-f]+, 41, 64\\)");
}

TEST(FuzzModelDeathTest, OverlappingObjectsAreReported) {
  std::vector<unsigned char> memory(64);
  LiveObjects objects;
  objects.adopt(objects.slot(0), memory.data(), 32);
  objects.adopt(objects.slot(1), memory.data() + 24, 32);  // an allocator handing out the same bytes twice
  EXPECT_DEATH(verify(objects.slot(0)), "live byte changed: offset, size \\(object 0x[0-9a-f]+, 24, 32\\)");
}

TEST(FuzzModelDeathTest, ReallocLosingThePrefixIsReported) {
  std::vector<unsigned char> before(40), after(80);
  LiveObjects objects;
  LiveObject& o = objects.slot(3);
  objects.adopt(o, before.data(), 40);
  std::copy(before.begin(), before.begin() + 20, after.begin());  // a realloc that copied only half
  EXPECT_DEATH(LiveObjects::moved(o, after.data(), 80), "live byte changed: offset, size \\(object 0x[0-9a-f]+, 20, ");
}

TEST(FuzzModelDeathTest, NonZeroCallocIsReported) {
  std::vector<unsigned char> memory(20, 0);
  verify_zero(memory.data(), memory.size());
  memory[19] = 7;
  EXPECT_DEATH(verify_zero(memory.data(), memory.size()), "calloc memory not zero: offset, size \\(object 0x[0-9a-f]+, 19, 20\\)");
}

TEST(FuzzInput, ReadsPastTheEndGiveZeros) {
  const std::uint8_t data[] = {0x00, 200, 0x80};
  FuzzInput in(data, sizeof data);
  EXPECT_EQ(in.request_size(), 200u);
  EXPECT_FALSE(in.done());
  EXPECT_EQ(in.request_size(), 0u);  // kind 0x80 with both size bytes missing
  EXPECT_TRUE(in.done());
  EXPECT_EQ(in.byte(), 0);
}

TEST(FuzzInput, SizesCoverEveryKindAndRefusedOnes) {
  const std::uint8_t data[] = {0xC3, 0xFF, 0xFF, 0xE0, 0xFF, 0xFF, 0xE8, 20, 0xE8, 24, 0xE8, 18};
  FuzzInput in(data, sizeof data);
  EXPECT_EQ(in.request_size(), std::size_t{0xFFFF} * 4 + 3);
  EXPECT_EQ(in.request_size(), (std::size_t{3} << 19) + std::size_t{0xFFFF} * 16);
  EXPECT_EQ(in.request_size(), SIZE_MAX);
  EXPECT_EQ(in.request_size(), kAbsurdSize);
  EXPECT_EQ(in.request_size(), std::size_t{1} << 21);
}

}  // namespace
