// The model-based random test, generic over any strata::layers::Heap.
//
// Long seeded sequences of malloc/free (and realloc where the heap offers it)
// with random sizes. Every live object carries a pattern derived from its id;
// the pattern is verified before the object is freed or reallocated and at the
// end, which catches overlapping objects and corruption. Every pointer is
// checked against the heap's alignment and, where the heap knows sizes, the
// usable size against the request.
//
// STRATA_TEST_LONG=1 in the environment multiplies the number of operations.
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "strata/layers/heap.hpp"

namespace strata::test {

struct ModelOptions {
  std::uint64_t seed = 1;
  std::size_t operations = 200000;  // multiplied by long_factor() under STRATA_TEST_LONG
  std::size_t max_live = 2000;      // objects live at once, at most
  std::size_t max_size = 4096;      // largest request (sizes skew small)
  std::size_t alignment = strata::layers::kAlignment;  // 0: no alignment check
  bool allow_zero = true;            // request size 0 sometimes
};

inline std::size_t long_factor() {
  const char* v = std::getenv("STRATA_TEST_LONG");
  return (v && *v && *v != '0') ? 20 : 1;
}

namespace detail {

inline unsigned char pattern_byte(std::uint64_t id, std::size_t offset) {
  std::uint64_t x = id * 0x9E3779B97F4A7C15ull + offset * 0xBF58476D1CE4E5B9ull;
  return static_cast<unsigned char>((x >> 29) ^ (x >> 47));
}

struct LiveObject {
  unsigned char* ptr;
  std::size_t size;
  std::uint64_t id;
};

inline void fill(const LiveObject& o) {
  for (std::size_t i = 0; i < o.size; ++i) o.ptr[i] = pattern_byte(o.id, i);
}

// Returns the first corrupted offset, or size when intact.
inline std::size_t first_mismatch(const LiveObject& o, std::size_t upto) {
  for (std::size_t i = 0; i < upto; ++i)
    if (o.ptr[i] != pattern_byte(o.id, i)) return i;
  return upto;
}

}  // namespace detail

template <class H>
concept ReallocHeap = requires(H h, void* p, std::size_t n) {
  { h.realloc(p, n) } -> std::same_as<void*>;
};

// Runs the model against `heap`; reports failures through GoogleTest.
template <strata::layers::Heap H>
void run_heap_model(H& heap, ModelOptions opt = {}) {
  using detail::LiveObject;
  std::mt19937_64 rng(opt.seed);
  std::vector<LiveObject> live;
  live.reserve(opt.max_live);
  std::uint64_t next_id = 1;
  const std::size_t ops = opt.operations * long_factor();

  auto random_size = [&]() -> std::size_t {
    // Mostly small, some medium, a few up to max_size: allocator-shaped traffic.
    std::size_t bucket = rng() % 16;
    std::size_t cap = bucket < 10 ? 128 : bucket < 15 ? 1024 : opt.max_size;
    if (cap > opt.max_size) cap = opt.max_size;
    std::size_t s = rng() % (cap + 1);
    if (s == 0 && !opt.allow_zero) s = 1;
    return s;
  };
  auto check_new = [&](void* p, std::size_t size) {
    ASSERT_NE(p, nullptr) << "malloc(" << size << ") failed";
    if (opt.alignment) {
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % opt.alignment, 0u)
          << "pointer " << p << " for size " << size << " is not " << opt.alignment << "-aligned";
    }
    if constexpr (strata::layers::SizedHeap<H>) {
      ASSERT_GE(static_cast<std::size_t>(heap.getSize(p)), size) << "getSize(" << p << ") < request";
    }
  };
  auto verify = [&](const LiveObject& o, std::size_t upto) {
    std::size_t bad = detail::first_mismatch(o, upto);
    ASSERT_EQ(bad, upto) << "object " << o.id << " at " << static_cast<void*>(o.ptr) << " (size "
                         << o.size << ") corrupted at offset " << bad;
  };

  for (std::size_t step = 0; step < ops; ++step) {
    unsigned action = rng() % 100;
    bool must_free = live.size() >= opt.max_live;
    if (!must_free && (live.empty() || action < 50)) {
      std::size_t size = random_size();
      void* p = heap.malloc(size);
      check_new(p, size);
      LiveObject o{static_cast<unsigned char*>(p), size, next_id++};
      detail::fill(o);
      live.push_back(o);
    } else if constexpr (ReallocHeap<H>) {
      std::size_t idx = rng() % live.size();
      LiveObject& o = live[idx];
      if (!must_free && action < 65) {
        verify(o, o.size);
        std::size_t size = random_size();
        void* p = heap.realloc(o.ptr, size);
        if (size == 0 && p == nullptr) {  // realloc(p, 0) may free
          live[idx] = live.back();
          live.pop_back();
          continue;
        }
        check_new(p, size);
        LiveObject moved{static_cast<unsigned char*>(p), o.size, o.id};
        verify(moved, std::min(o.size, size));  // contents kept up to the smaller size
        o = LiveObject{moved.ptr, size, next_id++};
        detail::fill(o);
      } else {
        verify(o, o.size);
        heap.free(o.ptr);
        live[idx] = live.back();
        live.pop_back();
      }
    } else {
      std::size_t idx = rng() % live.size();
      verify(live[idx], live[idx].size);
      heap.free(live[idx].ptr);
      live[idx] = live.back();
      live.pop_back();
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (auto& o : live) {
    verify(o, o.size);
    heap.free(o.ptr);
  }
}

}  // namespace strata::test
