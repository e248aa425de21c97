// strata/reap.hpp — C++ interface to reaps (strata/reap.h).
//
//   strata::reap request(connection);        // a child of another reap
//   auto* p = static_cast<Msg*>(request.malloc(sizeof(Msg)));
//   request.free(p);                         // reused by a later malloc
//   request.clear();                         // everything, children included
//
//   strata::sized_reap nodes;                // freed with the size: no tags
//   auto* n = static_cast<Node*>(nodes.malloc(sizeof(Node)));
//   nodes.free(n, sizeof(Node));
//
//   strata::reap_resource arena;             // a std::pmr::memory_resource
//   std::pmr::vector<int> v(&arena);         // deallocate really frees;
//   arena.release();                         // release() clears the reap
//
// One reap is used by one thread at a time; different reaps on different
// threads at once are fine. A child must not outlive its parent's reap: the
// parent's destruction destroys the child's memory (destroy or clear the child
// object first, or simply declare it after the parent).
#pragma once
#include <cstddef>
#include <memory_resource>
#include <new>
#include <utility>

#include "strata/reap.h"

namespace strata {

namespace detail {

// One reap of either kind, owned: made by Create (strata_reap_create or
// strata_reap_create_sized), destroyed with the object, moved, never
// copied; and the calls both kinds take alike.
template <strata_reap* (*Create)(strata_reap*)>
class reap_owner {
 public:
  reap_owner(const reap_owner&) = delete;
  reap_owner& operator=(const reap_owner&) = delete;
  reap_owner(reap_owner&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  reap_owner& operator=(reap_owner&& other) noexcept {
    if (this != &other) {
      strata_reap_destroy(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~reap_owner() { strata_reap_destroy(handle_); }

  // The C handle (nullptr after a move).
  strata_reap* get() const noexcept { return handle_; }

  // nullptr (errno ENOMEM / EINVAL) on failure, as in strata/reap.h.
  void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
    return strata_reap_aligned_alloc(handle_, alignment, size);
  }
  // Everything, children included (they stay valid, and empty).
  void clear() noexcept { strata_reap_clear(handle_); }
  strata_reap_stats stats() const noexcept {
    strata_reap_stats s;
    strata_reap_get_stats(handle_, &s);
    return s;
  }

 protected:
  // A child of parent (nullptr: a root). Throws std::bad_alloc when there is no memory.
  explicit reap_owner(strata_reap* parent) : handle_(Create(parent)) {
    if (handle_ == nullptr) throw std::bad_alloc();
  }
  // No reap at all (as after a move).
  reap_owner() noexcept : handle_(nullptr) {}

  strata_reap* handle_;
};

}  // namespace detail

class reap : public detail::reap_owner<strata_reap_create> {
 public:
  // A root reap. Throws std::bad_alloc when there is no memory.
  reap() : reap_owner(nullptr) {}
  // A child of parent: cleared and destroyed with it.
  explicit reap(reap& parent) : reap_owner(parent.get()) {}
  explicit reap(strata_reap* parent) : reap_owner(parent) {}
  // reap(reap&) counts as a copy constructor: the moves are declared.
  reap(reap&&) noexcept = default;
  reap& operator=(reap&&) noexcept = default;

  // The C API; nullptr (errno ENOMEM / EINVAL) on failure, as in strata/reap.h.
  // malloc bumps inline (strata_reap_malloc reads the reap's public head).
  void* malloc(std::size_t size) noexcept { return strata_reap_malloc(handle_, size); }
  void* calloc(std::size_t count, std::size_t size) noexcept { return strata_reap_calloc(handle_, count, size); }
  void* realloc(void* ptr, std::size_t size) noexcept { return strata_reap_realloc(handle_, ptr, size); }
  void free(void* ptr) noexcept { strata_reap_free(handle_, ptr); }
  std::size_t usable_size(const void* ptr) const noexcept { return strata_reap_usable_size(handle_, ptr); }
};

// A sized reap (strata_reap_create_sized): every free gives the size, so
// objects carry no tag and sit side by side in 8-byte steps. Results are
// aligned to 8 (STRATA_REAP_SIZED_GRANULE); aligned_alloc for more.
// stats().objects_live is STRATA_REAP_UNCOUNTED.
class sized_reap : public detail::reap_owner<strata_reap_create_sized> {
 public:
  // A root sized reap. Throws std::bad_alloc when there is no memory.
  sized_reap() : reap_owner(nullptr) {}
  // A child of parent (either kind): cleared and destroyed with it.
  explicit sized_reap(reap& parent) : reap_owner(parent.get()) {}
  explicit sized_reap(sized_reap& parent) : reap_owner(parent.get()) {}
  explicit sized_reap(strata_reap* parent) : reap_owner(parent) {}
  sized_reap(sized_reap&&) noexcept = default;  // as reap's
  sized_reap& operator=(sized_reap&&) noexcept = default;

  // nullptr (errno ENOMEM / EINVAL) on failure. malloc bumps inline.
  void* malloc(std::size_t size) noexcept { return strata_reap_malloc_sized(handle_, size); }
  // size: as allocated (or as last resized).
  void free(void* ptr, std::size_t size) noexcept { strata_reap_free_sized(handle_, ptr, size); }
  void* realloc(void* ptr, std::size_t old_size, std::size_t new_size) noexcept {
    return strata_reap_realloc_sized(handle_, ptr, old_size, new_size);
  }
};

// A std::pmr::memory_resource over a reap. Unlike monotonic_buffer_resource,
// deallocate() really frees (the memory is reused by later allocations);
// release() clears the reap (and its children). pmr gives the size at
// deallocate, so the resource's own reap is a sized one (no tags).
class reap_resource : public std::pmr::memory_resource {
 public:
  // A resource with a (sized) reap of its own.
  reap_resource() : owned_(nullptr), reap_(owned_.get()) {}
  // A resource with a (sized) reap of its own, a child of parent's reap.
  explicit reap_resource(reap_resource& parent) : owned_(parent.reap_), reap_(owned_.get()) {}
  // A resource allocating from r, which must outlive it.
  explicit reap_resource(reap& r) noexcept : reap_(r.get()), sized_(false) {}
  explicit reap_resource(sized_reap& r) noexcept : reap_(r.get()) {}

  reap_resource(const reap_resource&) = delete;
  reap_resource& operator=(const reap_resource&) = delete;

  // Frees everything allocated through this resource (and the reap's children).
  void release() noexcept { strata_reap_clear(reap_); }
  strata_reap* get() const noexcept { return reap_; }

 protected:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    // Alignments up to the granule (nearly every type) take the inline bump.
    void* p = sized_ && alignment <= STRATA_REAP_SIZED_GRANULE ? strata_reap_malloc_sized(reap_, bytes)
              : !sized_ && alignment <= 16                     ? strata_reap_malloc(reap_, bytes)
                                                               : strata_reap_aligned_alloc(reap_, alignment, bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t) override { strata_reap_free_sized(reap_, p, bytes); }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    auto* o = dynamic_cast<const reap_resource*>(&other);
    return o != nullptr && o->reap_ == reap_;
  }

 private:
  // The reap this resource owns, if any (default-constructed: none).
  struct owned_reap : detail::reap_owner<strata_reap_create_sized> {
    owned_reap() noexcept = default;
    explicit owned_reap(strata_reap* parent) : reap_owner(parent) {}
  };

  owned_reap owned_;
  strata_reap* reap_;
  bool sized_ = true;  // reap_ is a sized reap (else a tagged one: the inline path is strata_reap_malloc)
};

}  // namespace strata
