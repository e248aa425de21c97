// RunStream — what every bump stream over a RunSource shares; the tagged
// (tagged_stream_heap.hpp) and the sized (sized_stream_heap.hpp) stream build
// on it, and add how their objects are laid out and counted.
//
// Template parameters:
//   Super   a RunSource (concepts.hpp): a RegionChunkHeap over a ChunkSource.
//   Cursor  where the bump pointer lives: a struct with members
//           `uintptr_t bump, limit` and `uint32_t flags` (a strata reap's
//           public head, so that code compiled against strata/reap.h bumps
//           inline).
//   Header  what lies right below an object that has a mapping of its own:
//           members `void* map_base`, `std::size_t map_bytes` and
//           `DListLink<Header> link` (listed, so that clear() finds it).
//
// The inline window: the cursor's [bump, limit) is what an inline fast path
// may hand out without calling the layer. limit is the end of the run the
// stream bumps through, and equal to bump while any flag is set
// (closeInline: checked mode, freed objects waiting, ...).
//
// Rounds: clear() starts a round that stayed in one run (and mapped nothing
// alone) over in that run, so the next allocation bumps at once; any other
// round gives its own mappings back and replays the runs from the first.
// A stream with state of its own (statistics, a loan) calls clear's two
// halves, rewindRound and resetRound, and resets that state beside them.
// Not thread safe.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/building_blocks/intrusive_dlist.hpp"
#include "strata/layers/heap.hpp"
#include "strata/layers/region/chunk_source.hpp"
#include "strata/layers/region/concepts.hpp"
#include "strata/layers/region/detail/instrument.hpp"
#include "strata/layers/region/region_chunk_heap.hpp"

namespace strata::layers {

template <RunSource Super, class Cursor, class Header>
class RunStream : public Super {
 public:
  RunStream() = default;
  RunStream(const RunStream&) = delete;
  RunStream& operator=(const RunStream&) = delete;
  ~RunStream() { unmapAll(); }

  // Keep the bump pointer in *cursor from now on (an inline fast path reads it there).
  void useCursor(Cursor* cursor) noexcept {
    cursor->bump = cursor_->bump;
    cursor->flags = cursor_->flags;
    cursor_ = cursor;
    refreshWindow();
  }
  const Cursor& cursor() const noexcept { return *cursor_; }

  void clear() noexcept {
    if (!rewindRound(true)) resetRound();
  }

  void releaseAll() noexcept {
    unmapAll();
    resetRuns();
    Super::releaseAll();
  }

  // Nothing allocated since the last clear (or ever): clear() would change nothing.
  bool untouched() const noexcept { return cursor_->bump == 0 && mapped_objects_ == 0; }

  // The inline window: closed while any reason holds.
  void closeInline(std::uint32_t reason) noexcept {
    cursor_->flags |= reason;
    refreshWindow();
  }
  void openInline(std::uint32_t reason) noexcept {
    cursor_->flags &= ~reason;
    refreshWindow();
  }

 protected:
  // clear() in two halves, for a stream above that resets its own state
  // between them. rewindRound: a round that stayed in one run and mapped
  // nothing alone starts over in that run (true); may_rewind false keeps it
  // from doing so (the stream bumps through a stretch not its own).
  bool rewindRound(bool may_rewind) noexcept {
    if (!may_rewind || mapped_objects_ != 0 || cursor_->bump == 0 || !Super::clearInPlace()) return false;
    cursor_->bump = run_begin_;
    refreshWindow();
    return true;
  }
  // Any other round: every own mapping goes back, the runs replay from the first.
  void resetRound() noexcept {
    unmapAll();
    resetRuns();
    Super::clear();
  }

  // The stream bumps from the start of `run` now (the caller refreshes the window).
  void enterRun(const ChunkRun& run) noexcept {
    cursor_->bump = run_begin_ = reinterpret_cast<std::uintptr_t>(run.begin);
    run_end_ = reinterpret_cast<std::uintptr_t>(run.end);
  }

  void refreshWindow() noexcept {
    cursor_->limit = cursor_->flags != 0 ? cursor_->bump : run_end_;  // the run ends above any open bump
  }

  // An object of `size` bytes aligned to `alignment` in a mapping of its
  // own, its Header right below it; nullptr (+ ENOMEM) when out of memory.
  // describe(header, object) fills the stream's own fields of the header
  // and returns what the statistics count for the object (mappedBytes()).
  template <class Describe>
  void* mapObject(std::size_t size, std::size_t alignment, Describe describe) noexcept {
    if (size > SIZE_MAX / 4 || alignment > SIZE_MAX / 4) {  // nothing below wraps
      errno = ENOMEM;
      return nullptr;
    }
    const std::size_t lead = std::max(alignment, kHeaderLead);
    const std::size_t bytes = round_to_pages(size + lead + (alignment > platform::page_size() ? alignment : 0));
    void* base = Super::map(bytes);
    if (base == nullptr) return nullptr;
    auto* object = reinterpret_cast<char*>(align_up(reinterpret_cast<std::uintptr_t>(base) + kHeaderLead, alignment));
    Header* h = mappedHeader(object);
    instrument::expose(h, sizeof(Header));
    h->map_base = base;
    h->map_bytes = bytes;
    const std::size_t counted = describe(h, object);
    mapped_.push_front(h);
    ++mapped_objects_;
    mapped_bytes_ += counted;
    return object;
  }

  // Gives an object's own mapping back; `counted`: what mapObject counted.
  void unmapObject(Header* h, std::size_t counted) noexcept {
    --mapped_objects_;
    mapped_bytes_ -= counted;
    mapped_.remove(h);
    Super::unmap(h->map_base, h->map_bytes);
  }

  static Header* mappedHeader(const void* object) noexcept {
    return reinterpret_cast<Header*>(const_cast<char*>(static_cast<const char*>(object)) - sizeof(Header));
  }

  std::size_t mappedObjects() const noexcept { return mapped_objects_; }
  std::size_t mappedBytes() const noexcept { return mapped_bytes_; }

 private:
  // The header and the object's alignment fit below the object.
  static constexpr std::size_t kHeaderLead = align_up(sizeof(Header), kAlignment);

  void resetRuns() noexcept {
    run_begin_ = 0;
    cursor_->bump = 0;
    run_end_ = 0;
    refreshWindow();
  }

  void unmapAll() noexcept {
    mapped_.drain([this](Header* h) { Super::unmap(h->map_base, h->map_bytes); });
    mapped_objects_ = mapped_bytes_ = 0;
  }

  Cursor own_cursor_{};

 protected:
  Cursor* cursor_ = &own_cursor_;
  std::uintptr_t run_end_ = 0;    // end of the run the stream bumps through
  std::uintptr_t run_begin_ = 0;  // start of the stream's own run

 private:
  IntrusiveDList<Header, &Header::link, ListEnds::kHeadOnly> mapped_;
  std::size_t mapped_objects_ = 0;
  std::size_t mapped_bytes_ = 0;
};

}  // namespace strata::layers
