// PerClassHeap — routes a class's operator new/delete through a heap, without
// touching the class (the paper's §3.1): PerClassHeap<Foo, FreelistHeap<MallocHeap>>
// is a Foo whose objects (and arrays) come from one static heap of that type,
// e.g. `class FasterFoo : public PerClassHeap<Foo, FreelistHeap<MallocHeap>> {};`.
// operator new throws std::bad_alloc when the heap returns nullptr (the C++
// contract); the nothrow forms return nullptr.
// Limits: the heap is shared by all threads — make SuperHeap thread safe
// (LockedHeap) if objects are created on several threads. Deleting through a
// Foo* uses Foo's operator delete unless Foo has a virtual destructor. The heap
// is never destroyed (see detail/static_instance.hpp).
#pragma once
#include <cstddef>
#include <new>

#include "strata/layers/heap.hpp"
#include "strata/layers/utility/detail/static_instance.hpp"

namespace strata::layers {

template <class Object, Heap SuperHeap>
class PerClassHeap : public Object {
 public:
  using Object::Object;

  static void* operator new(std::size_t size) { return allocate_or_throw(size); }
  static void* operator new[](std::size_t size) { return allocate_or_throw(size); }
  static void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return getHeap().malloc(size); }
  static void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return getHeap().malloc(size); }

  static void operator delete(void* ptr) noexcept { release(ptr); }
  static void operator delete[](void* ptr) noexcept { release(ptr); }
  static void operator delete(void* ptr, const std::nothrow_t&) noexcept { release(ptr); }
  static void operator delete[](void* ptr, const std::nothrow_t&) noexcept { release(ptr); }

  // The one heap behind every PerClassHeap<Object, SuperHeap>.
  static SuperHeap& getHeap() noexcept { return detail::static_instance<SuperHeap, PerClassHeap>(); }

 private:
  static void* allocate_or_throw(std::size_t size) {
    void* ptr = getHeap().malloc(size);
    if (!ptr) throw std::bad_alloc();
    return ptr;
  }
  static void release(void* ptr) noexcept {
    if (ptr) getHeap().free(ptr);
  }
};

}  // namespace strata::layers
