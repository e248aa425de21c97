#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::MallocHeap;
using strata::layers::ProfileHeap;

namespace {

// A parent with a known usable size: every request rounded up to 32 bytes.
class RoundTo32Heap {
 public:
  void* malloc(std::size_t size) {
    if (fail) return nullptr;
    const std::size_t rounded = (size + 31) / 32 * 32;
    void* p = std::aligned_alloc(16, rounded);
    sizes_[p] = rounded;
    return p;
  }
  void free(void* ptr) {
    sizes_.erase(ptr);
    std::free(ptr);
  }
  std::size_t getSize(void* ptr) { return sizes_.at(ptr); }
  bool fail = false;

 private:
  std::unordered_map<void*, std::size_t> sizes_;
};

// A parent that does not know sizes: held = request + ProfileHeap's header.
struct UnsizedHeap {
  void* malloc(std::size_t size) { return std::malloc(size); }
  void free(void* ptr) { std::free(ptr); }
};
static_assert(!strata::layers::SizedHeap<UnsizedHeap>);
// The parent's realloc does not know about the profile header: hidden.
static_assert(!strata::layers::ReallocatingHeap<ProfileHeap<strata::layers::ANSIWrapper<MallocHeap>>>);
static_assert(strata::layers::SizedHeap<ProfileHeap<UnsizedHeap>>);

TEST(ProfileHeap, ExactFiguresOnAKnownSequence) {
  ProfileHeap<RoundTo32Heap> heap;
  // Each block is request + 16 (header), rounded up to 32 by the parent.
  void* a = heap.malloc(10);   // held 32  | live 10,  held 32
  void* b = heap.malloc(100);  // held 128 | live 110, held 160  <- peaks
  heap.free(a);                //          | live 100, held 128
  void* c = heap.malloc(0);    // held 32  | live 100, held 160
  void* d = heap.malloc(8);    // held 32  | live 108, held 192  <- new peak held
  heap.free(b);                //          | live 8,   held 64
  heap.fail = true;
  EXPECT_EQ(heap.malloc(1), nullptr);
  const auto& s = heap.stats();
  EXPECT_EQ(s.mallocs, 4u);
  EXPECT_EQ(s.failed_mallocs, 1u);
  EXPECT_EQ(s.frees, 2u);
  EXPECT_EQ(s.live_objects, 2u);
  EXPECT_EQ(s.peak_live_objects, 3u);
  EXPECT_EQ(s.live_requested, 8u);
  EXPECT_EQ(s.peak_live_requested, 110u);
  EXPECT_EQ(s.held, 64u);
  EXPECT_EQ(s.peak_held, 192u);
  EXPECT_DOUBLE_EQ(s.fragmentation(), 192.0 / 110.0);
  EXPECT_EQ(heap.getSize(c), 0u);
  EXPECT_EQ(heap.getSize(d), 8u);
  heap.free(c);
  heap.free(d);
  EXPECT_EQ(s.live_objects, 0u);
  EXPECT_EQ(s.live_requested, 0u);
  EXPECT_EQ(s.held, 0u);
}

TEST(ProfileHeap, WithoutParentSizesHeldIsRequestPlusHeader) {
  ProfileHeap<UnsizedHeap> heap;
  void* a = heap.malloc(100);
  void* b = heap.malloc(1);
  EXPECT_EQ(heap.stats().held, 100u + 16 + 1 + 16);
  EXPECT_EQ(heap.stats().live_requested, 101u);
  heap.free(a);
  heap.free(b);
  EXPECT_EQ(heap.stats().held, 0u);
  EXPECT_EQ(heap.stats().peak_held, 133u);
}

TEST(ProfileHeap, FreeNullIsNotCounted) {
  ProfileHeap<MallocHeap> heap;
  heap.free(nullptr);
  EXPECT_EQ(heap.stats().frees, 0u);
}

TEST(ProfileHeap, OverflowingRequestFailsAndIsCounted) {
  ProfileHeap<MallocHeap> heap;
  EXPECT_EQ(heap.malloc(SIZE_MAX - 4), nullptr);
  EXPECT_EQ(heap.stats().failed_mallocs, 1u);
}

TEST(ProfileHeap, ReportPrintsTheFigures) {
  ProfileHeap<RoundTo32Heap> heap;
  void* a = heap.malloc(10);
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  heap.report(out);
  std::rewind(out);
  char buffer[512] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, out);
  std::fclose(out);
  const std::string text(buffer, n);
  EXPECT_NE(text.find("mallocs 1 (failed 0)"), std::string::npos) << text;
  EXPECT_NE(text.find("live requested 10 B (peak 10 B), held 32 B (peak 32 B), fragmentation 3.200"),
            std::string::npos)
      << text;
  heap.free(a);
}

TEST(ProfileHeap, PassesTheModelTest) {
  ProfileHeap<MallocHeap> heap;
  strata::test::run_heap_model(heap, {.seed = 41, .operations = 40000});
  EXPECT_EQ(heap.stats().live_objects, 0u);
  EXPECT_EQ(heap.stats().mallocs, heap.stats().frees);
}

}  // namespace
