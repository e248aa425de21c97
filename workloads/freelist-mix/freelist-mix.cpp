// freelist-mix — ours, not a paper's: per-class allocation of 16-byte objects
// in a realistic mix, between the 2026 paper's pure-throughput upper bound
// (§4.3, RQ1; workloads/freelist16) and a whole program such as boxed-sim.
// Every object is allocated, written, read back and freed, once from an
// intrusive freelist written into the program by hand and once from
// malloc/free.
//
// The allocation pattern is not a tight malloc-free-malloc: bursts of 1–32
// allocations alternate with bursts of frees, taken half the time from the
// newest live objects (LIFO, like a stack of temporaries) and half the time
// from the oldest (FIFO, like a queue of messages), so the freelist's order
// and the malloc's bins both get shuffled. The live set wanders between
// kMinLive and kMaxLive objects.
//
// Modes:
//   custom  an intrusive LIFO freelist inline in the loop: a freed object's
//           first word links it to the next one; a miss calls malloc(16) (the
//           per-class allocator of boxed-sim: no chunks, 2026 Table 1);
//   naive   malloc(16) / free for every object ("remove freelist", Table 4).
// The checksum digests the values read back from every object as it is freed,
// in program order, so it is the same in both modes and under any malloc.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Mode;
using strata::workload::Options;
using strata::workload::Rng;

// The 16-byte object the program allocates. Both words are written on
// allocation and read on free, so no allocator can skip touching it.
struct Object {
  std::uint64_t key;
  std::uint64_t value;
};
static_assert(sizeof(Object) == 16);

constexpr std::uint64_t kAllocationsPerScale = 1'000'000;
constexpr std::size_t kRingSize = std::size_t{1} << 15;  // power of two
constexpr std::size_t kMaxLive = 24'000;                 // < kRingSize
constexpr std::size_t kMinLive = 64;

// naive: every object from malloc, back to free at once.
struct MallocPolicy {
  Object* allocate() {
    auto* object = static_cast<Object*>(std::malloc(sizeof(Object)));
    if (object == nullptr) throw std::bad_alloc();
    return object;
  }
  void release(Object* object) { std::free(object); }
  void finish() {}
};

// custom: the freelist a programmer writes by hand — the freed object itself
// holds the link, so there is no per-object overhead and no call on a hit.
struct IntrusiveFreelistPolicy {
  struct FreeObject {
    FreeObject* next;
  };
  FreeObject* head = nullptr;

  Object* allocate() {
    if (FreeObject* object = head) {
      head = object->next;
      return reinterpret_cast<Object*>(object);
    }
    auto* object = static_cast<Object*>(std::malloc(sizeof(Object)));
    if (object == nullptr) throw std::bad_alloc();
    return object;
  }
  void release(Object* object) {
    auto* free_object = reinterpret_cast<FreeObject*>(object);
    free_object->next = head;
    head = free_object;
  }
  // Gives the cached objects back at exit.
  void finish() {
    while (FreeObject* object = head) {
      head = object->next;
      std::free(object);
    }
  }
};

// The live objects, oldest at front_, newest just before back_ (a ring of
// pointers, so both ends are O(1) and nothing here allocates).
class LiveRing {
 public:
  std::size_t size() const { return back_ - front_; }
  void push(Object* object) { slots_[back_++ & kMask] = object; }
  Object* pop_newest() { return slots_[--back_ & kMask]; }
  Object* pop_oldest() { return slots_[front_++ & kMask]; }

 private:
  static constexpr std::size_t kMask = kRingSize - 1;
  std::size_t front_ = 0, back_ = 0;
  Object* slots_[kRingSize];
};

template <class Policy>
std::uint64_t run(const Options& options) {
  Policy heap;
  Rng rng(options.seed);
  auto ring = std::make_unique<LiveRing>();
  const std::uint64_t total = options.scale * kAllocationsPerScale;
  std::uint64_t allocated = 0, freed = 0, digest = 0;

  auto free_one = [&](Object* object) {
    // Read the object back: the result depends on what the program wrote.
    digest = (digest ^ object->key) * 0x9E3779B97F4A7C15ULL + object->value;
    heap.release(object);
    ++freed;
  };

  while (allocated < total) {
    const std::uint64_t r = rng.next();
    const std::size_t burst = 1 + (r & 31);
    const bool grow = ring->size() < kMinLive || (ring->size() + burst <= kMaxLive && ((r >> 5) & 1));
    if (grow) {
      for (std::size_t i = 0; i < burst && allocated < total; ++i) {
        Object* object = heap.allocate();
        object->key = allocated;
        object->value = (allocated * 0xD6E8FEB86659FD93ULL) ^ r;
        ring->push(object);
        ++allocated;
      }
    } else {
      const bool lifo = (r >> 6) & 1;
      const std::size_t n = burst < ring->size() ? burst : ring->size();
      for (std::size_t i = 0; i < n; ++i) free_one(lifo ? ring->pop_newest() : ring->pop_oldest());
    }
  }
  const std::uint64_t left = ring->size();
  while (ring->size() > 0) free_one(ring->pop_oldest());
  heap.finish();

  Checksum sum;
  sum.add(allocated);
  sum.add(freed);
  sum.add(left);
  sum.add(digest);
  std::printf("freelist-mix: %llu objects of 16 bytes, %llu live at the end\n",
              static_cast<unsigned long long>(allocated), static_cast<unsigned long long>(left));
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main(argc, argv, "freelist-mix", {Mode::custom, Mode::naive}, [](const Options& o) {
    return o.mode == Mode::custom ? run<IntrusiveFreelistPolicy>(o) : run<MallocPolicy>(o);
  });
}
