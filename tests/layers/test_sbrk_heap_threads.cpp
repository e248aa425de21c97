// SbrkHeap under concurrency (labelled `threads`: also runs under TSan).
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "strata/layers.hpp"

using namespace strata::layers;

TEST(SbrkHeap, ConcurrentBumpsNeverOverlap) {
  using Break = SbrkHeap<std::size_t{16} << 20>;
  constexpr int kThreads = 4, kPerThread = 1000;
  std::vector<std::vector<char*>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&got, t] {
      Break heap;
      for (int i = 0; i < kPerThread; ++i) {
        auto* p = static_cast<char*>(heap.malloc(32));
        std::memset(p, t, 32);
        got[t].push_back(p);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (char* p : got[t])
      for (int i = 0; i < 32; ++i) ASSERT_EQ(p[i], t);
  EXPECT_EQ(Break::bytes_used(), std::size_t{kThreads} * kPerThread * 32);
}
