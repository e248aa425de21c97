// The region emulator (paper §5.1): strata/reap.h over the C library's
// malloc/free. Every object is a malloc block of its own, recorded in a
// dynamic array of its reap; clear() frees each one. Same symbols as the real
// reap: link -lstrata-reap-emulator instead of -lstrata-reap to measure what
// reaps gain over general-purpose allocation (docs/reaps.md).
//
// Each object carries a 32-byte header (its reap, its slot in the array, its
// size, the block's start) so free and realloc are O(1). A free through the
// wrong reap aborts naming both; no other misuse is checked.
//
// The inline strata_reap_malloc of strata/reap.h reads the reap's public head:
// here it always says "no inline window" (STRATA_REAP_SLOW_EMULATOR, limit ==
// bump == 0, and so is its sized window), so every allocation comes to
// strata_reap_malloc_slow or strata_reap_malloc_sized_slow below.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "strata/layers/heap.hpp"
#include "strata/layers/region/nested_heap.hpp"
#include "strata/reap.h"

using strata::layers::is_power_of_two;

namespace {

struct ObjectHeader {
  const strata_reap* owner;
  std::size_t slot;  // index in the owner's record array
  std::size_t size;
  void* block;  // what malloc returned
};
constexpr std::size_t kHeaderBytes = 32;
static_assert(sizeof(ObjectHeader) == kHeaderBytes);

ObjectHeader* header_of(const void* ptr) {
  return reinterpret_cast<ObjectHeader*>(reinterpret_cast<std::uintptr_t>(ptr) - kHeaderBytes);
}

// The records of one reap: every live object, in a growable array.
class RecordedObjects {
 public:
  bool record(ObjectHeader* h) noexcept {
    if (count_ == capacity_) {
      std::size_t grown = capacity_ == 0 ? 64 : capacity_ * 2;
      void* more = std::realloc(objects_, grown * sizeof(ObjectHeader*));
      if (more == nullptr) return false;
      objects_ = static_cast<ObjectHeader**>(more);
      capacity_ = grown;
    }
    h->slot = count_;
    objects_[count_++] = h;
    bytes_ += h->size;
    return true;
  }
  void forget(ObjectHeader* h) noexcept {
    ObjectHeader* last = objects_[--count_];
    objects_[h->slot] = last;
    last->slot = h->slot;
    bytes_ -= h->size;
  }
  void freeAll() noexcept {
    for (std::size_t i = 0; i < count_; ++i) std::free(objects_[i]->block);
    count_ = 0;
    bytes_ = 0;
  }
  void release() noexcept {
    freeAll();
    std::free(objects_);
    objects_ = nullptr;
    capacity_ = 0;
  }
  std::size_t count() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  ObjectHeader** objects_ = nullptr;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
  std::size_t bytes_ = 0;
};

using EmulatedHeap = strata::layers::NestedHeap<RecordedObjects>;

}  // namespace

// The public head first, closed for good: no inline allocation.
struct strata_reap final : strata_reap_head, EmulatedHeap {
  strata_reap()
      : strata_reap_head{0, 0, STRATA_REAP_SLOW_EMULATOR, STRATA_REAP_HEAD_VERSION,
                         strata_reap_sized_cursor{0, 0, STRATA_REAP_SLOW_EMULATOR, 0}} {}
};

namespace {

strata_reap* as_reap(EmulatedHeap* node) { return static_cast<strata_reap*>(node); }

void* place(strata_reap* reap, void* block, std::size_t offset, std::size_t size) {
  if (block == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  char* object = static_cast<char*>(block) + offset;
  ObjectHeader* h = header_of(object);
  h->owner = reap;
  h->size = size;
  h->block = block;
  if (!reap->record(h)) {
    std::free(block);
    errno = ENOMEM;
    return nullptr;
  }
  return object;
}

void* emulated_malloc(strata_reap* reap, std::size_t size, std::size_t alignment) {
  if (size > SIZE_MAX / 2) {
    errno = ENOMEM;
    return nullptr;
  }
  if (alignment <= strata::layers::kAlignment)
    return place(reap, std::malloc(kHeaderBytes + size), kHeaderBytes, size);
  const std::size_t offset = alignment > kHeaderBytes ? alignment : kHeaderBytes;
  void* block = nullptr;
  if (posix_memalign(&block, alignment, offset + size) != 0) block = nullptr;
  return place(reap, block, offset, size);
}

ObjectHeader* owned_header(const char* call, const strata_reap* reap, const void* ptr) {
  ObjectHeader* h = header_of(ptr);
  if (h->owner != reap) {
    std::fprintf(stderr, "strata reap emulator: %s(reap %p, %p): wrong reap: the object belongs to reap %p\n",
                 call, static_cast<const void*>(reap), ptr, static_cast<const void*>(h->owner));
    std::abort();
  }
  return h;
}

}  // namespace

extern "C" {

strata_reap* strata_reap_create(strata_reap* parent) {
  auto* reap = new (std::nothrow) strata_reap;
  if (reap == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  reap->attachTo(parent);
  return reap;
}

void strata_reap_destroy(strata_reap* reap) {
  if (reap == nullptr) return;
  reap->detach();
  reap->forEachPostOrder([](EmulatedHeap* node) {
    node->release();
    delete as_reap(node);
  });
}

void strata_reap_clear(strata_reap* reap) {
  if (reap == nullptr) return;
  reap->forEachPreOrder([](EmulatedHeap* node) { node->freeAll(); });
}

void* strata_reap_malloc_slow(strata_reap* reap, size_t size) { return emulated_malloc(reap, size, 0); }

// A sized reap is a reap like any other here: every object has a header.
strata_reap* strata_reap_create_sized(strata_reap* parent) { return strata_reap_create(parent); }

void* strata_reap_malloc_sized_slow(strata_reap* reap, size_t size) { return emulated_malloc(reap, size, 0); }

void strata_reap_free_sized(strata_reap* reap, void* ptr, size_t) { strata_reap_free(reap, ptr); }

void* strata_reap_realloc_sized(strata_reap* reap, void* ptr, size_t, size_t new_size) {
  return strata_reap_realloc(reap, ptr, new_size);
}

void* strata_reap_calloc(strata_reap* reap, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* ptr = emulated_malloc(reap, bytes, 0);
  if (ptr != nullptr) std::memset(ptr, 0, bytes);
  return ptr;
}

void strata_reap_free(strata_reap* reap, void* ptr) {
  if (ptr == nullptr) return;
  ObjectHeader* h = owned_header("strata_reap_free", reap, ptr);
  reap->forget(h);
  std::free(h->block);
}

size_t strata_reap_usable_size(const strata_reap* reap, const void* ptr) {
  if (ptr == nullptr) return 0;
  return owned_header("strata_reap_usable_size", reap, ptr)->size;
}

void* strata_reap_realloc(strata_reap* reap, void* ptr, size_t size) {
  if (ptr == nullptr) return strata_reap_malloc(reap, size);
  ObjectHeader* h = owned_header("strata_reap_realloc", reap, ptr);
  void* moved = emulated_malloc(reap, size, 0);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, ptr, h->size < size ? h->size : size);
  strata_reap_free(reap, ptr);
  return moved;
}

void* strata_reap_aligned_alloc(strata_reap* reap, size_t alignment, size_t size) {
  if (!is_power_of_two(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return emulated_malloc(reap, size, alignment);
}

void strata_reap_get_stats(const strata_reap* reap, strata_reap_stats* stats) {
  stats->objects_live = reap->count();
  stats->bytes_live = reap->bytes();
  stats->bytes_held = reap->bytes() + reap->count() * kHeaderBytes + reap->capacity() * sizeof(void*) +
                      sizeof(strata_reap);
  stats->chunks = reap->count();
}

}  // extern "C"
