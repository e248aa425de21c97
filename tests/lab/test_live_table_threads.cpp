// The live-object table under concurrent inserts and removals (also run under TSan).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "live_table.hpp"

namespace strata::lab {
namespace {

TEST(LiveTableThreads, ConcurrentInsertAndTakeLoseNothing) {
  static LiveTable<std::uint64_t> table;
  constexpr int kThreads = 4;
  constexpr std::uint64_t kKeys = 20000;
  std::vector<std::thread> threads;
  std::vector<int> errors(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &errors] {
      for (int round = 0; round < 3; ++round) {
        for (std::uint64_t i = 0; i < kKeys; ++i) {
          std::uint64_t previous = 0;
          if (table.insert(reinterpret_cast<const void*>(16 * (i * kThreads + t + 1)), i + round, &previous) !=
              LiveTable<std::uint64_t>::Insert::kAdded)
            ++errors[t];
        }
        for (std::uint64_t i = 0; i < kKeys; i += 2) {
          std::uint64_t got = 0;
          if (!table.take(reinterpret_cast<const void*>(16 * (i * kThreads + t + 1)), &got) || got != i + round)
            ++errors[t];
        }
        for (std::uint64_t i = 1; i < kKeys; i += 2) {
          std::uint64_t got = 0;
          if (!table.take(reinterpret_cast<const void*>(16 * (i * kThreads + t + 1)), &got) || got != i + round)
            ++errors[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace strata::lab
