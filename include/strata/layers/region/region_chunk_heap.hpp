// RegionChunkHeap — the region layer: runs of memory bumped out of linked chunks.
//
// Template parameters:
//   Super           where chunks come from, a ChunkMapper (concepts.hpp):
//                   map(bytes) -> void* (nullptr when out of memory) and
//                   unmap(p, bytes), e.g. ChunkSource.
//   FirstChunkBytes the first chunk mapped (a home chunk adopted with
//                   adoptHome counts as the first); each new chunk is twice
//                   the last one...
//   MaxChunkBytes   ...up to this (bigger chunks cost only address space: the
//                   kernel commits pages as they are touched).
//
// The layer above asks for a run (nextRun(bytes)): the whole payload of the
// next chunk, at least `bytes` long, which it then bumps through. Every chunk
// starts with a kChunkHeaderBytes header (its link and size); the header's
// last byte is left for the layer above (TaggedStreamHeap keeps the boundary
// tag of a run's first object there).
//
// clear() keeps the chunks the last round used (and the home chunk, inside its
// owner's own mapping) and hands them out again in the same order, followed by
// the chunks rounds have not needed for fewer than kIdleRoundsKept clears;
// older idle chunks are returned. A region filled and cleared over and over
// thus touches the same memory every round — no system call, no page fault,
// warm caches, like a hand-written bump region — and one whose rounds shrink
// for good gives the difference back kIdleRoundsKept rounds later. After a
// chunk is returned, growth doubles again from the largest chunk kept.
// Limits: a run is one chunk, so the tail a run could not use is lost until
// clear(); not thread safe.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "strata/layers/region/chunk_source.hpp"
#include "strata/layers/region/concepts.hpp"
#include "strata/layers/region/detail/instrument.hpp"

namespace strata::layers {

// A chunk's header: its link, its size, and room for the layer above.
inline constexpr std::size_t kChunkHeaderBytes = 32;

// A stretch of memory [begin, end) handed to the layer above.
struct ChunkRun {
  char* begin = nullptr;
  char* end = nullptr;
};

// Chunks no round has used for this many clears go back to the system. Rounds
// of a program vary (a big function now and then among small ones): chunks
// dropped at the next clear came back mapped afresh, every page faulted again
// (docs/benchmarks-choices.md, "Idle chunks kept").
inline constexpr std::uint32_t kIdleRoundsKept = 256;

template <ChunkMapper Super, std::size_t FirstChunkBytes = 8 * 1024, std::size_t MaxChunkBytes = std::size_t{64} << 20>
class RegionChunkHeap : public Super {
  static_assert(FirstChunkBytes >= 4096 && (FirstChunkBytes & (FirstChunkBytes - 1)) == 0,
                "RegionChunkHeap: FirstChunkBytes must be a power of two of at least a page");
  static_assert(MaxChunkBytes >= FirstChunkBytes, "RegionChunkHeap: MaxChunkBytes < FirstChunkBytes");

 public:
  RegionChunkHeap() = default;
  RegionChunkHeap(const RegionChunkHeap&) = delete;
  RegionChunkHeap& operator=(const RegionChunkHeap&) = delete;
  ~RegionChunkHeap() { releaseAll(); }

  // The home chunk belongs to the owner's own mapping: used first, never unmapped here.
  void adoptHome(void* base, std::size_t bytes) noexcept {
    home_ = link(base, bytes);
    push(spare_, home_);
    next_bytes_ = std::max(next_bytes_, 2 * FirstChunkBytes);
  }

  // The payload of the next chunk, at least `bytes` long (chunks kept by
  // clear() first, else a new one); an empty ChunkRun + ENOMEM when out of memory.
  ChunkRun nextRun(std::size_t bytes) noexcept {
    if (bytes > SIZE_MAX / 4) {
      errno = ENOMEM;
      return {};
    }
    while (spare_ != nullptr) {  // chunks kept by clear() come first, in order
      Chunk* c = spare_;
      spare_ = c->next;
      push(used_, c);
      if (payloadBytes(c) >= bytes) return runOf(c);
    }
    const std::size_t size = std::max(next_bytes_, round_to_pages(bytes + kChunkHeaderBytes));
    void* base = Super::map(size);
    if (base == nullptr) {
      errno = ENOMEM;
      return {};
    }
    next_bytes_ = std::min(next_bytes_ * 2, MaxChunkBytes);
    Chunk* c = link(base, size);
    push(used_, c);
    return runOf(c);
  }

  // Forget every run. The chunks the last round used are kept, to be handed
  // out again in the same order; after them come the chunks no round has
  // needed for fewer than kIdleRoundsKept clears, and the older ones go back.
  void clear() noexcept {
    Chunk* keep = nullptr;  // oldest first
    bool home_kept = false, dropped = false;
    for (Chunk* c = used_; c != nullptr;) {  // newest first
      Chunk* next = c->next;
      hidePayload(c);
      c->idle_rounds = 0;
      push(keep, c);
      home_kept |= c == home_;
      c = next;
    }
    reverse(keep);  // oldest first, so that pushing more keeps the order
    for (Chunk* c = spare_; c != nullptr;) {  // in the order they were kept
      Chunk* next = c->next;
      if (c == home_ || ++c->idle_rounds < kIdleRoundsKept) {
        home_kept |= c == home_;
        push(keep, c);
      } else {
        Super::unmap(c, c->bytes);
        dropped = true;
      }
      c = next;
    }
    reverse(keep);
    // Chunks keep doubling from what the region still holds, not from what it
    // once held: a region whose rounds vary does not climb to the largest
    // chunks by dropping and remapping ever bigger ones.
    if (dropped) {
      std::size_t largest = FirstChunkBytes;
      for (const Chunk* c = keep; c != nullptr; c = c->next) largest = std::max(largest, c->bytes);
      next_bytes_ = std::min(2 * largest, MaxChunkBytes);
    }
    if (home_ != nullptr && !home_kept) {
      hidePayload(home_);
      push(keep, home_);
    }
    spare_ = keep;
    used_ = nullptr;
  }

  // clear() for a round that used one chunk and kept no other: that chunk
  // stays in use, and the layer above bumps through its run again from the
  // start (true). Anything else: nothing changes (false; call clear()).
  // A region cleared every few objects (a reap per statement or per block)
  // then neither relinks its chunk nor asks for a run at its next allocation.
  bool clearInPlace() noexcept {
    Chunk* c = used_;
    if (c == nullptr || c->next != nullptr || spare_ != nullptr) return false;
    hidePayload(c);
    c->idle_rounds = 0;
    return true;
  }

  // Unmap every chunk but the home one (the owner is being destroyed).
  void releaseAll() noexcept {
    for (Chunk* list : {used_, spare_}) {
      for (Chunk* c = list; c != nullptr;) {
        Chunk* next = c->next;
        if (c != home_) Super::unmap(c, c->bytes);
        c = next;
      }
    }
    used_ = spare_ = nullptr;
  }

  std::size_t chunks() const noexcept {
    std::size_t n = 0;
    for (Chunk* list : {used_, spare_})
      for (Chunk* c = list; c != nullptr; c = c->next) ++n;
    return n;
  }

 private:
  struct Chunk {
    Chunk* next;
    std::size_t bytes;
    std::uint32_t idle_rounds;  // clears since a round last used it
  };
  static_assert(sizeof(Chunk) < kChunkHeaderBytes);

  static std::size_t payloadBytes(const Chunk* c) noexcept { return c->bytes - kChunkHeaderBytes; }
  static ChunkRun runOf(Chunk* c) noexcept {
    char* base = reinterpret_cast<char*>(c);
    return {base + kChunkHeaderBytes, base + c->bytes};
  }
  static Chunk* link(void* base, std::size_t bytes) noexcept {
    auto* c = static_cast<Chunk*>(base);
    instrument::expose(c, sizeof(Chunk));  // chunk links stay readable for good
    c->bytes = bytes;
    c->next = nullptr;
    c->idle_rounds = 0;
    return c;
  }
  static void push(Chunk*& list, Chunk* c) noexcept {
    c->next = list;
    list = c;
  }
  static void reverse(Chunk*& list) noexcept {
    Chunk* reversed = nullptr;
    while (list != nullptr) {
      Chunk* next = list->next;
      push(reversed, list);
      list = next;
    }
    list = reversed;
  }
  static void hidePayload(Chunk* c) noexcept {
    instrument::hide(reinterpret_cast<char*>(c) + sizeof(Chunk), c->bytes - sizeof(Chunk));
  }

  Chunk* used_ = nullptr;   // chunks handed out this round, newest first
  Chunk* spare_ = nullptr;  // chunks kept by clear(), not handed out yet
  Chunk* home_ = nullptr;
  std::size_t next_bytes_ = FirstChunkBytes;
};

}  // namespace strata::layers
