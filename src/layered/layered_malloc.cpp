// libstrata-kingsley.so / libstrata-lea.so (and the others src/layered/CMakeLists.txt
// lists) — a general-purpose heap composed
// from the layers, as a drop-in malloc (LD_PRELOAD), so that the lab judges the
// layer-built allocators on the same programs as glibc, jemalloc and libstrata
// (issue 9; Heap Layers paper §6).
//
// The one translation unit of these libraries that defines the C library's
// allocation functions; CMake compiles it once per heap with
// STRATA_LAYERED_HEAP naming the general heap (KingsleyHeap or LeaHeap).
//
// The chain a program calls:
//   LockedHeap<PthreadLock, one lock: the layers are single-threaded (paper §4.4)
//     ANSIWrapper<         C semantics: malloc(0), calloc overflow, alignment, errno
//       STRATA_LAYERED_HEAP>>
// C++ operator new/delete need no definitions here: libstdc++'s call malloc/free.
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <new>

#include "strata/layers.hpp"
// A heap defined outside the layers' catalogue (the hand-written Kingsley in
// bench/layers, the Vam variants in vam_variants.hpp) comes from this header.
#ifdef STRATA_LAYERED_HEADER
#include STRATA_LAYERED_HEADER
#endif

#ifndef STRATA_LAYERED_HEAP
#error "compile with -DSTRATA_LAYERED_HEAP=KingsleyHeap or LeaHeap (or another heap class)"
#endif

namespace {

using namespace strata::layers;

// A pthread mutex as a BasicLockable: std::mutex would pull in libstdc++ (its
// lock() throws), which a preloaded malloc must not load into C programs.
class PthreadLock {
 public:
  void lock() noexcept { pthread_mutex_lock(&mutex_); }
  void unlock() noexcept { pthread_mutex_unlock(&mutex_); }

 private:
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
};

using ProcessHeap = LockedHeap<PthreadLock, ANSIWrapper<STRATA_LAYERED_HEAP>>;

// Constructed in static storage on first use and never destroyed: malloc is
// called before constructors run and after destructors have.
alignas(ProcessHeap) unsigned char heap_storage[sizeof(ProcessHeap)];
pthread_once_t heap_once = PTHREAD_ONCE_INIT;

ProcessHeap& heap_instance() { return *std::launder(reinterpret_cast<ProcessHeap*>(heap_storage)); }

// fork() while another thread holds the lock would leave the child's heap
// locked forever: hold it across fork in the parent, release it on both sides.
void lock_before_fork() { heap_instance().lock(); }
void unlock_after_fork() { heap_instance().unlock(); }

void construct_heap() {
  new (heap_storage) ProcessHeap();
  pthread_atfork(lock_before_fork, unlock_after_fork, unlock_after_fork);
}

ProcessHeap& heap() {
  pthread_once(&heap_once, construct_heap);
  return heap_instance();
}

}  // namespace

#define STRATA_EXPORT __attribute__((visibility("default")))

extern "C" {

STRATA_EXPORT void* malloc(size_t size) noexcept { return heap().malloc(size); }
STRATA_EXPORT void free(void* ptr) noexcept {
  if (ptr != nullptr) heap().free(ptr);
}
STRATA_EXPORT void* calloc(size_t count, size_t size) noexcept { return heap().calloc(count, size); }
STRATA_EXPORT void* realloc(void* ptr, size_t size) noexcept { return heap().realloc(ptr, size); }
STRATA_EXPORT void* reallocarray(void* ptr, size_t count, size_t size) noexcept {
  size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return heap().realloc(ptr, total);
}
STRATA_EXPORT void* memalign(size_t alignment, size_t size) noexcept { return heap().memalign(alignment, size); }
STRATA_EXPORT void* aligned_alloc(size_t alignment, size_t size) noexcept {
  return heap().aligned_alloc(alignment, size);
}
STRATA_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  return heap().posix_memalign(out, alignment, size);
}
STRATA_EXPORT void* valloc(size_t size) noexcept { return heap().memalign(strata::platform::page_size(), size); }
STRATA_EXPORT void* pvalloc(size_t size) noexcept {
  const size_t page = strata::platform::page_size();
  if (size > SIZE_MAX - page) {
    errno = ENOMEM;
    return nullptr;
  }
  return heap().memalign(page, (size + page - 1) & ~(page - 1));
}
STRATA_EXPORT size_t malloc_usable_size(void* ptr) noexcept { return ptr ? heap().getSize(ptr) : 0; }
STRATA_EXPORT void free_sized(void* ptr, size_t) noexcept { free(ptr); }
STRATA_EXPORT void free_aligned_sized(void* ptr, size_t, size_t) noexcept { free(ptr); }

}  // extern "C"
