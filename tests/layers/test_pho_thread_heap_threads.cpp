#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::MallocHeap;
using strata::layers::PHOThreadHeap;
using strata::layers::SpinLockedHeap;
using strata::test::AtomicCountingHeap;

namespace {

constexpr std::size_t kHeaps = 4;
using Counted = PHOThreadHeap<kHeaps, SpinLockedHeap<AtomicCountingHeap>>;

static_assert(strata::layers::SizedHeap<Counted>);

TEST(PHOThreadHeapThreads, ObjectsGoBackToTheHeapThatOwnsThem) {
  Counted heap;
  constexpr std::size_t kObjects = 500;
  std::vector<void*> handed_over;
  std::size_t producer = 0;
  std::thread([&] {
    producer = Counted::heapIndex();
    for (std::size_t i = 0; i < kObjects; ++i) handed_over.push_back(heap.malloc(100));
  }).join();
  for (void* p : handed_over) ASSERT_EQ(Counted::ownerOf(p), producer);
  std::thread([&] {
    for (void* p : handed_over) heap.free(p);
  }).join();
  for (std::size_t h = 0; h < kHeaps; ++h) {
    const std::size_t expected = h == producer ? kObjects : 0;
    EXPECT_EQ(heap.getHeap(h).mallocs.load(), expected) << "heap " << h;
    EXPECT_EQ(heap.getHeap(h).frees.load(), expected) << "heap " << h;  // ownership: never elsewhere
  }
}

TEST(PHOThreadHeapThreads, ProducersAndConsumersExchangingObjects) {
  Counted heap;
  constexpr int kPairs = 3;
  constexpr std::size_t kObjects = 2000;
  std::vector<std::thread> threads;
  std::vector<std::vector<void*>> batches(kPairs);
  for (int pair = 0; pair < kPairs; ++pair) {
    threads.emplace_back([&heap, &batches, pair] {
      for (std::size_t i = 0; i < kObjects; ++i) {
        auto* p = static_cast<std::uint32_t*>(heap.malloc(16 + i % 200));
        ASSERT_NE(p, nullptr);
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % strata::layers::kAlignment, 0u);
        *p = static_cast<std::uint32_t>(i);
        batches[pair].push_back(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  // Each batch is freed by a different thread than the one that made it.
  for (int pair = 0; pair < kPairs; ++pair) {
    threads.emplace_back([&heap, &batches, pair] {
      std::size_t i = 0;
      for (void* p : batches[(pair + 1) % kPairs]) {
        ASSERT_EQ(*static_cast<std::uint32_t*>(p), i++);
        heap.free(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (std::size_t h = 0; h < kHeaps; ++h)
    EXPECT_EQ(heap.getHeap(h).mallocs.load(), heap.getHeap(h).frees.load()) << "heap " << h;
}

TEST(PHOThreadHeapThreads, ModelTestsInSeveralThreadsAtOnce) {
  PHOThreadHeap<kHeaps, SpinLockedHeap<MallocHeap>> heap;
  std::vector<std::thread> threads;
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    threads.emplace_back([&heap, seed] { strata::test::run_heap_model(heap, {.seed = seed, .operations = 20000}); });
  for (auto& th : threads) th.join();
}

TEST(PHOThreadHeapThreads, OverLockedKingsleyHeapsInSeveralThreadsAtOnce) {
  PHOThreadHeap<kHeaps, SpinLockedHeap<strata::layers::KingsleyHeap>> heap;
  std::vector<std::thread> threads;
  for (std::uint64_t seed = 11; seed <= 13; ++seed)
    threads.emplace_back([&heap, seed] { strata::test::run_heap_model(heap, {.seed = seed, .operations = 20000}); });
  for (auto& th : threads) th.join();
}

TEST(PHOThreadHeap, GetSizeExcludesTheOwnerHeader) {
  PHOThreadHeap<2, SpinLockedHeap<AtomicCountingHeap>> heap;
  void* p = heap.malloc(100);
  ASSERT_NE(p, nullptr);
  auto& parent = heap.getHeap(heap.ownerOf(p));
  EXPECT_EQ(heap.getSize(p), parent.getSize(static_cast<char*>(p) - 16) - 16);
  EXPECT_GE(heap.getSize(p), 100u);
  heap.free(p);
}

TEST(PHOThreadHeap, ReturnsNullWhenTheParentFailsOrTheSizeOverflows) {
  PHOThreadHeap<2, SpinLockedHeap<strata::test::FailingHeap>> heap;
  EXPECT_EQ(heap.malloc(SIZE_MAX - 8), nullptr);
  for (std::size_t h = 0; h < 2; ++h) heap.getHeap(h).fail_after(0);
  EXPECT_EQ(heap.malloc(10), nullptr);
}

}  // namespace
