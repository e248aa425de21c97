// Built and run only in the ASan build (make test-asan): a use-after-free and
// a use-after-clear of reap memory are reported by AddressSanitizer.
#include <gtest/gtest.h>

#include "reap_test_support.hpp"
#include "strata/reap.h"

#if !defined(__SANITIZE_ADDRESS__)
#error "test_asan.cpp belongs to the ASan build (STRATA_SANITIZE=address)"
#endif

namespace {

int read_byte(const void* p, std::ptrdiff_t i) { return static_cast<const volatile unsigned char*>(p)[i]; }

class ReapAsan : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(ReapAsan, UseAfterFreeIsReported) {
  strata_reap* reap = strata_reap_create(nullptr);
  void* small = strata_reap_malloc(reap, 40);
  void* large = strata_reap_malloc(reap, 30000);
  strata_reap_free(reap, small);
  strata_reap_free(reap, large);
  EXPECT_DEATH(read_byte(small, 20), "use-after-poison");
  EXPECT_DEATH(read_byte(large, 100), "use-after-poison|unknown-crash|SEGV");
  strata_reap_destroy(reap);
}

TEST_F(ReapAsan, UseAfterClearIsReported) {
  strata_reap* reap = strata_reap_create(nullptr);
  void* small = strata_reap_malloc(reap, 40);
  void* medium = strata_reap_malloc(reap, 9000);
  EXPECT_EQ(read_byte(small, 0) | 1, read_byte(small, 0) | 1);  // live: fine
  strata_reap_clear(reap);
  EXPECT_DEATH(read_byte(small, 0), "use-after-poison");
  EXPECT_DEATH(read_byte(medium, 4000), "use-after-poison");
  strata_reap_destroy(reap);
}

TEST_F(ReapAsan, ReadingPastTheObjectIsReported) {
  strata_reap* reap = strata_reap_create(nullptr);
  void* p = strata_reap_malloc(reap, 32);  // the stream after it is not handed out
  const std::size_t usable = strata_reap_usable_size(reap, p);
  EXPECT_EQ(read_byte(p, usable - 1) | 1, read_byte(p, usable - 1) | 1);  // its own: fine
  EXPECT_DEATH(read_byte(p, usable), "use-after-poison");       // the next object's tag byte
  EXPECT_DEATH(read_byte(p, usable + 8), "use-after-poison");   // memory not handed out
  void* q = strata_reap_malloc(reap, 32);                       // the next one, adjacent
  EXPECT_EQ(static_cast<char*>(q), static_cast<char*>(p) + usable + 1);
  EXPECT_DEATH(read_byte(q, -1), "use-after-poison|unknown-crash");  // its tag is still hidden (a partial granule)
  strata_reap_destroy(reap);
}

TEST_F(ReapAsan, ReusedMemoryOfASplitObjectIsPoisonedExactly) {
  strata_reap* reap = strata_reap_create(nullptr);
  strata::test::start_reusing(reap);  // big's free closes the window: small cuts it
  void* big = strata_reap_malloc(reap, 200);
  strata_reap_malloc(reap, 8);
  strata_reap_free(reap, big);
  void* small = strata_reap_malloc(reap, 40);  // the front of the freed slot
  ASSERT_EQ(small, big);
  EXPECT_EQ(read_byte(small, 39) | 1, read_byte(small, 39) | 1);
  EXPECT_DEATH(read_byte(small, 100), "use-after-poison");  // the rest of the slot waits, freed
  strata_reap_destroy(reap);
}

}  // namespace
