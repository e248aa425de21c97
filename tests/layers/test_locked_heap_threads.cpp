#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::ANSIWrapper;
using strata::layers::LockedHeap;
using strata::layers::MallocHeap;
using strata::platform::SpinLock;

namespace {

// A parent that is not thread safe at all (a plain LIFO cache and plain
// counters) and that notices any overlap of two calls.
class UnsafeCachingHeap {
 public:
  void* malloc(std::size_t size) {
    enter();
    void* p = nullptr;
    if (size <= kSize && !cache_.empty()) {
      p = cache_.back();
      cache_.pop_back();
    } else if (size <= kSize) {
      p = std::malloc(kSize);
    }
    ++mallocs;
    leave();
    return p;
  }
  void free(void* ptr) {
    enter();
    cache_.push_back(ptr);
    ++frees;
    leave();
  }
  ~UnsafeCachingHeap() {
    for (void* p : cache_) std::free(p);
  }

  static constexpr std::size_t kSize = 64;
  std::size_t mallocs = 0;
  std::size_t frees = 0;
  std::atomic<int> overlaps{0};

 private:
  void enter() {
    if (inside_.fetch_add(1) != 0) overlaps.fetch_add(1);
  }
  void leave() { inside_.fetch_sub(1); }
  std::atomic<int> inside_{0};
  std::vector<void*> cache_;
};

template <class Lock>
class LockedHeapThreads : public ::testing::Test {};
using Locks = ::testing::Types<SpinLock, std::mutex>;
TYPED_TEST_SUITE(LockedHeapThreads, Locks);

TYPED_TEST(LockedHeapThreads, SerialisesEveryCallOfAnUnsafeParent) {
  LockedHeap<TypeParam, UnsafeCachingHeap> heap;
  constexpr int kThreads = 4;
  constexpr int kRounds = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&heap, t] {
      std::vector<void*> mine;
      for (int i = 0; i < kRounds; ++i) {
        auto* p = static_cast<unsigned char*>(heap.malloc(48));
        ASSERT_NE(p, nullptr);
        p[0] = static_cast<unsigned char>(t);
        mine.push_back(p);
        if (mine.size() > 8) {
          ASSERT_EQ(static_cast<unsigned char*>(mine.front())[0], static_cast<unsigned char>(t));
          heap.free(mine.front());
          mine.erase(mine.begin());
        }
      }
      for (void* p : mine) heap.free(p);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(heap.overlaps.load(), 0);
  EXPECT_EQ(heap.mallocs, std::size_t{kThreads} * kRounds);
  EXPECT_EQ(heap.frees, std::size_t{kThreads} * kRounds);
}

TYPED_TEST(LockedHeapThreads, ModelTestsInSeveralThreadsAtOnce) {
  LockedHeap<TypeParam, ANSIWrapper<MallocHeap>> heap;
  std::vector<std::thread> threads;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    threads.emplace_back([&heap, seed] { strata::test::run_heap_model(heap, {.seed = seed, .operations = 20000}); });
  for (auto& th : threads) th.join();
}

// The parent's optional operations are all wrapped, and only those.
static_assert(strata::layers::SizedHeap<LockedHeap<SpinLock, MallocHeap>>);
static_assert(!strata::layers::ReallocatingHeap<LockedHeap<SpinLock, MallocHeap>>);
static_assert(strata::layers::ReallocatingHeap<LockedHeap<SpinLock, ANSIWrapper<MallocHeap>>>);
static_assert(strata::layers::CallocatingHeap<LockedHeap<SpinLock, ANSIWrapper<MallocHeap>>>);
static_assert(strata::layers::AligningHeap<LockedHeap<SpinLock, ANSIWrapper<MallocHeap>>>);

TEST(LockedHeap, ForwardsEveryOperationOfTheParent) {
  strata::layers::SpinLockedHeap<ANSIWrapper<strata::test::FailingHeap>> heap;
  void* a = heap.calloc(4, 4);
  void* b = heap.memalign(64, 10);
  void* c = heap.aligned_alloc(32, 10);
  void* d = nullptr;
  ASSERT_EQ(heap.posix_memalign(&d, 128, 10), 0);
  a = heap.realloc(a, 1000);
  ASSERT_TRUE(a && b && c && d);
  EXPECT_GE(heap.getSize(a), 1000u);
  for (void* p : {a, b, c, d}) heap.free(p);
  EXPECT_EQ(heap.live(), 0u);
}

TEST(LockedHeap, ReturnsNullWhenTheParentFails) {
  strata::layers::MutexLockedHeap<strata::test::FailingHeap> heap;
  heap.fail_after(0);
  EXPECT_EQ(heap.malloc(8), nullptr);
}

TEST(LockedHeap, PassesTheModelTest) {
  strata::layers::SpinLockedHeap<MallocHeap> heap;
  strata::test::run_heap_model(heap, {.seed = 31, .operations = 30000});
}

}  // namespace
