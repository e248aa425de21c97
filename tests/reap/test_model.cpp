// Model-based random tests.
//
// 1. The project's heap model (tests/support/heap_model.hpp) on one reap:
//    malloc/free/realloc, every live byte verified, alignment and usable size.
// 2. The same idea across a tree of reaps: random create / malloc / calloc /
//    realloc / aligned_alloc / free / clear / destroy, checked against a
//    reference model (which reap owns which object, which reaps are alive);
//    every live object's contents are verified after each clear and destroy
//    and periodically, and each reap's object count against the model.
// 3. Mixed-size bursts, frees, and smaller sizes allocated into the freed
//    memory, every live byte checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "reap_test_support.hpp"
#include "support/heap_model.hpp"

namespace {

using strata::test::stats_of;
using strata::test::detail::fill;
using strata::test::detail::first_mismatch;
using strata::test::detail::LiveObject;

// One reap as a strata::layers::Heap for run_heap_model.
struct ReapAsHeap {
  strata_reap* reap;
  void* malloc(std::size_t size) { return strata_reap_malloc(reap, size); }
  void free(void* ptr) { strata_reap_free(reap, ptr); }
  void* realloc(void* ptr, std::size_t size) { return strata_reap_realloc(reap, ptr, size); }
  std::size_t getSize(void* ptr) { return strata_reap_usable_size(reap, ptr); }
};
static_assert(strata::layers::SizedHeap<ReapAsHeap>);

TEST(ReapModel, HeapModelOnOneReap) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    strata::test::ScopedReap reap;
    ReapAsHeap heap{reap};
    strata::test::run_heap_model(heap, {.seed = seed, .operations = 40000, .max_size = 20000});
    EXPECT_EQ(stats_of(reap).objects_live, 0u);
  }
}

TEST(ReapModel, HeapModelWithClearsBetweenRounds) {
  strata::test::ScopedReap reap;
  ReapAsHeap heap{reap};
  for (std::uint64_t round = 0; round < 4; ++round) {
    strata::test::run_heap_model(heap, {.seed = 100 + round, .operations = 20000, .max_live = 500});
    strata_reap_malloc(reap, 50);  // left for clear
    strata_reap_clear(reap);
    EXPECT_EQ(stats_of(reap).objects_live, 0u);
  }
}

// Mixed sizes, frees, then smaller sizes into the freed memory (the reap
// reuses a freed slot for any request that fits and splits off the rest):
// every live byte of every object is checked after each step's writes, and
// the reap's object count against the model.
class ShrinkingReuseModel {
 public:
  explicit ShrinkingReuseModel(std::uint64_t seed) : rng_(seed) {}

  void run(std::size_t steps) {
    for (std::size_t step = 0; step < steps; ++step) {
      // A burst of mixed sizes (a stream run before any free, after a clear).
      const std::size_t burst = 1 + rng_() % 12;
      for (std::size_t i = 0; i < burst; ++i) allocate(mixedSize());
      // Free one or more, then allocate smaller sizes than each freed one.
      const std::size_t frees = 1 + rng_() % 4;
      for (std::size_t i = 0; i < frees && !live_.empty(); ++i) {
        const std::size_t victim = rng_() % live_.size();
        const std::size_t freed_size = live_[victim].size;
        release(victim);
        const std::size_t smaller = rng_() % 3;
        for (std::size_t k = 0; k < smaller; ++k) allocate(freed_size == 0 ? 0 : rng_() % freed_size);
      }
      if (::testing::Test::HasFatalFailure()) return;
      if (step % 64 == 0) verifyAll();
      if (step % 499 == 498) {
        strata_reap_clear(reap_);
        live_.clear();
      }
    }
    verifyAll();
  }

 private:
  std::size_t mixedSize() {
    const unsigned bucket = rng_() % 16;
    return rng_() % (bucket < 12 ? 65 : bucket < 15 ? 1100 : 9000);
  }

  void allocate(std::size_t size) {
    auto* p = static_cast<unsigned char*>(strata_reap_malloc(reap_, size));
    ASSERT_NE(p, nullptr) << "size " << size;
    ASSERT_TRUE(strata::test::aligned(p, 16));
    ASSERT_GE(strata_reap_usable_size(reap_, p), size);
    LiveObject o{p, size, next_id_++};
    fill(o);
    live_.push_back(o);
    // The new object's bytes overwrote nobody: its neighbours are checked now.
    for (const LiveObject& other : live_)
      if (other.ptr + other.size + 64 > p && p + size + 64 > other.ptr) verify(other);
  }

  void release(std::size_t i) {
    verify(live_[i]);
    strata_reap_free(reap_, live_[i].ptr);
    live_[i] = live_.back();
    live_.pop_back();
  }

  void verify(const LiveObject& o) {
    ASSERT_EQ(first_mismatch(o, o.size), o.size) << "object " << o.id << " (" << o.size << " bytes) corrupted";
  }

  void verifyAll() {
    for (const LiveObject& o : live_) verify(o);
    ASSERT_EQ(stats_of(reap_).objects_live, live_.size());
  }

  std::mt19937_64 rng_;
  strata::test::ScopedReap reap_;
  std::vector<LiveObject> live_;
  std::uint64_t next_id_ = 1;
};

TEST(ReapModel, FreeThenAllocateSmallerSizesKeepsEveryLiveByte) {
  for (std::uint64_t seed = 11; seed <= 13; ++seed) {
    SCOPED_TRACE(seed);
    ShrinkingReuseModel model(seed);
    model.run(4000 * strata::test::long_factor());
    if (HasFatalFailure()) return;
  }
}

class TreeModel {
 public:
  explicit TreeModel(std::uint64_t seed) : rng_(seed) {}
  ~TreeModel() {
    for (std::size_t r = 0; r < reaps_.size(); ++r)
      if (reaps_[r].alive && reaps_[r].parent < 0) strata_reap_destroy(reaps_[r].reap);
  }

  void run(std::size_t operations) {
    create(-1);
    for (std::size_t step = 0; step < operations; ++step) {
      const unsigned action = rng_() % 1000;
      if (action < 15) create(randomAliveOrRoot());
      else if (action < 22) clear(randomAlive());
      else if (action < 27) destroy(randomAlive());
      else if (action < 420) allocate(randomAlive());
      else if (action < 470) callocate(randomAlive());
      else if (action < 500) alignedAllocate(randomAlive());
      else if (action < 600) reallocate();
      else release();
      if (::testing::Test::HasFatalFailure()) return;
      if (step % 4096 == 0) verifyAll();
    }
    verifyAll();
  }

 private:
  struct Reap {
    strata_reap* reap;
    int parent;
    bool alive;
  };
  struct Object {
    LiveObject data;
    int owner;
  };

  int randomAlive() {
    if (alive_count_ == 0) create(-1);
    for (;;) {
      int r = static_cast<int>(rng_() % reaps_.size());
      if (reaps_[r].alive) return r;
    }
  }
  int randomAliveOrRoot() { return rng_() % 4 == 0 ? -1 : randomAlive(); }

  std::size_t randomSize() {
    const unsigned bucket = rng_() % 32;
    const std::size_t cap = bucket < 24 ? 64 : bucket < 30 ? 1500 : bucket < 31 ? 5000 : 80000;
    return rng_() % (cap + 1);
  }

  void create(int parent) {
    if (alive_count_ >= 24) return;
    strata_reap* r = strata_reap_create(parent < 0 ? nullptr : reaps_[parent].reap);
    ASSERT_NE(r, nullptr);
    reaps_.push_back({r, parent, true});
    ++alive_count_;
  }

  bool inSubtree(int node, int top) const {
    for (int n = node; n >= 0; n = reaps_[n].parent)
      if (n == top) return true;
    return false;
  }

  void dropObjectsOf(int top) {
    std::erase_if(objects_, [&](const Object& o) { return inSubtree(o.owner, top); });
  }

  void clear(int r) {
    strata_reap_clear(reaps_[r].reap);
    dropObjectsOf(r);
    verifyAll();
  }

  void destroy(int r) {
    strata_reap_destroy(reaps_[r].reap);
    dropObjectsOf(r);
    for (std::size_t n = 0; n < reaps_.size(); ++n)
      if (reaps_[n].alive && inSubtree(static_cast<int>(n), r)) {
        reaps_[n].alive = false;
        --alive_count_;
      }
    verifyAll();
  }

  void track(int r, void* p, std::size_t size, std::size_t alignment) {
    ASSERT_NE(p, nullptr) << "size " << size;
    ASSERT_TRUE(strata::test::aligned(p, alignment)) << p << " size " << size << " alignment " << alignment;
    ASSERT_GE(strata_reap_usable_size(reaps_[r].reap, p), size);
    Object o{{static_cast<unsigned char*>(p), size, next_id_++}, r};
    fill(o.data);
    objects_.push_back(o);
  }

  void allocate(int r) {
    const std::size_t size = randomSize();
    track(r, strata_reap_malloc(reaps_[r].reap, size), size, 16);
  }

  void callocate(int r) {
    const std::size_t count = rng_() % 40, each = 1 + rng_() % 24;
    auto* p = static_cast<unsigned char*>(strata_reap_calloc(reaps_[r].reap, count, each));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < count * each; ++i) ASSERT_EQ(p[i], 0) << "calloc byte " << i;
    track(r, p, count * each, 16);
  }

  void alignedAllocate(int r) {
    const std::size_t alignment = std::size_t{1} << (rng_() % 14);
    const std::size_t size = randomSize();
    track(r, strata_reap_aligned_alloc(reaps_[r].reap, alignment, size), size, std::max<std::size_t>(alignment, 16));
  }

  void reallocate() {
    if (objects_.empty()) return;
    Object& o = objects_[rng_() % objects_.size()];
    verify(o);
    const std::size_t size = randomSize();
    auto* p = static_cast<unsigned char*>(strata_reap_realloc(reaps_[o.owner].reap, o.data.ptr, size));
    ASSERT_NE(p, nullptr);
    LiveObject moved{p, o.data.size, o.data.id};
    ASSERT_EQ(first_mismatch(moved, std::min(o.data.size, size)), std::min(o.data.size, size))
        << "realloc lost contents";
    ASSERT_TRUE(strata::test::aligned(p, 16));
    ASSERT_GE(strata_reap_usable_size(reaps_[o.owner].reap, p), size);
    o.data = LiveObject{p, size, next_id_++};
    fill(o.data);
  }

  void release() {
    if (objects_.empty()) return;
    const std::size_t i = rng_() % objects_.size();
    verify(objects_[i]);
    strata_reap_free(reaps_[objects_[i].owner].reap, objects_[i].data.ptr);
    objects_[i] = objects_.back();
    objects_.pop_back();
  }

  void verify(const Object& o) {
    ASSERT_EQ(first_mismatch(o.data, o.data.size), o.data.size)
        << "object " << o.data.id << " of reap " << o.owner << " corrupted";
  }

  void verifyAll() {
    std::vector<std::size_t> counts(reaps_.size(), 0);
    for (const Object& o : objects_) {
      verify(o);
      ++counts[o.owner];
    }
    for (std::size_t r = 0; r < reaps_.size(); ++r) {
      if (!reaps_[r].alive) continue;
      ASSERT_EQ(stats_of(reaps_[r].reap).objects_live, counts[r]) << "reap " << r;
    }
  }

  std::mt19937_64 rng_;
  std::vector<Reap> reaps_;
  std::vector<Object> objects_;
  std::uint64_t next_id_ = 1;
  int alive_count_ = 0;
};

TEST(ReapModel, TreeOfReaps) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(seed);
    TreeModel model(seed);
    model.run(25000 * strata::test::long_factor());
    if (HasFatalFailure()) return;
  }
}

}  // namespace
