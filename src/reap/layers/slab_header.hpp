// SlabHeader: the 64 bytes at the start of every slab that begins a run of
// objects. An object pointer p finds its header at (p - 1) rounded down to the
// slab size: small objects carry no header of their own.
#pragma once
#include <cstddef>
#include <cstdint>

#include "reap/reap_config.hpp"

namespace strata::reap_detail {

inline constexpr std::uint16_t kSlabMagic = 0x5EA9;

struct SlabHeader {
  std::uint32_t stride;      // small slab: the object size; 0: a large object
  std::uint16_t size_class;  // small slab: index of the size class
  std::uint16_t magic;       // kSlabMagic while the slab is in use
  const void* owner;         // the reap that carved it (checked mode names it)
  std::uintptr_t end;        // large object: end of its usable memory; free span: next free span
  std::size_t span_slabs;    // large object in a chunk: its slabs; 0: it has its own mapping
  union {
    struct {  // the first slab of a chunk links the reap's chunks
      SlabHeader* next;
      std::size_t bytes;
    } chunk;
    struct {  // a large object with its own mapping links the reap's mapped objects
      SlabHeader* prev;
      SlabHeader* next;
      void* base;
      std::size_t bytes;
    } mapping;
  };
};
static_assert(sizeof(SlabHeader) == kSlabHeaderBytes);

inline SlabHeader* slab_of(const void* object) noexcept {
  auto p = reinterpret_cast<std::uintptr_t>(object);
  return reinterpret_cast<SlabHeader*>((p - 1) & ~std::uintptr_t{kSlabBytes - 1});
}

inline char* slab_payload(SlabHeader* slab) noexcept {
  return reinterpret_cast<char*>(slab) + kSlabHeaderBytes;
}

}  // namespace strata::reap_detail
