// ChunkSource — top heap of the reap: whole mappings from the platform layer.
//
// Fresh mappings are hidden from ASan/Valgrind until the reap hands their
// bytes out; before a mapping goes back, its poisoning is forgotten. Counts
// what it holds, for strata_reap_get_stats.
#pragma once
#include <cerrno>
#include <cstddef>

#include "reap/instrument.hpp"
#include "strata/platform.hpp"

namespace strata::reap_detail {

class ChunkSource {
 public:
  // bytes is a multiple of the page size. nullptr + ENOMEM when the kernel says no.
  void* map(std::size_t bytes) noexcept {
    void* p = platform::map_pages(bytes);
    if (p == nullptr) return nullptr;
    instrument::hide(p, bytes);
    account(bytes);
    return p;
  }

  void unmap(void* p, std::size_t bytes) noexcept {
    instrument::forget(p, bytes);
    platform::unmap_pages(p, bytes);
    bytes_held_ -= bytes;
    --mappings_;
  }

  // Mappings made elsewhere (the reap's own home mapping) that count as held.
  void account(std::size_t bytes) noexcept {
    bytes_held_ += bytes;
    ++mappings_;
  }

  std::size_t bytesHeld() const noexcept { return bytes_held_; }
  std::size_t mappings() const noexcept { return mappings_; }

 private:
  std::size_t bytes_held_ = 0;
  std::size_t mappings_ = 0;
};

// Round up to whole pages of the system (mmap's unit).
inline std::size_t round_to_pages(std::size_t bytes) noexcept {
  const std::size_t page = platform::page_size();
  return (bytes + page - 1) & ~(page - 1);
}

}  // namespace strata::reap_detail
