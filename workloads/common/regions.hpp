// regions.hpp — the regions a workload's three modes choose between, with one
// vocabulary, so that a workload's code is one template over its region:
//
//   custom  LayerRegion<Heap>  a region built from strata's heap layers (a
//                              ZoneHeap, a NestedRegionHeap): bump allocation,
//                              nothing given back before clear();
//   naive   MallocRegion       every object a malloc block of its own, all
//                              freed at clear() (NaiveRegion; 2002 paper §5.1,
//                              2026 Table 4: "custom allocation disabled");
//   reap    ReapRegion         a strata::reap: release() frees a dead object
//                              at once, clear() frees the rest.
//
// Each region has
//   void* allocate(std::size_t n)   an object, or nullptr when memory runs out;
//   void  release(void* p)          an object the program knows is dead (only a
//                                   reap gives it back before clear());
//   void  clear()                   every object at once;
//   static constexpr bool kFreesEarly   whether release() gives memory back;
// and a constructor from a parent region, for a child that the parent
// outlives: a reap and a NestedRegionHeap nest; for the others lifetimes nest
// by construction and there is nothing to link. Destroying a region frees
// what it still holds.
#pragma once
#include <concepts>
#include <cstddef>
#include <new>

#include <strata/reap.hpp>

#include "naive_region.hpp"

namespace strata::workload {

template <class Heap>
class LayerRegion {
  // A heap that nests (NestedRegionHeap) knows its parent.
  static constexpr bool kNests = requires(Heap& heap) {
    { heap.parent() } -> std::same_as<Heap*>;
  };

 public:
  static constexpr bool kFreesEarly = false;
  LayerRegion() = default;
  explicit LayerRegion(LayerRegion& parent) noexcept
    requires kNests
      : heap_(parent.heap_) {}
  explicit LayerRegion(LayerRegion&) noexcept
    requires(!kNests)
  {}  // nothing to link
  LayerRegion(const LayerRegion&) = delete;
  LayerRegion& operator=(const LayerRegion&) = delete;

  void* allocate(std::size_t n) noexcept { return heap_.malloc(n); }
  void release(void*) noexcept {}  // a region frees nothing early
  void clear() noexcept { heap_.clear(); }

 private:
  Heap heap_;
};

class MallocRegion {
 public:
  static constexpr bool kFreesEarly = false;
  MallocRegion() = default;
  explicit MallocRegion(MallocRegion&) noexcept {}  // nothing to link
  MallocRegion(const MallocRegion&) = delete;
  MallocRegion& operator=(const MallocRegion&) = delete;

  void* allocate(std::size_t n) noexcept { return objects_.malloc(n); }
  void release(void*) noexcept {}  // kept to the clear, as the program's region would
  void clear() noexcept { objects_.clear(); }

 private:
  NaiveRegion objects_;
};

class ReapRegion {
 public:
  static constexpr bool kFreesEarly = true;
  ReapRegion() = default;
  explicit ReapRegion(ReapRegion& parent) : reap_(parent.reap_) {}
  ReapRegion(const ReapRegion&) = delete;
  ReapRegion& operator=(const ReapRegion&) = delete;

  void* allocate(std::size_t n) noexcept { return reap_.malloc(n); }
  void release(void* p) noexcept { reap_.free(p); }
  void clear() noexcept { reap_.clear(); }
  // The reap itself, for what only a reap can do (realloc).
  strata::reap& reap() noexcept { return reap_; }

 private:
  strata::reap reap_;
};

// allocate(n), or std::bad_alloc.
template <class Region>
void* allocate_or_throw(Region& region, std::size_t n) {
  void* p = region.allocate(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace strata::workload
