// Different reaps on different threads at the same time (TSan runs this):
// each thread builds, fills, verifies, clears and destroys trees of its own
// reaps, while all of them share the process-wide mapping cache.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "strata/reap.h"

namespace {

void worker(unsigned seed, bool* ok) {
  std::mt19937 rng(seed);
  for (int round = 0; round < 40; ++round) {
    strata_reap* root = strata_reap_create(nullptr);
    strata_reap* child = strata_reap_create(root);
    std::vector<std::pair<unsigned char*, std::size_t>> objects;
    for (int i = 0; i < 2000; ++i) {
      strata_reap* r = (i & 1) ? root : child;
      const std::size_t size = rng() % (i % 50 == 0 ? 20000 : 200);
      auto* p = static_cast<unsigned char*>(strata_reap_malloc(r, size));
      if (p == nullptr) return;
      std::memset(p, static_cast<int>(seed & 0xff), size);
      if (rng() % 3 == 0) strata_reap_free(r, p);
      else objects.emplace_back(p, size);
    }
    for (auto& [p, size] : objects)
      for (std::size_t i = 0; i < size; ++i)
        if (p[i] != static_cast<unsigned char>(seed & 0xff)) return;
    if (round % 2 == 0) strata_reap_clear(root);
    strata_reap_destroy(root);
  }
  *ok = true;
}

TEST(ReapThreads, DifferentReapsOnDifferentThreads) {
  constexpr int kThreads = 4;
  bool ok[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, 1000u + static_cast<unsigned>(t), &ok[t]);
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(ok[t]) << "thread " << t << " saw corrupted memory or NULL";
}

}  // namespace
