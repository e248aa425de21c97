// Segments and page blocks: where small objects live (Vam §3.2-3.4).
//
// A small-object segment is kSegmentSize bytes aligned to kSegmentSize:
//
//   | page 0: SmallSegment header + Page descriptors | page 1 | page 2 | ... |
//
// Every other page is a page block of one size class. An object carries no
// header (BIBOP, Vam §3.3): free() masks the address to find the segment,
// shifts to find the page descriptor, and the descriptor knows the size.
// Inside a page block allocation is a reap (Vam §3.4): the block's own free
// list, then a bump through fresh memory (malloc's fast path; the original
// reap's order, where Vam bumps first: one test less while a block churns).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "config.hpp"
#include "strata/layers/building_blocks/intrusive_dlist.hpp"
#include "os.hpp"

namespace strata::malloc_detail {

struct PerThreadHeap;

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
  // Small segments: the owning heap, constant while the segment belongs to it.
  // nullptr in every other segment, and a thread's heap pointer is never
  // nullptr, so free()'s one compare "owner == my heap" also proves the kind.
  PerThreadHeap* owner = nullptr;
};

// The header of a segment that is a kSegmentSize mapping of its own at `mem`
// (small segments, large regions).
inline void init_segment_header(SegmentHeader& header, SegmentKind kind, void* mem) noexcept {
  header.kind = kind;
  header.map_base = mem;
  header.mapped_bytes = cfg::kSegmentSize;
}

inline SegmentHeader* segment_of(const void* p) noexcept {
  return reinterpret_cast<SegmentHeader*>(segment_base(p));
}

struct Page;

// A free object: linked through its first word; its second word holds the
// freed tag, the address of its block's descriptor (the tcache key idea, with
// a key the free path has in a register anyway). malloc clears the tag of
// every object it hands out, so a tag on a freed-to object means a double free
// (the owner confirms it on its free list before saying so, see
// PerThreadHeap::free_local_slow). Every class holds at least these two words.
struct FreeBlock;
[[noreturn]] void report_corrupt_free_list(const FreeBlock* at) noexcept;

// A per-process random secret (the hardened build's free-list links, canaries
// and freed tags; 0 in the default build, which never reads it). Set before
// the first small object exists (heap_claim).
extern std::uintptr_t g_heap_secret __attribute__((visibility("hidden")));

struct FreeBlock {
  // The hardened build stores links encoded (cfg::kEncodeFreeLists): always
  // go through next_block / set_next.
  FreeBlock* next;
  const Page* tag;

  FreeBlock* next_block() const noexcept {
    if constexpr (!cfg::kEncodeFreeLists) {
      return next;
    } else {
      auto self = reinterpret_cast<std::uintptr_t>(this);
      // The decoded link xor this block's address: its low bits alone when
      // the link stays inside its 64 KiB block; the address itself when the
      // link ends the list (tested second: the rarer case).
      std::uintptr_t relative = reinterpret_cast<std::uintptr_t>(next) ^ g_heap_secret;
      if (__builtin_expect((relative >> cfg::kPageShift) != 0, 0) && relative != self) report_corrupt_free_list(this);
      return reinterpret_cast<FreeBlock*>(relative ^ self);
    }
  }
  void set_next(FreeBlock* n) noexcept {
    if constexpr (!cfg::kEncodeFreeLists) {
      next = n;
    } else {
      next = reinterpret_cast<FreeBlock*>(reinterpret_cast<std::uintptr_t>(n) ^ reinterpret_cast<std::uintptr_t>(this) ^
                                          g_heap_secret);
    }
  }
};

// What free writes into a freed slot's second word. The hardened build keys it
// with the secret, so no data can carry it by accident: a match is a double
// free without the owner's confirmation.
inline const Page* freed_tag(const Page* page) noexcept {
  if constexpr (!cfg::kHardened) return page;
  return reinterpret_cast<const Page*>(reinterpret_cast<std::uintptr_t>(page) ^ g_heap_secret);
}
static_assert(sizeof(FreeBlock) <= cfg::kMinAlign);

// A block's remote list (objects other threads freed) is one atomic word: the
// head's address in the low kRemoteCountShift bits, the list's length above
// them. A push adds its objects to the length in the same compare-and-swap, so
// the owner takes the list with its length (no walk to count it), and a
// freeing thread sees from its own push when the list holds every object of
// the block (no second counter, no walk). Small segments lie below 2^48
// (map_small_segment checks), and a block holds at most 4096 objects.
inline constexpr unsigned kRemoteCountShift = 48;
inline constexpr std::uintptr_t kRemoteOne = std::uintptr_t{1} << kRemoteCountShift;
inline FreeBlock* remote_head(std::uintptr_t word) noexcept {
  return reinterpret_cast<FreeBlock*>(word & (kRemoteOne - 1));
}
inline std::uint32_t remote_count(std::uintptr_t word) noexcept {
  return static_cast<std::uint32_t>(word >> kRemoteCountShift);
}
// The remote word holds this instead of a list when a freeing thread found
// every object of the block on the remote list and discarded the block's
// memory: the owner, when it next collects, resets the block as fresh (see
// free_remote). A list of no objects at address 1: no push makes it.
inline constexpr std::uintptr_t kReclaimedBlock = 1;

// Page flags: any of them makes the owner's free take the slow path.
enum PageFlag : std::uint8_t {
  kPageInterior = 1,  // holds aligned objects whose pointers are not the object start
};

enum class PageState : std::uint8_t { kUnused, kInClass, kEmptyRetained };

// The bytes of a page block that hold objects: all of it, but for the guard
// page at its end in the hardened build (cfg::kBlockGuardBytes, set once when
// the segment is mapped: protect_block_guards).
inline constexpr std::size_t kBlockObjectBytes = cfg::kPageSize - cfg::kBlockGuardBytes;

// Where the page descriptors start inside a segment header (checked below).
inline constexpr std::size_t kPageDescriptorsOffset = 64;

// A page block's descriptor (Vam's page descriptor table entry): one cache
// line, so that free() finds it with a shift and touches one line.
struct alignas(64) Page {
  // ---- the owner thread only: the fast paths touch these ----
  char* bump;          // next fresh object
  // How far bumping may go for now: the block's fresh memory is opened an OS
  // page at a time (open_fresh), and the objects freed meanwhile are reused
  // first, so a block touches about as many pages as its live objects need.
  char* bump_end;
  FreeBlock* free;     // objects freed back to this block, reused after fresh memory runs out
  // used() - trigger, where used() counts objects handed out and not yet back on
  // `free`, and trigger is the value of used() at which the owner's free must
  // act: 0 on the available list (the block emptied), capacity - capacity/8 on
  // the full list (enough came back to move the block to the front). Keeping
  // the difference lets malloc count with one increment and free notice the
  // event with one decrement-and-test.
  std::int32_t used_minus_trigger;
  std::uint16_t trigger;
  std::uint16_t block_size;
  std::uint8_t cls;
  std::uint8_t flags;  // PageFlag bits
  PageState state;
  std::uint8_t touched_pages;  // OS pages the bump pointer ever reached: what discarding must cover
  // ceil(2^32 / block_size) while the block holds a class, else 0: an offset n
  // in the block starts an object iff (uint32)(n * slot_magic) < slot_magic
  // (Lemire's divisibility test, exact for n, block_size < 2^16). 0 sends
  // every free of the block to the slow path.
  std::uint32_t slot_magic;
  layers::DListLink<Page> link;  // in the class's available/full list, or the empty-page cache (PageList)
  // ---- what freeing threads write lives in the segment header (SmallSegment::PageShared) ----

  std::uint32_t used() const noexcept {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(trigger) + used_minus_trigger);
  }
  void set_trigger(std::uint32_t value) noexcept {
    used_minus_trigger = static_cast<std::int32_t>(used()) - static_cast<std::int32_t>(value);
    trigger = static_cast<std::uint16_t>(value);
  }
  // On the class's full list (written by the owner only; SmallSegment::PageShared).
  std::atomic<bool>& in_full() const noexcept;
  // Objects freed by other threads, with their count (remote_head, remote_count);
  // the owner takes the whole list. Off the descriptor's line: a remote free's
  // compare-and-swap does not take the line the owner's malloc and free use.
  std::atomic<std::uintptr_t>& remote() const noexcept;
  // The owner's own view of in_full (it is the only writer).
  bool full() const noexcept { return in_full().load(std::memory_order_relaxed); }
  // Does p (in this block) point at the start of a slot? One multiply.
  bool is_slot_start(const void* p) const noexcept {
#if defined(__x86_64__)
    // slot_magic as a memory operand of the multiply and of the compare: GCC
    // would load it into a register first, one more instruction on free's fast path.
    auto product = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) & (cfg::kPageSize - 1));
    asm("imull %1, %0" : "+r"(product) : "m"(slot_magic) : "cc");
    return product < slot_magic;
#else
    return is_slot_start(p, slot_magic);
#endif
  }
  static bool is_slot_start(const void* p, std::uint32_t magic) noexcept {
    auto offset = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) & (cfg::kPageSize - 1));
    return offset * magic < magic;
  }
  // The descriptor's own fields only: a block of a segment then shares the
  // magic (share_slot_magic).
  void set_block_size(std::uint32_t size) noexcept {
    block_size = static_cast<std::uint16_t>(size);
    slot_magic = static_cast<std::uint32_t>(0xFFFFFFFFu / size + 1);
  }
  // slot_magic, and its copy for freeing threads (PageShared::remote_magic).
  // Atomic stores: other threads read both.
  void set_slot_magic(std::uint32_t magic) noexcept;
  // Copy slot_magic (and block_size) to the block's shared entry (a descriptor in a segment only).
  void share_slot_magic() const noexcept;

  // The block's memory, from the descriptor's place in the segment header.
  char* start() const noexcept {
    auto self = reinterpret_cast<std::uintptr_t>(this);
    std::uintptr_t segment = self & ~(cfg::kSegmentSize - 1);
    std::size_t index = (self - segment - kPageDescriptorsOffset) / sizeof(Page);
    return reinterpret_cast<char*>(segment + index * cfg::kPageSize);
  }
  // The hardened build's last OS page of a block is a guard (kBlockObjectBytes).
  std::uint32_t capacity() const noexcept { return static_cast<std::uint32_t>(kBlockObjectBytes / block_size); }
  char* objects_end() const noexcept { return start() + std::size_t{capacity()} * block_size; }
  // Empty and untouched: bump from the start, the first OS page open.
  void start_fresh() noexcept {
    bump = bump_end = start();
    open_fresh();
    free = nullptr;
  }
  // Let the bump pointer into the next OS page of fresh memory (at least one
  // object); false when the whole block is open already.
  bool open_fresh() noexcept {
    char* end = objects_end();
    if (bump_end == end) return false;
    std::size_t step = (block_size >= cfg::kOsPageSize ? 1 : cfg::kOsPageSize / block_size) * block_size;
    bump_end = static_cast<std::size_t>(end - bump_end) > step ? bump_end + step : end;
    return true;
  }
  // The start of the object containing p (p may be an interior aligned pointer).
  char* object_start(const void* p) const noexcept {
    char* base = start();
    auto offset = static_cast<std::size_t>(static_cast<const char*>(p) - base);
    return base + offset / block_size * block_size;
  }
  // While the block waits empty in its heap's LRU (PageState::kEmptyRetained)
  // it counts nothing, and used_minus_trigger holds the coarse clock at which it
  // emptied (fresh_page sets the count again).
  std::uint32_t emptied_ms() const noexcept { return static_cast<std::uint32_t>(used_minus_trigger); }
  void set_emptied_ms(std::uint32_t ms) noexcept { used_minus_trigger = static_cast<std::int32_t>(ms); }
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
static_assert(cfg::kPageSize / cfg::kMinAlign <= 65535, "a block's object count fits 16 bits (trigger, remote count)");

struct SmallSegment {
  SegmentHeader header;  // header.owner: the owning heap
  layers::DListLink<SmallSegment> link;  // in its heap's segment list or the pool of unused segments
  std::uint64_t free_pages;  // bit i: page i is not in use (bit 0, the header, never is)
  alignas(64) Page pages[cfg::kPagesPerSegment];
  // What freeing threads read and write of a block, beside its descriptor (so
  // that the descriptor keeps one cache line with room for slot_magic). One
  // entry per descriptor at the descriptor's stride: an entry is at a fixed
  // distance from its descriptor, one displacement for a remote free (4 KiB of
  // the header page, which has room for it).
  struct alignas(sizeof(Page)) PageShared {
    std::atomic<std::uintptr_t> remote{0};  // Page::remote
    // The descriptor's slot_magic, copied (Page::set_slot_magic): the remote
    // free reads it here, beside the remote word, and never the descriptor's
    // line, which the owner's malloc writes at every call.
    std::atomic<std::uint32_t> remote_magic{0};
    std::atomic<bool> in_full{false};
    std::atomic<std::uint8_t> full_cls{0};  // the block's class, written when it goes full (as full_capacity)
    // The block's capacity, written when it goes full: what a freeing thread
    // compares the remote count with (no division on the remote free).
    std::atomic<std::uint16_t> full_capacity{0};
    // The owner's refill count (PerThreadHeap::refills) when the block went
    // full: how far the owner has moved on since, for free_remote's reclaim.
    std::atomic<std::uint32_t> full_epoch{0};
    // The owner's list of blocks other threads emptied (PerThreadHeap::ready):
    // the next block on it, and whether the block is on one (it goes on once).
    std::atomic<Page*> ready_next{nullptr};
    std::atomic<bool> ready_queued{false};
    // The descriptor's block_size, copied with the slot magic: the hardened
    // build's checks of another thread's free read it here (hardened.cpp).
    std::atomic<std::uint16_t> remote_block_size{0};
  };
  PageShared shared[cfg::kPagesPerSegment];

  static constexpr std::uint64_t kAllPagesFree =
      (cfg::kPagesPerSegment == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << cfg::kPagesPerSegment) - 1)) &
      ~std::uint64_t{1};

  Page* page_of(const void* p) noexcept { return page_at(reinterpret_cast<std::uintptr_t>(p)); }
  // The same from any value with the address's low kSegmentShift bits.
  Page* page_at(std::uintptr_t low_bits) noexcept {
    // (offset in the segment >> kPageShift) * sizeof(Page), in two steps.
    auto index_bytes = (low_bits >> (cfg::kPageShift - 6)) & ((cfg::kPagesPerSegment - 1) << 6);
    return reinterpret_cast<Page*>(reinterpret_cast<char*>(pages) + index_bytes);
  }
};

static_assert(sizeof(SmallSegment) <= cfg::kPageSize, "the header fits in page 0");

// The segment a descriptor lies in (any address of a segment's first page).
inline SmallSegment* segment_of_page(const Page* page) noexcept {
  return reinterpret_cast<SmallSegment*>(reinterpret_cast<std::uintptr_t>(page) & ~(cfg::kSegmentSize - 1));
}

// A descriptor's PageShared entry, at the same index in the parallel array.
static_assert(sizeof(SmallSegment::PageShared) == sizeof(Page));
inline SmallSegment::PageShared& page_shared(const Page* page) noexcept {
  constexpr std::size_t kDistance = offsetof(SmallSegment, shared) - offsetof(SmallSegment, pages);
  auto* self = reinterpret_cast<char*>(const_cast<Page*>(page));
  return *reinterpret_cast<SmallSegment::PageShared*>(self + kDistance);
}
inline std::atomic<bool>& Page::in_full() const noexcept { return page_shared(this).in_full; }
inline std::atomic<std::uintptr_t>& Page::remote() const noexcept { return page_shared(this).remote; }
inline void Page::share_slot_magic() const noexcept {
  page_shared(this).remote_block_size.store(block_size, std::memory_order_relaxed);
  page_shared(this).remote_magic.store(slot_magic, std::memory_order_relaxed);
}
inline void Page::set_slot_magic(std::uint32_t magic) noexcept {
  __atomic_store_n(&slot_magic, magic, __ATOMIC_RELAXED);
  share_slot_magic();
}

// The two checks free makes on what it reads anyway: p starts a slot and is
// not tagged freed. On a relaxed read of slot_magic's copy, for threads other
// than the owner (which clears it for a block of aligned objects): the remote
// free and the usable-size paths. The owner's free (fast_paths.hpp) tests the
// same with slot_magic as a memory operand.
inline bool passes_free_checks(const Page* page, const void* p) noexcept {
  std::uint32_t magic = page_shared(page).remote_magic.load(std::memory_order_relaxed);
  return Page::is_slot_start(p, magic) && static_cast<const FreeBlock*>(p)->tag != freed_tag(page);
}

// A heap's segments, or the pool of unused ones.
using SegmentList = layers::IntrusiveDList<SmallSegment, &SmallSegment::link>;
static_assert(offsetof(SmallSegment, pages) == kPageDescriptorsOffset);

}  // namespace strata::malloc_detail
