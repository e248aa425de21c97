// STRATA_ASSERT inside libstrata: the checked build (strata_core_checked)
// checks its invariants in every build type. An invariant broken on purpose
// stops the program with the assertion's text.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

// This file's own STRATA_ASSERT is on in every build type too.
#undef STRATA_ASSERTIONS
#define STRATA_ASSERTIONS 1
#include "strata/assert.hpp"
#include "strata/strata.h"

namespace {

// A large object's boundary tag (src/malloc/large_heap.cpp's Chunk): the
// predecessor's size, then the chunk's own size with four flag bits, in the
// 16 bytes before the object.
std::size_t* size_word_of(void* p) { return reinterpret_cast<std::size_t*>(static_cast<char*>(p) - 8); }
std::size_t chunk_size_of(void* p) { return *size_word_of(p) & ~std::size_t{15}; }

TEST(StrataAssertionDeathTest, FreeNextToAFreeChunkOfTheWrongSizeFires) {
  // Two neighbouring large objects, each between live ones.
  void* objects[6];
  for (void*& p : objects) p = strata_malloc(100000);
  int pair = -1;
  for (int i = 1; i + 2 < 6 && pair < 0; ++i)
    if (static_cast<char*>(objects[i]) + chunk_size_of(objects[i]) == objects[i + 1]) pair = i;
  ASSERT_GE(pair, 0) << "no two large objects were allocated side by side";
  void* a = objects[pair];
  void* b = objects[pair + 1];
  strata_free(a);  // a free chunk now, b's predecessor
  ASSERT_EQ(*size_word_of(a) & 1, 0u) << "a is not free";
  *size_word_of(a) -= 16;  // its size no longer matches b's boundary tag
  EXPECT_DEATH(strata_free(b),
               "strata: assertion failed: !prev \\|\\| prev->size\\(\\) == prev_size at .*large_heap.cpp");
  *size_word_of(a) += 16;  // repaired: the heap is whole again
  for (void* p : objects)
    if (p != a) strata_free(p);
}

TEST(StrataAssertionDeathTest, MessageNamesConditionFileAndLine) {
  // The layers' and libstrata's macro is the same one: its message, once.
  EXPECT_DEATH(STRATA_ASSERT(1 + 1 == 3), "strata: assertion failed: 1 \\+ 1 == 3 at .*test_assertions.cpp:[0-9]+");
}

}  // namespace
