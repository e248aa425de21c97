// libstrata under threads: producers hand objects to consumers who free them
// (remote frees), threads exit while their objects live on, and the heaps of
// exited threads are reused. Labelled `threads`: also runs under TSan.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "large_heap.hpp"
#include "options.hpp"
#include "os.hpp"
#include "per_thread_heap.hpp"
#include "segment.hpp"
#include "strata/strata.h"

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kScale = 4;  // the sanitizers are ~10x slower; keep the test in seconds
#else
constexpr int kScale = 1;
#endif

struct Message {
  unsigned char* ptr;
  std::size_t size;
  std::uint32_t tag;
};

// The pattern covers the first and last 64 bytes: enough to see overlapping
// objects, cheap enough for megabyte objects under the sanitizers.
template <class F>
void for_each_checked_byte(const Message& m, F&& f) {
  std::size_t head = m.size < 128 ? m.size : 64;
  for (std::size_t i = 0; i < head; ++i) f(i);
  for (std::size_t i = head > m.size - 64 ? head : m.size - 64; i < m.size && m.size >= 128; ++i) f(i);
}
void stamp(const Message& m) {
  for_each_checked_byte(m, [&](std::size_t i) { m.ptr[i] = static_cast<unsigned char>(m.tag + i); });
}
bool intact(const Message& m) {
  bool ok = true;
  for_each_checked_byte(m, [&](std::size_t i) { ok = ok && m.ptr[i] == static_cast<unsigned char>(m.tag + i); });
  return ok;
}

// A bounded queue: at most `cap` objects in flight, so a heap that never
// reused remotely freed memory would keep growing.
class Queue {
 public:
  explicit Queue(std::size_t cap) : cap_(cap) {}
  void push(Message m) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return q_.size() < cap_; });
    q_.push_back(m);
    not_empty_.notify_one();
  }
  bool pop(Message& m) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    m = q_.front();
    q_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Message> q_;
  std::size_t cap_;
  bool closed_ = false;
};

std::size_t random_size(std::mt19937& rng) {
  unsigned r = rng() % 100;
  if (r < 80) return 1 + rng() % 256;
  if (r < 97) return 257 + rng() % 8000;
  return 8193 + rng() % 200000;
}

TEST(StrataThreads, ProducersHandObjectsToConsumers) {
  constexpr int kProducers = 3, kConsumers = 3;
  const int per_producer = 60000 / kScale;
  Queue queue(2000);
  std::atomic<int> corrupted{0}, consumed{0};
  std::size_t mapped_before = strata::malloc_detail::mapped_bytes();
  std::vector<std::thread> producers, consumers;
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&] {
      Message m;
      while (queue.pop(m)) {
        if (!intact(m)) corrupted.fetch_add(1);
        strata_free(m.ptr);
        consumed.fetch_add(1);
      }
    });
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&, p] {
      std::mt19937 rng(static_cast<unsigned>(p + 1));
      for (int i = 0; i < per_producer; ++i) {
        std::size_t size = random_size(rng);
        Message m{static_cast<unsigned char*>(strata_malloc(size)), size, static_cast<std::uint32_t>(rng())};
        ASSERT_NE(m.ptr, nullptr);
        stamp(m);
        queue.push(m);
      }
    });
  for (auto& t : producers) t.join();
  queue.close();
  for (auto& t : consumers) t.join();
  EXPECT_EQ(corrupted.load(), 0);
  EXPECT_EQ(consumed.load(), kProducers * per_producer);
  // ~2000 objects in flight, mostly small: remote frees must be reused, or the
  // producers' heaps would need far more than this (they allocate ~1 GB in all).
  // Other threads' earlier memory may be unmapped meanwhile: mapping less is no growth.
  std::size_t mapped_after = strata::malloc_detail::mapped_bytes();
  std::size_t grown = mapped_after > mapped_before ? mapped_after - mapped_before : 0;
  EXPECT_LT(grown, std::size_t{256} << 20) << "mapped " << grown << " bytes for ~2000 live objects";
}

TEST(StrataThreads, ObjectsOutliveTheirThreads) {
  for (int wave = 0; wave < 10; ++wave) {
    std::vector<std::vector<Message>> made(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(wave * 10 + t));
        for (int i = 0; i < 3000 / kScale; ++i) {
          std::size_t size = random_size(rng);
          Message m{static_cast<unsigned char*>(strata_malloc(size)), size, static_cast<std::uint32_t>(rng())};
          ASSERT_NE(m.ptr, nullptr);
          stamp(m);
          made[t].push_back(m);
        }
        // free every other one locally before exiting
        for (std::size_t i = 0; i < made[t].size(); i += 2) strata_free(made[t][i].ptr);
      });
    for (auto& t : threads) t.join();
    // The threads are gone; their objects are freed here (remote frees into abandoned heaps).
    for (auto& list : made)
      for (std::size_t i = 1; i < list.size(); i += 2) {
        ASSERT_TRUE(intact(list[i])) << "object of an exited thread changed";
        strata_free(list[i].ptr);
      }
  }
}

TEST(StrataThreads, HeapsOfExitedThreadsAreReused) {
  auto count_heaps = [] {
    std::size_t n = 0;
    for (auto* h = strata::malloc_detail::heap_registry_head(); h; h = h->next_heap) ++n;
    return n;
  };
  std::thread([] { strata_free(strata_malloc(10)); }).join();
  std::size_t before = count_heaps();
  for (int i = 0; i < 50; ++i) {
    std::thread a([] { strata_free(strata_malloc(100)); });
    std::thread b([] { strata_free(strata_malloc(200)); });
    a.join();
    b.join();
  }
  EXPECT_LE(count_heaps(), before + 2) << "100 short-lived threads must not leave 100 heaps behind";
}

TEST(StrataThreads, AnExitedThreadsFreedMemoryIsReusedByTheNextThread) {
  std::vector<void*> freed_by_first;
  std::thread([&] {
    std::vector<void*> mine;
    for (int i = 0; i < 1000; ++i) mine.push_back(strata_malloc(48));
    for (int i = 0; i < 1000; i += 2) {
      freed_by_first.push_back(mine[i]);
      strata_free(mine[i]);
    }
    for (int i = 1; i < 1000; i += 2) strata_free(mine[i]);
  }).join();
  bool reused = false;
  std::thread([&] {
    std::vector<void*> mine;
    for (int i = 0; i < 1000; ++i) mine.push_back(strata_malloc(48));
    for (void* p : mine)
      for (void* q : freed_by_first) reused = reused || p == q;
    for (void* p : mine) strata_free(p);
  }).join();
  EXPECT_TRUE(reused);
}

// Thread churn: a thread that exits hands its empty blocks, still resident, to
// the next thread, which adopts its heap and reuses them without faults.
TEST(StrataThreads, AnExitedThreadsEmptyBlocksStayResidentForTheNextThread) {
  if constexpr (strata::malloc_config::kQuarantineSlots > 0)
    GTEST_SKIP() << "hardened build: its small-object quarantine and block guards change when blocks empty and are discarded";
  constexpr std::size_t kObjects = 16 * 64 * 1024 / 256;  // 16 page blocks of 256-byte objects
  // Blocks older than the purge delay may go when the next thread's frees
  // overflow the retain limit: under TSan the threads take longer than the
  // default delay. A delay no run reaches keeps this test about adoption.
  const std::uint32_t saved_delay = strata::malloc_detail::g_purge_delay_ms.exchange(60 * 1000);
  auto fill_and_free = [] {
    std::vector<void*> objects;
    for (std::size_t i = 0; i < kObjects; ++i) objects.push_back(strata_malloc(256));
    for (void* p : objects) strata_free(p);
  };
  strata::malloc_detail::PerThreadHeap* first_heap = nullptr;
  std::size_t discarded_before_exit = 0;
  std::thread([&] {
    for (int round = 0; round < 3; ++round) fill_and_free();  // raises the retain limit
    void* probe = strata_malloc(256);
    first_heap = strata::malloc_detail::segment_of(probe)->owner;
    strata_free(probe);
    discarded_before_exit = strata::malloc_detail::discarded_os_pages();
  }).join();
  EXPECT_EQ(strata::malloc_detail::discarded_os_pages(), discarded_before_exit) << "exit discarded the empty blocks";
  EXPECT_GT(strata::malloc_detail::abandoned_kept_blocks(), 0u);
  std::size_t handed_before = strata::malloc_detail::handed_over_blocks();
  std::thread([&] {
    std::size_t discarded = strata::malloc_detail::discarded_os_pages();
    void* probe = strata_malloc(256);
    EXPECT_EQ(strata::malloc_detail::segment_of(probe)->owner, first_heap) << "the last abandoned heap is adopted first";
    EXPECT_GT(strata::malloc_detail::handed_over_blocks(), handed_before);
    strata_free(probe);
    fill_and_free();
    EXPECT_EQ(strata::malloc_detail::discarded_os_pages(), discarded);
  }).join();
  strata::malloc_detail::g_purge_delay_ms.store(saved_delay);
}

// Blocks kept for adopters cost no RSS of their own: while an exited thread's
// empty blocks wait, a running thread that faults fresh blocks in gives one of
// them back for each.
TEST(StrataThreads, ARunningThreadsFreshBlocksGiveBackTheBlocksKeptForAdopters) {
  constexpr std::size_t kObjects = 16 * 64 * 1024 / 256;  // 16 page blocks of 256-byte objects
  std::atomic<int> stage{0};  // 1: the runner has its heap; 2: the other thread exited
  auto wait_for = [&](int s) {
    while (stage.load() < s) std::this_thread::yield();
  };
  std::size_t kept_before = 0, kept_after = 0;
  // The retain limit's rule alone: with a purge delay a heap keeps blocks
  // beyond "any heap's limit" for a while (test_purge.cpp).
  std::uint32_t delay = strata::malloc_detail::g_purge_delay_ms.exchange(0);
  std::thread runner([&] {
    strata_free(strata_malloc(256));  // claims a heap before the other thread's is abandoned
    stage.store(1);
    wait_for(2);
    kept_before = strata::malloc_detail::abandoned_kept_blocks();
    // More than any heap keeps (its retain limit may have been raised by
    // earlier tests): fresh blocks are faulted in.
    constexpr std::size_t kBlocks = strata::malloc_config::kRetainedEmptyMax + 16;
    std::vector<void*> objects;
    for (std::size_t i = 0; i < kBlocks * (64 * 1024 / 256); ++i) objects.push_back(strata_malloc(256));
    kept_after = strata::malloc_detail::abandoned_kept_blocks();
    for (void* p : objects) strata_free(p);
  });
  wait_for(1);
  std::thread([] {
    for (int round = 0; round < 3; ++round) {
      std::vector<void*> objects;
      for (std::size_t i = 0; i < kObjects; ++i) objects.push_back(strata_malloc(256));
      for (void* p : objects) strata_free(p);
    }
  }).join();
  stage.store(2);
  runner.join();
  strata::malloc_detail::g_purge_delay_ms.store(delay);
  ASSERT_GT(kept_before, 0u) << "the exited thread kept its empty blocks";
  EXPECT_LT(kept_after, kept_before);
}

// A burst of small objects allocated by one thread and freed by another: the
// freeing thread discards each block as it hands back the block's last object,
// while the owner sits idle (no refill for longer than kRemoteKeepMs);
// afterwards the owner reuses the blocks, whose memory reads as zeros (it was
// discarded) and holds new objects intact.
TEST(StrataThreads, ABurstFreedOnAnotherThreadIsDiscardedWhileTheOwnerIdles) {
  constexpr std::size_t kSize = 64;
  constexpr std::size_t kBlocks = 64 / kScale;
  constexpr std::size_t kCount = kBlocks * (64 * 1024 / kSize);
  std::vector<void*> objects(kCount);
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;  // 1: allocated, 2: freed by the other thread
  auto wait_for = [&](int s) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return stage >= s; });
  };
  auto advance = [&](int s) {
    std::lock_guard lock(mu);
    stage = s;
    cv.notify_all();
  };
  std::size_t reclaimed_before = strata::malloc_detail::reclaimed_blocks();
  std::size_t reclaimed_after = 0;
  bool reused_and_intact = true;
  std::thread owner([&] {
    for (auto& p : objects) {
      p = strata_malloc(kSize);
      std::memset(p, 0xab, kSize);
    }
    advance(1);
    wait_for(2);  // idle (no allocation) while the other thread frees
    reclaimed_after = strata::malloc_detail::reclaimed_blocks();
    std::vector<unsigned char*> again(kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
      again[i] = static_cast<unsigned char*>(strata_malloc(kSize));
      std::memset(again[i], static_cast<int>(i & 0xff), kSize);
    }
    for (std::size_t i = 0; i < kCount; ++i) {
      for (std::size_t j = 0; j < kSize; ++j) reused_and_intact = reused_and_intact && again[i][j] == (i & 0xff);
      strata_free(again[i]);
    }
  });
  std::thread freer([&] {
    wait_for(1);
    // The owner has been idle for a while (the coarse clock ticks every few ms).
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * strata::malloc_config::kRemoteKeepMs + 20));
    for (void* p : objects) strata_free(p);
    advance(2);
  });
  freer.join();
  owner.join();
  // Every block but the owner's current one (still open for allocation) went
  // full, and the freeing thread discards each.
  EXPECT_GE(reclaimed_after - reclaimed_before, kBlocks - 1);
  EXPECT_TRUE(reused_and_intact);
}

// A block's remote list carries its own length (no walk counts it): frees
// into the same blocks by their owner and, at the same time, by another thread
// must each count once. Counted too high, a block would look empty while
// objects in it live, and be handed out afresh over them: the survivors (one
// in 1000, a few per block, kept to the end) would be overwritten.
TEST(StrataThreads, OwnerAndRemoteFreesIntoTheSameBlocksCountOnce) {
  constexpr std::size_t kSize = 48;
  constexpr std::size_t kPerRound = 3 * strata::malloc_config::kPageSize / kSize;
  const int rounds = 40 / kScale;
  std::vector<Message> survivors;
  bool distinct = true, counted_exactly = true;
  std::thread([&] {
    std::mt19937 rng(7);
    for (int round = 0; round < rounds; ++round) {
      std::vector<Message> batch(kPerRound);
      for (auto& m : batch) {
        m = {static_cast<unsigned char*>(strata_malloc(kSize)), kSize, static_cast<std::uint32_t>(rng())};
        stamp(m);
      }
      std::vector<unsigned char*> remote, local;
      for (std::size_t i = 0; i < kPerRound; ++i) {
        if (i % 1000 == 0) {
          survivors.push_back(batch[i]);
        } else {
          (i % 2 ? local : remote).push_back(batch[i].ptr);
        }
      }
      std::thread freer([&remote] {
        for (unsigned char* p : remote) strata_free(p);
      });
      for (unsigned char* p : local) strata_free(p);
      freer.join();
    }
    std::vector<unsigned char*> live;
    for (const Message& m : survivors) live.push_back(m.ptr);
    std::sort(live.begin(), live.end());
    distinct = std::adjacent_find(live.begin(), live.end()) == live.end();
    // The owner's count of a block's objects in use (remote frees not yet
    // collected among them) is its survivors plus the length its remote word
    // carries, exactly.
    for (std::size_t i = 0; i < live.size();) {
      auto* seg = reinterpret_cast<strata::malloc_detail::SmallSegment*>(strata::malloc_detail::segment_of(live[i]));
      strata::malloc_detail::Page* page = seg->page_of(live[i]);
      std::size_t in_page = 0;
      // page_of reads only the offset in the segment: the same block of the next segment maps alike.
      auto same_block = [&](const unsigned char* q) {
        return reinterpret_cast<void*>(strata::malloc_detail::segment_of(q)) == static_cast<void*>(seg) &&
               seg->page_of(q) == page;
      };
      for (; i < live.size() && same_block(live[i]); ++i) ++in_page;
      std::uintptr_t word = page->remote().load();
      std::size_t expected = in_page + strata::malloc_detail::remote_count(word);
      // The hardened build's quarantines still hold some frees: in use for the owner.
      bool exact = strata::malloc_config::kQuarantineSlots > 0 ? page->used() >= expected : page->used() == expected;
      counted_exactly = counted_exactly && word != strata::malloc_detail::kReclaimedBlock && exact;
    }
  }).join();
  EXPECT_TRUE(distinct);
  EXPECT_TRUE(counted_exactly);
  std::size_t overwritten = 0;
  for (const Message& m : survivors) {
    if (!intact(m)) ++overwritten;
    strata_free(m.ptr);
  }
  EXPECT_EQ(overwritten, 0u) << "of " << survivors.size() << " survivors";
}

// A consumer thread that empties the blocks of an active producer (one that
// refilled within kRemoteKeepMs) leaves them resident for the producer to
// reuse warm, except the blocks the producer went past kRemoteKeepLag refills
// ago.
// The frees must follow the last allocation closely: on a loaded machine a
// round that took too long is tried again.
TEST(StrataThreads, BlocksEmptiedByAnotherThreadStayForTheirActiveOwner) {
  if constexpr (strata::malloc_config::kQuarantineSlots > 0)
    GTEST_SKIP() << "hardened build: its small-object quarantine and block guards change when blocks empty and are discarded";
  constexpr std::size_t kSize = 4096;  // 16 objects a block: frees are quick
  constexpr std::size_t kPerBlock = strata::malloc_config::kPageSize / kSize;
  constexpr std::size_t kBlocks = strata::malloc_config::kRemoteKeepLag + 32;
  // Within kRemoteKeepMs of the owner's last refill, by a margin for the
  // coarse clock's tick (4 ms at HZ=250, 10 ms at HZ=100).
  const auto in_time = std::chrono::milliseconds(strata::malloc_config::kRemoteKeepMs - 15);
  bool measured = false;
  std::size_t reclaimed = 0;
  for (int attempt = 0; attempt < 50 && !measured; ++attempt) {
    std::thread([&] {
      std::vector<void*> objects(kBlocks * kPerBlock);
      for (auto& p : objects) p = strata_malloc(kSize);
      auto last_refill = std::chrono::steady_clock::now();
      std::size_t reclaimed_before = strata::malloc_detail::reclaimed_blocks();
      std::thread([&] {
        for (void* p : objects) strata_free(p);
      }).join();
      if (std::chrono::steady_clock::now() - last_refill > in_time) {  // too slow to tell: again
        strata_free(strata_malloc(kSize));
        return;
      }
      measured = true;
      reclaimed = strata::malloc_detail::reclaimed_blocks() - reclaimed_before;
    }).join();
  }
  ASSERT_TRUE(measured) << "no round freed its objects within " << in_time.count() << " ms of the allocation";
  // Blocks 0..kBlocks-1 went full in order; those kRemoteKeepLag refills or more behind are discarded.
  EXPECT_GE(reclaimed, kBlocks - strata::malloc_config::kRemoteKeepLag - 2);
  EXPECT_LE(reclaimed, kBlocks - strata::malloc_config::kRemoteKeepLag + 2);
}

// A block another thread empties while its owner is active goes on the
// owner's ready list: the owner's next refill reuses it, however long its
// full list (a producer whose older objects still live), instead of scanning
// kFullScanBudget blocks from the oldest and faulting a fresh block in.
TEST(StrataThreads, AnActiveOwnerReusesBlocksAnotherThreadEmptiedBeforeFreshOnes) {
  if constexpr (strata::malloc_config::kQuarantineSlots > 0)
    GTEST_SKIP() << "hardened build: its small-object quarantine keeps freed objects from their blocks";
  constexpr std::size_t kSize = 4096;  // 16 objects a block
  constexpr std::size_t kPerBlock = strata::malloc_config::kPageSize / kSize;
  constexpr std::size_t kOldBlocks = 4 * strata::malloc_config::kFullScanBudget;
  constexpr std::size_t kRecentBlocks = 6;
  const auto in_time = std::chrono::milliseconds(strata::malloc_config::kRemoteKeepMs - 15);
  auto block_of = [](void* p) { return reinterpret_cast<std::uintptr_t>(p) & ~(strata::malloc_config::kPageSize - 1); };
  bool measured = false;
  std::vector<std::uintptr_t> strays;
  for (int attempt = 0; attempt < 50 && !measured; ++attempt) {
    std::thread([&] {
      std::vector<void*> old(kOldBlocks * kPerBlock), recent(kRecentBlocks * kPerBlock), later(recent.size());
      for (auto& p : old) p = strata_malloc(kSize);
      for (auto& p : recent) p = strata_malloc(kSize);
      auto last_refill = std::chrono::steady_clock::now();
      std::thread([&] {
        for (void* p : recent) strata_free(p);
      }).join();
      bool in_window = std::chrono::steady_clock::now() - last_refill <= in_time;
      for (auto& p : later) p = strata_malloc(kSize);
      if (in_window) {  // else too slow to tell: again
        measured = true;
        std::vector<std::uintptr_t> emptied;
        for (void* p : recent) emptied.push_back(block_of(p));
        for (void* p : later)
          if (std::find(emptied.begin(), emptied.end(), block_of(p)) == emptied.end()) strays.push_back(block_of(p));
      }
      for (void* p : later) strata_free(p);
      for (void* p : old) strata_free(p);
    }).join();
  }
  ASSERT_TRUE(measured) << "no round freed its objects within " << in_time.count() << " ms of the allocation";
  EXPECT_TRUE(strays.empty()) << strays.size() << " of " << kRecentBlocks * kPerBlock
                              << " objects went to other blocks than the ones the consumer emptied";
}

// A large free never waits for its arena's lock: with every arena locked (as
// fork does), another thread's free returns at once, leaving the chunk on the
// arena's deferred list; the next lock holder releases it.
TEST(StrataThreads, ALargeFreeDoesNotWaitForABusyArena) {
  void* p = strata_malloc(100000);
  ASSERT_NE(p, nullptr);
  std::size_t live = strata::malloc_detail::large_stats().live_objects;
  strata::malloc_detail::large_lock_all();
  std::thread([&] { strata_free(p); }).join();  // hangs here if free waited for the lock
  strata::malloc_detail::large_unlock_all();
  EXPECT_EQ(strata::malloc_detail::large_stats().live_objects, live - 1);
}

// Huge objects from several threads at once: placements, frees, reallocs
// that grow in place or move their pages, and cached pages moved between
// runs, all under one lock while other threads write their own objects.
// Every page carries its owner's pattern, checked on each visit.
TEST(StrataThreads, ConcurrentHugeReallocAndReuseKeepEveryPage) {
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(700 + t));
      auto draw = [&] { return (std::size_t{2} << 20) + rng() % (std::size_t{6} << 20); };
      auto mark = [](unsigned char* p, std::size_t size, unsigned tag) {
        for (std::size_t off = 0; off < size; off += 4096) p[off] = static_cast<unsigned char>(tag + off / 4096);
        p[size - 1] = static_cast<unsigned char>(tag);
      };
      auto intact_upto = [](const unsigned char* p, std::size_t upto, unsigned tag) {
        for (std::size_t off = 0; off < upto; off += 4096)
          if (p[off] != static_cast<unsigned char>(tag + off / 4096)) return false;
        return true;
      };
      struct Slot {
        unsigned char* p = nullptr;
        std::size_t size = 0;
        unsigned tag = 0;
      };
      Slot slots[6];
      for (int i = 0; i < 400 / kScale; ++i) {
        Slot& s = slots[rng() % 6];
        if (s.p && !intact_upto(s.p, s.size, s.tag)) bad.fetch_add(1);
        if (s.p && rng() % 3 == 0) {
          std::size_t size = draw();
          auto* q = static_cast<unsigned char*>(strata_realloc(s.p, size));
          if (!q || !intact_upto(q, std::min(size, s.size) & ~std::size_t{4095}, s.tag)) bad.fetch_add(1);
          if (!q) continue;
          s = {q, size, s.tag};
          mark(s.p, s.size, s.tag);
        } else {
          strata_free(s.p);
          s.size = draw();
          s.tag = static_cast<unsigned>(rng());
          s.p = static_cast<unsigned char*>(strata_malloc(s.size));
          if (!s.p) {
            bad.fetch_add(1);
            continue;
          }
          mark(s.p, s.size, s.tag);
        }
      }
      for (Slot& s : slots) {
        if (s.p && !intact_upto(s.p, s.size, s.tag)) bad.fetch_add(1);
        strata_free(s.p);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(StrataThreads, ConcurrentMixedSizesIncludingLargeAndHuge) {
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(100 + t));
      std::vector<Message> live;
      for (int i = 0; i < 20000 / kScale; ++i) {
        if (live.size() > 200 || (!live.empty() && rng() % 2)) {
          std::size_t k = rng() % live.size();
          if (!intact(live[k])) bad.fetch_add(1);
          if (rng() % 4 == 0) {
            std::size_t size = random_size(rng);
            auto* q = static_cast<unsigned char*>(strata_realloc(live[k].ptr, size));
            Message m{q, size, live[k].tag};
            std::size_t keep = std::min<std::size_t>({size, live[k].size, 64});
            for (std::size_t j = 0; j < keep; ++j)
              if (q[j] != static_cast<unsigned char>(m.tag + j)) bad.fetch_add(1);
            stamp(m);
            live[k] = m;
          } else {
            strata_free(live[k].ptr);
            live[k] = live.back();
            live.pop_back();
          }
        } else {
          std::size_t size = rng() % 50 == 0 ? (1u << 20) + rng() % (2u << 20) : random_size(rng);
          Message m{static_cast<unsigned char*>(strata_malloc(size)), size, static_cast<std::uint32_t>(rng())};
          stamp(m);
          live.push_back(m);
        }
      }
      for (auto& m : live) {
        if (!intact(m)) bad.fetch_add(1);
        strata_free(m.ptr);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
