// ClearOptimizedHeap — reuse freed small objects; pure bumping until then.
//
// The paper's ClearOptimizedHeap keeps one flag, "nothing freed yet", and
// bumps a pointer while it holds. Here each size class has a LIFO list of
// its freed objects (the link lives in the freed object itself), and the flag
// is per class: the first free of a class suspends its bumping in
// SizeClassSlabHeap, so the fast path (tryFast: nothing but the bump) fails for
// it and malloc takes freed memory first; when the list runs dry the class
// bumps again. clear() empties the lists, so a cleared reap is pure bumping.
//
// kInstrumented: the links are touched through instrument::expose/hide,
// because under ASan or Valgrind a freed object is hidden from everybody.
#pragma once
#include <cstddef>

#include "reap/instrument.hpp"
#include "reap/layers/size_class_slab_heap.hpp"
#include "reap/layers/slab_header.hpp"
#include "reap/reap_config.hpp"

namespace strata::reap_detail {

template <class Super>
class ClearOptimizedHeap : public Super {
 public:
  // The fast path, for size <= kMaxStepSize: pure bumping, or nullptr when the
  // class has freed objects waiting (it is suspended then) or its slab is full.
  void* tryFast(std::size_t size) noexcept { return Super::tryBump(size); }

  template <bool kInstrumented = false>
  void* malloc(std::size_t size) noexcept {
    if (size > kMaxSmallSize) return Super::malloc(size);
    const std::size_t size_class = size_class_of(size);
    if (FreeObject* object = freed_[size_class].head) return pop<kInstrumented>(size_class, object);
    return Super::mallocClass(size_class);
  }

  template <bool kInstrumented = false>
  void free(void* ptr) noexcept {
    const SlabHeader* slab = slab_of(ptr);
    if (slab->stride == 0) return Super::free(ptr);
    auto* object = static_cast<FreeObject*>(ptr);
    FreeList& list = freed_[slab->size_class];
    if (list.head == nullptr) Super::suspend(slab->size_class);  // freed memory goes first now
    link<kInstrumented>(object, list.head);
    list.head = object;
    ++list.count;
  }

  void clear() noexcept {
    for (auto& list : freed_) list = FreeList{};
    Super::clear();
  }

  // Objects of the class waiting on its free list (statistics).
  std::size_t freedObjects(std::size_t size_class) const noexcept { return freed_[size_class].count; }

 private:
  struct FreeObject {
    FreeObject* next;
  };
  struct FreeList {
    FreeObject* head = nullptr;
    std::size_t count = 0;
  };

  template <bool kInstrumented>
  static FreeObject* next(FreeObject* object) noexcept {
    if constexpr (kInstrumented) instrument::expose(object, sizeof(FreeObject));
    FreeObject* n = object->next;
    if constexpr (kInstrumented) instrument::hide(object, sizeof(FreeObject));
    return n;
  }
  template <bool kInstrumented>
  static void link(FreeObject* object, FreeObject* next) noexcept {
    if constexpr (kInstrumented) instrument::expose(object, sizeof(FreeObject));
    object->next = next;
    if constexpr (kInstrumented) instrument::hide(object, sizeof(FreeObject));
  }
  template <bool kInstrumented>
  void* pop(std::size_t size_class, FreeObject* object) noexcept {
    FreeList& list = freed_[size_class];
    list.head = next<kInstrumented>(object);
    --list.count;
    if (list.head == nullptr) Super::resume(size_class);  // back to pure bumping
    return object;
  }

  FreeList freed_[kSizeClasses];
};

}  // namespace strata::reap_detail
