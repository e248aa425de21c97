// Segments and page blocks: where small objects live (Vam §3.2-3.4).
//
// A small-object segment is kSegmentSize bytes aligned to kSegmentSize:
//
//   | page 0: SmallSegment header + Page descriptors | page 1 | page 2 | ... |
//
// Every other page is a page block of one size class. An object carries no
// header (BIBOP, Vam §3.3): free() masks the address to find the segment,
// shifts to find the page descriptor, and the descriptor knows the size.
// Inside a page block allocation is a reap (Vam §3.4): bump through fresh memory
// first, then reuse the block's own free list.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "config.hpp"
#include "os.hpp"

namespace strata::malloc_detail {

struct Heap;

// What kind of segment a header starts; odd magic numbers so that checked mode
// rarely mistakes random memory for a header.
enum class SegmentKind : std::uint32_t {
  kSmall = 0x5354a001,
  kLarge = 0x5354a002,
  kHuge = 0x5354a003,
};

// The common start of every segment header.
struct SegmentHeader {
  SegmentKind kind;
  std::uint32_t reserved;
  void* map_base;            // start of the OS mapping (== this except for huge aligned objects)
  std::size_t mapped_bytes;  // length of the OS mapping
};

inline SegmentHeader* segment_of(const void* p) noexcept {
  return reinterpret_cast<SegmentHeader*>(segment_base(p));
}

// A free object, linked through its first word.
struct FreeBlock {
  FreeBlock* next;
};

// Page flags: any of them makes the owner's free take the slow path.
enum PageFlag : std::uint8_t {
  kPageInterior = 1,  // holds aligned objects whose pointers are not the object start
};

enum class PageState : std::uint8_t { kUnused, kInClass, kEmptyRetained };

// Where the page descriptors start inside a segment header (checked below).
inline constexpr std::size_t kPageDescriptorsOffset = 64;

// A page block's descriptor (Vam's page descriptor table entry): one cache
// line, so that free() finds it with a shift and touches one line.
struct alignas(64) Page {
  // ---- the owner thread only: the fast paths touch these ----
  char* bump;          // next fresh object
  char* bump_end;      // end of the objects area
  FreeBlock* free;     // objects freed back to this block, reused after fresh memory runs out
  std::uint32_t used;  // objects handed out and not yet back on `free`
  // The value of `used` at which the owner's free must act: 0 on the available
  // list (the block emptied), capacity - capacity/8 on the full list (enough
  // came back to move the block to the front). One compare on the fast path.
  std::uint32_t trigger;
  std::uint16_t block_size;
  std::uint8_t cls;
  std::uint8_t flags;  // PageFlag bits
  bool full;           // on the class's full list (owner's view; in_full is the published copy)
  PageState state;
  std::uint8_t touched_pages;  // OS pages the bump pointer ever reached: what discarding must cover
  // ---- shared with freeing threads ----
  std::atomic<bool> in_full{false};  // published `full`, read by freeing threads
  Page* prev;  // in the class's available/full list, or the empty-page cache
  Page* next;
  std::atomic<FreeBlock*> remote{nullptr};  // freed by other threads; the owner takes the whole list

  // The block's memory, from the descriptor's place in the segment header.
  char* start() const noexcept {
    auto self = reinterpret_cast<std::uintptr_t>(this);
    std::uintptr_t segment = self & ~(cfg::kSegmentSize - 1);
    std::size_t index = (self - segment - kPageDescriptorsOffset) / sizeof(Page);
    return reinterpret_cast<char*>(segment + index * cfg::kPageSize);
  }
  std::uint32_t capacity() const noexcept { return static_cast<std::uint32_t>((bump_end - start()) / block_size); }
  // The start of the object containing p (p may be an interior aligned pointer).
  char* object_start(const void* p) const noexcept {
    char* base = start();
    auto offset = static_cast<std::size_t>(static_cast<const char*>(p) - base);
    return base + offset / block_size * block_size;
  }
  // Remember how far the bump pointer got (before the block is reset).
  void note_touched() noexcept {
    auto reached = static_cast<std::size_t>(bump - start());
    auto pages = static_cast<std::uint8_t>((reached + cfg::kOsPageSize - 1) / cfg::kOsPageSize);
    if (pages > touched_pages) touched_pages = pages;
  }
};
static_assert(sizeof(Page) == 64);
static_assert(cfg::kPageSize / cfg::kOsPageSize <= 255, "touched_pages fits a byte");
static_assert(cfg::kSmallMax <= 65535, "block_size fits 16 bits");

struct SmallSegment {
  SegmentHeader header;
  Heap* heap;  // the owner; constant while the segment belongs to a heap
  SmallSegment* prev;
  SmallSegment* next;
  std::uint64_t free_pages;  // bit i: page i is not in use (bit 0, the header, never is)
  alignas(64) Page pages[cfg::kPagesPerSegment];

  static constexpr std::uint64_t kAllPagesFree =
      (cfg::kPagesPerSegment == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << cfg::kPagesPerSegment) - 1)) &
      ~std::uint64_t{1};

  Page* page_of(const void* p) noexcept {
    auto offset = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(this);
    return &pages[offset >> cfg::kPageShift];
  }
};

static_assert(sizeof(SmallSegment) <= cfg::kPageSize, "the header fits in page 0");
static_assert(offsetof(SmallSegment, pages) == kPageDescriptorsOffset);

}  // namespace strata::malloc_detail
