// naive_region.hpp — the region emulator of naive mode (2002 paper §5.1; 2026
// paper Table 4: "custom allocation disabled"). Every object is a malloc
// block of its own, linked into the region's list so that clear() can free
// them all, and free() gives one back at once. No chunk, no bump pointer:
// what the program would do with plain malloc/free.
#pragma once
#include <cstddef>
#include <cstdlib>

#include "strata/layers/building_blocks/intrusive_dlist.hpp"

namespace strata::workload {

class NaiveRegion {
 public:
  NaiveRegion() = default;
  NaiveRegion(const NaiveRegion&) = delete;
  NaiveRegion& operator=(const NaiveRegion&) = delete;
  ~NaiveRegion() { clear(); }

  // nullptr when malloc fails (errno is malloc's).
  void* malloc(std::size_t size) noexcept {
    auto* block = static_cast<Block*>(std::malloc(sizeof(Block) + size));
    if (block == nullptr) return nullptr;
    blocks_.push_front(block);
    return block + 1;
  }

  // Gives one object back to malloc now.
  void free(void* ptr) noexcept {
    if (ptr == nullptr) return;
    Block* block = static_cast<Block*>(ptr) - 1;
    blocks_.remove(block);
    std::free(block);
  }

  // Frees every object still in the region.
  void clear() noexcept {
    blocks_.drain([](Block* block) { std::free(block); });
  }

 private:
  // In front of each object, linking it into the region's blocks; 16 bytes:
  // keeps the object 16-byte aligned like malloc's.
  struct Block {
    layers::DListLink<Block> link;
  };
  static_assert(sizeof(Block) == 16);
  layers::IntrusiveDList<Block, &Block::link, layers::ListEnds::kHeadOnly> blocks_;
};

}  // namespace strata::workload
