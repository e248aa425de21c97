// A program linked with -lstrata (strata::strata): malloc, free and operator
// new/delete are strata's. Labelled no-asan no-tsan (the sanitizers bring
// their own malloc).
#include <gtest/gtest.h>
#include <malloc.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "strata/strata.h"

// C23 names; glibc 2.36 does not declare them yet.
extern "C" void free_sized(void*, std::size_t) noexcept;
extern "C" void free_aligned_sized(void*, std::size_t, std::size_t) noexcept;

namespace {

bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

TEST(StrataLinked, MallocIsStrata) {
  void* p = std::malloc(20);
  ASSERT_NE(p, nullptr);
  // strata's classes are 16 bytes apart: a 20-byte request gets 32
  EXPECT_EQ(malloc_usable_size(p), 32u);
  EXPECT_EQ(strata_usable_size(p), 32u);
  std::free(p);
}

TEST(StrataLinked, OperatorNewIsStrata) {
  auto* v = new std::vector<int>(1000, 7);
  EXPECT_GE(strata_usable_size(v->data()), 4000u);
  EXPECT_EQ(strata_usable_size(v->data()), malloc_usable_size(v->data()));
  delete v;
  struct alignas(256) Wide {
    char c[300];
  };
  auto w = std::make_unique<Wide>();
  EXPECT_TRUE(aligned(w.get(), 256));
  auto* arr = new Wide[3];
  EXPECT_TRUE(aligned(arr, 256));
  delete[] arr;
  auto* nothrow = new (std::nothrow) char[100];
  ASSERT_NE(nothrow, nullptr);
  delete[] nothrow;
}

TEST(StrataLinked, OperatorNewThrowsBadAllocAndNothrowGivesNull) {
  std::size_t huge = std::size_t{1} << 62;
  EXPECT_THROW((void)::operator new(huge), std::bad_alloc);
  EXPECT_EQ(::operator new(huge, std::nothrow), nullptr);
  EXPECT_THROW((void)::operator new(huge, std::align_val_t{64}), std::bad_alloc);
  EXPECT_EQ(::operator new(huge, std::align_val_t{64}, std::nothrow), nullptr);
}

TEST(StrataLinked, EveryLibcEntryPoint) {
  void* p = std::calloc(10, 10);
  ASSERT_NE(p, nullptr);
  p = std::realloc(p, 1000);
  ASSERT_NE(p, nullptr);
  p = reallocarray(p, 30, 100);
  ASSERT_NE(p, nullptr);
  std::free(p);
  void* m = memalign(100, 50);  // glibc rounds the alignment up to 128
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(aligned(m, 128));
  std::free(m);
  void* v = valloc(10);
  EXPECT_TRUE(aligned(v, 4096));
  std::free(v);
  void* pv = pvalloc(5000);
  EXPECT_TRUE(aligned(pv, 4096));
  EXPECT_GE(malloc_usable_size(pv), 8192u);
  std::free(pv);
  void* a = aligned_alloc(64, 64);
  EXPECT_TRUE(aligned(a, 64));
  free_sized(a, 64);
  void* b = aligned_alloc(4096, 10000);
  EXPECT_TRUE(aligned(b, 4096));
  free_aligned_sized(b, 4096, 10000);
  void* c = nullptr;
  EXPECT_EQ(posix_memalign(&c, 3, 10), EINVAL);
  EXPECT_EQ(posix_memalign(&c, 32, 10), 0);
  EXPECT_TRUE(aligned(c, 32));
  std::free(c);
  errno = 0;
  EXPECT_EQ(aligned_alloc(3, 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
  std::free(nullptr);
}

TEST(StrataLinked, StringsAndContainersWork) {
  std::vector<std::string> words;
  for (int i = 0; i < 20000; ++i) words.push_back(std::string(static_cast<std::size_t>(i % 100), 'x') + std::to_string(i));
  std::size_t total = 0;
  for (auto& w : words) total += w.size();
  EXPECT_GT(total, 20000u * 49);
}

}  // namespace

