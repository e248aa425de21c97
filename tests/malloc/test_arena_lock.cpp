// ArenaLock, the large arenas' one-word futex lock: exclusion, try_lock, and
// waiters that sleep while the holder is away and are woken by its unlock.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "arena_lock.hpp"

namespace {

using strata::malloc_detail::ArenaLock;

TEST(ArenaLock, TryLockFailsWhileHeld) {
  ArenaLock lock;
  EXPECT_FALSE(lock.held());
  ASSERT_TRUE(lock.try_lock());
  EXPECT_TRUE(lock.held());
  EXPECT_FALSE(lock.try_lock());
  lock.unlock();
  EXPECT_FALSE(lock.held());
  lock.lock();
  EXPECT_FALSE(lock.try_lock());
  lock.unlock();
  EXPECT_TRUE(lock.try_lock()) << "free again after lock and unlock";
  lock.unlock();
}

// Four threads add to a plain counter under the lock: no increment is lost
// (and TSan sees the lock order every access).
TEST(ArenaLock, ExcludesOtherThreads) {
  ArenaLock lock;
  long counter = 0;
  constexpr int kThreads = 4, kRounds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        lock.lock();
        long seen = counter;
        if (i % 64 == 0) std::this_thread::yield();  // hold it across a reschedule now and then
        counter = seen + 1;
        lock.unlock();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, long{kThreads} * kRounds);
}

// Waiters outlast the spinning and sleep on the futex; the holder's unlock
// wakes them one after another, and each gets the lock.
TEST(ArenaLock, SleepingWaitersAreWokenByTheUnlock) {
  ArenaLock lock;
  lock.lock();
  std::atomic<int> waiting{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      waiting.fetch_add(1);
      lock.lock();
      done.fetch_add(1);
      lock.unlock();
    });
  while (waiting.load() < 3) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // far longer than the spins
  EXPECT_EQ(done.load(), 0) << "no one takes a held lock";
  lock.unlock();
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 3);
  EXPECT_FALSE(lock.held());
}

}  // namespace
