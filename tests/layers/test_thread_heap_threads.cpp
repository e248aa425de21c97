#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <thread>
#include <vector>

#include "strata/layers.hpp"
#include "support/heap_model.hpp"
#include "util_test_heaps.hpp"

using strata::layers::MallocHeap;
using strata::layers::SpinLockedHeap;
using strata::layers::ThreadHeap;
using strata::test::AtomicCountingHeap;

namespace {

constexpr std::size_t kHeaps = 4;
using Counted = ThreadHeap<kHeaps, SpinLockedHeap<AtomicCountingHeap>>;

static_assert(strata::layers::SizedHeap<Counted>);

TEST(ThreadHeapThreads, EachThreadAllocatesFromTheHeapItsIdHashesTo) {
  Counted heap;
  constexpr int kThreads = 6;
  constexpr std::size_t kObjects = 1000;
  std::array<std::size_t, kThreads> index{};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&heap, &index, t] {
      index[t] = Counted::heapIndex();
      std::vector<void*> mine;
      for (std::size_t i = 0; i < kObjects; ++i) mine.push_back(heap.malloc(32));
      for (void* p : mine) heap.free(p);
    });
  }
  for (auto& th : threads) th.join();
  std::array<std::size_t, kHeaps> expected{};
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_LT(index[t], kHeaps);
    expected[index[t]] += kObjects;
  }
  for (std::size_t h = 0; h < kHeaps; ++h) {
    EXPECT_EQ(heap.getHeap(h).mallocs.load(), expected[h]) << "heap " << h;
    EXPECT_EQ(heap.getHeap(h).frees.load(), expected[h]) << "heap " << h;
  }
}

TEST(ThreadHeapThreads, AnObjectFreedByAnotherThreadGoesToThatThreadsHeap) {
  Counted heap;
  constexpr std::size_t kObjects = 500;
  std::vector<void*> handed_over;
  std::size_t producer = 0, consumer = 0;
  std::thread([&] {
    producer = Counted::heapIndex();
    for (std::size_t i = 0; i < kObjects; ++i) handed_over.push_back(heap.malloc(100));
  }).join();
  std::thread([&] {
    consumer = Counted::heapIndex();
    for (void* p : handed_over) heap.free(p);
  }).join();
  EXPECT_EQ(heap.getHeap(producer).mallocs.load(), kObjects);
  EXPECT_EQ(heap.getHeap(consumer).frees.load(), kObjects);  // pure private heaps: no ownership
}

TEST(ThreadHeapThreads, ModelTestsInSeveralThreadsAtOnce) {
  ThreadHeap<kHeaps, SpinLockedHeap<MallocHeap>> heap;
  std::vector<std::thread> threads;
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    threads.emplace_back([&heap, seed] { strata::test::run_heap_model(heap, {.seed = seed, .operations = 20000}); });
  for (auto& th : threads) th.join();
}

TEST(ThreadHeap, ReturnsNullWhenTheParentFails) {
  ThreadHeap<2, SpinLockedHeap<strata::test::FailingHeap>> heap;
  for (std::size_t h = 0; h < 2; ++h) heap.getHeap(h).fail_after(0);
  EXPECT_EQ(heap.malloc(10), nullptr);
}

}  // namespace
