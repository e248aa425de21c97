// Checked mode (STRATA_REAP_CHECK=1, set here before main): misuse aborts
// with a message naming the address and the reap; correct use behaves exactly
// as unchecked (the model test runs in checked mode too).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "reap_test_support.hpp"

#include "support/heap_model.hpp"

namespace {

// Before any reap exists, in this process and in every death-test child.
const bool kCheckedMode = [] { return ::setenv("STRATA_REAP_CHECK", "1", 1) == 0; }();

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// "strata_reap_free(reap R, P): what": the regex of the message.
std::string message(const char* call, const strata_reap* reap, const void* ptr, const std::string& what) {
  return std::string(call) + "\\(reap " + hex(reap) + ", " + hex(ptr) + "\\): " + what;
}

class ReapChecked : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "fast");  // fork: the addresses stay the same in the child
    ASSERT_TRUE(kCheckedMode);
  }
};

TEST_F(ReapChecked, ForeignPointerAborts) {
  strata::test::ScopedReap reap;
  int on_stack = 0;
  EXPECT_DEATH(strata_reap_free(reap, &on_stack), message("strata_reap_free", reap, &on_stack, "foreign pointer"));
  void* from_malloc = std::malloc(32);
  EXPECT_DEATH(strata_reap_free(reap, from_malloc), message("strata_reap_free", reap, from_malloc, "foreign pointer"));
  std::free(from_malloc);
  auto* p = static_cast<char*>(strata_reap_malloc(reap, 64));
  EXPECT_DEATH(strata_reap_free(reap, p + 16), message("strata_reap_free", reap, p + 16, "foreign pointer"));
}

TEST_F(ReapChecked, DoubleFreeAborts) {
  strata::test::ScopedReap reap;
  void* small = strata_reap_malloc(reap, 24);
  void* large = strata_reap_malloc(reap, 20000);
  strata_reap_free(reap, small);
  strata_reap_free(reap, large);
  EXPECT_DEATH(strata_reap_free(reap, small), message("strata_reap_free", reap, small, "double free"));
  EXPECT_DEATH(strata_reap_free(reap, large), message("strata_reap_free", reap, large, "double free"));
}

TEST_F(ReapChecked, FreeThroughTheWrongReapAbortsNamingTheOwner) {
  strata::test::ScopedReap owner;
  strata::test::ScopedReap other;
  strata_reap* child = strata_reap_create(owner);
  void* p = strata_reap_malloc(owner, 24);
  void* q = strata_reap_malloc(child, 24);
  EXPECT_DEATH(strata_reap_free(other, p),
               message("strata_reap_free", other, p, "wrong reap: the object belongs to reap " + hex(owner.reap)));
  EXPECT_DEATH(strata_reap_free(owner, q),  // a child's object is not the parent's
               message("strata_reap_free", owner, q, "wrong reap: the object belongs to reap " + hex(child)));
}

TEST_F(ReapChecked, ReallocAndUsableSizeAreCheckedToo) {
  strata::test::ScopedReap reap;
  void* p = strata_reap_malloc(reap, 24);
  strata_reap_free(reap, p);
  EXPECT_DEATH(strata_reap_realloc(reap, p, 100), message("strata_reap_realloc", reap, p, "double free"));
  EXPECT_DEATH(strata_reap_usable_size(reap, p), message("strata_reap_usable_size", reap, p, "double free"));
}

TEST_F(ReapChecked, ObjectsOfAClearedReapAreGone) {
  strata::test::ScopedReap reap;
  void* p = strata_reap_malloc(reap, 24);
  strata_reap_clear(reap);
  EXPECT_DEATH(strata_reap_free(reap, p), message("strata_reap_free", reap, p, "foreign pointer"));
}

// ---- sized reaps: the size given at free is checked too ----------------

struct ScopedSizedReap {
  strata_reap* reap = strata_reap_create_sized(nullptr);
  ScopedSizedReap() = default;
  ScopedSizedReap(const ScopedSizedReap&) = delete;
  ScopedSizedReap& operator=(const ScopedSizedReap&) = delete;
  ~ScopedSizedReap() { strata_reap_destroy(reap); }
  operator strata_reap*() const { return reap; }
};

TEST_F(ReapChecked, SizedFreeWithTheWrongSizeAborts) {
  ScopedSizedReap reap;
  void* p = strata_reap_malloc_sized(reap, 24);
  void* large = strata_reap_malloc_sized(reap, 100000);
  // 24 and 20 share a slot: a sized reap checks the size asked, not the slot.
  EXPECT_DEATH(strata_reap_free_sized(reap, p, 20),
               message("strata_reap_free_sized", reap, p, "wrong size: freed with 20 bytes, allocated with 24"));
  EXPECT_DEATH(
      strata_reap_free_sized(reap, large, 24),
      message("strata_reap_free_sized", reap, large, "wrong size: freed with 24 bytes, allocated with 100000"));
  EXPECT_DEATH(strata_reap_realloc_sized(reap, p, 32, 64),
               message("strata_reap_realloc_sized", reap, p, "wrong size: freed with 32 bytes, allocated with 24"));
  // A tagged reap knows only the slot: a size beyond it is caught.
  strata::test::ScopedReap tagged;
  void* t = strata_reap_malloc(tagged, 24);
  EXPECT_DEATH(strata_reap_free_sized(tagged, t, 100),
               message("strata_reap_free_sized", tagged, t, "wrong size: freed with 100 bytes, the object holds 31"));
  strata_reap_free_sized(tagged, t, 24);
}

TEST_F(ReapChecked, SizedDoubleFreeForeignPointerAndWrongReapAbort) {
  ScopedSizedReap reap;
  ScopedSizedReap other;
  void* p = strata_reap_malloc_sized(reap, 40);
  void* q = strata_reap_malloc_sized(reap, 40);
  strata_reap_free_sized(reap, p, 40);
  EXPECT_DEATH(strata_reap_free_sized(reap, p, 40), message("strata_reap_free_sized", reap, p, "double free"));
  int on_stack = 0;
  EXPECT_DEATH(strata_reap_free_sized(reap, &on_stack, 4),
               message("strata_reap_free_sized", reap, &on_stack, "foreign pointer"));
  EXPECT_DEATH(strata_reap_free_sized(other, q, 40),
               message("strata_reap_free_sized", other, q, "wrong reap: the object belongs to reap " + hex(reap.reap)));
  strata_reap_clear(reap);
  EXPECT_DEATH(strata_reap_free_sized(reap, q, 40), message("strata_reap_free_sized", reap, q, "foreign pointer"));
}

TEST_F(ReapChecked, SizedCorrectUseIsUnchanged) {
  ScopedSizedReap reap;
  std::vector<std::pair<char*, std::size_t>> live;
  std::mt19937 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const unsigned op = rng() % 4;
    if (op < 2 || live.empty()) {
      const std::size_t size = rng() % 3000;
      auto* p = static_cast<char*>(strata_reap_malloc_sized(reap, size));
      ASSERT_NE(p, nullptr);
      std::memset(p, static_cast<int>(size & 0xff), size);
      live.emplace_back(p, size);
    } else {
      const std::size_t k = rng() % live.size();
      auto [p, size] = live[k];
      for (std::size_t j = 0; j < size; ++j) ASSERT_EQ(static_cast<unsigned char>(p[j]), size & 0xff);
      if (op == 2) {
        strata_reap_free_sized(reap, p, size);
        live[k] = live.back();
        live.pop_back();
      } else {
        const std::size_t bigger = size + rng() % 500;
        auto* q = static_cast<char*>(strata_reap_realloc_sized(reap, p, size, bigger));
        ASSERT_NE(q, nullptr);
        for (std::size_t j = 0; j < size; ++j) ASSERT_EQ(static_cast<unsigned char>(q[j]), size & 0xff);
        std::memset(q, static_cast<int>(bigger & 0xff), bigger);
        live[k] = {q, bigger};
      }
    }
  }
  for (auto [p, size] : live) strata_reap_free_sized(reap, p, size);
  strata_reap_stats s;
  strata_reap_get_stats(reap, &s);
  EXPECT_EQ(s.bytes_live, 0u);
}

TEST_F(ReapChecked, CorrectUseIsUnchanged) {
  strata::test::ScopedReap reap;
  struct Heap {
    strata_reap* reap;
    void* malloc(std::size_t n) { return strata_reap_malloc(reap, n); }
    void free(void* p) { strata_reap_free(reap, p); }
    void* realloc(void* p, std::size_t n) { return strata_reap_realloc(reap, p, n); }
    std::size_t getSize(void* p) { return strata_reap_usable_size(reap, p); }
  } heap{reap};
  strata::test::run_heap_model(heap, {.seed = 7, .operations = 30000, .max_size = 10000});
  strata_reap_stats s;
  strata_reap_get_stats(reap, &s);
  EXPECT_EQ(s.objects_live, 0u);
}

}  // namespace
