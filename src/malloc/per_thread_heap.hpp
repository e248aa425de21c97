// PerThreadHeap: libstrata's per-thread layer for small objects (Hoard/mimalloc
// style ownership on top of Vam's page blocks). Not to be confused with the
// layers' `Heap` concept or their `ThreadHeap` layer: this is a concrete struct
// of the malloc, one per thread that allocates.
//
// Each thread allocates from its own PerThreadHeap with no lock. For every size class
// the heap keeps Vam's two lists (§3.2, §3.5):
//   available — page blocks with free space; allocation uses the front one
//               until it is full ("ordered per-size allocation");
//   full      — page blocks with no space left.
// A free into a full block moves it to the front of the available list.
//
// A thread that frees an object of another thread's heap pushes it onto the
// block's atomic `remote` list (one CAS, no lock); the owner collects those
// lists when it runs out of space. If the block sits on the full list, the
// freeing thread also raises the class's `full_has_remote` flag, so the owner
// knows to look there before it takes a fresh block (kFullScanBudget blocks per
// refill at most, round robin, so a long full list never makes a refill slow;
// the full list is kept oldest first, and a refill stops at the first block
// with room).
//
// Empty blocks (Vam §3.6) stay with the heap, still resident, in an LRU cache
// of retain_limit blocks; beyond that the oldest is discarded with madvise and
// returned to its segment. The limit starts at kRetainedEmptyPages and follows
// demand: a heap that has to fault a fresh block in after discarding one
// raises it (up to kRetainedEmptyMax), every discard lowers it again. A
// segment whose blocks are all unused goes to a global pool, from which any
// heap takes segments.
//
// When a thread exits its heap is abandoned and the next new thread adopts it,
// objects, remote frees and all -- and its empty blocks, still resident, so
// the next thread of a thread-churn program starts warm (within a process-wide
// budget, kAbandonedRetainedMax; beyond it they are discarded at exit). A
// running thread that faults a fresh block in meanwhile discards one of them,
// so keeping them costs no RSS of its own.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "checked.hpp"
#include "config.hpp"
#include "strata/layers/building_blocks/intrusive_dlist.hpp"
#include "segment.hpp"
#include "size_classes.hpp"

namespace strata::malloc_detail {

// A counted list of page blocks: the catalogue's intrusive doubly linked list
// (links in Page::link) plus its length, which the empty-block LRU and the
// full-list scan need.
struct PageList {
  using Pages = layers::IntrusiveDList<Page, &Page::link>;

  Page* front() const noexcept { return pages.front(); }
  Page* back() const noexcept { return pages.back(); }
  static Page* next(const Page* p) noexcept { return Pages::next(p); }
  static Page* prev(const Page* p) noexcept { return Pages::prev(p); }
  void push_front(Page* p) noexcept {
    pages.push_front(p);
    ++count;
  }
  void push_back(Page* p) noexcept {
    pages.push_back(p);
    ++count;
  }
  void remove(Page* p) noexcept {
    pages.remove(p);
    --count;
  }

  Pages pages;
  std::size_t count = 0;
};

struct ClassQueue {
  PageList available;
  PageList full;
  std::atomic<bool> full_has_remote{false};  // a block on `full` got a remote free
  std::size_t scan_left = 0;  // full blocks still to look at since the last flag
};

// The page every empty class slot points at: no fresh memory, no free list, so
// the fast path falls through to the slow path without a null check.
extern Page g_empty_page;

struct PerThreadHeap {
  PerThreadHeap() = default;
  // The heap of a thread that has none yet (or any more): owns nothing, every
  // class slot is &g_empty_page. Threads start out pointing at it, so the fast
  // paths need no null check and free()'s owner compare never matches.
  struct NoThreadTag {};
  constexpr explicit PerThreadHeap(NoThreadTag) noexcept : by_size{} {
    for (Page*& c : by_size) c = &g_empty_page;
  }

  // Fast path table, indexed by (size + 15) / 16 as kClassIndex is: the front
  // of the size's class's available list (or &g_empty_page; always
  // &g_empty_page in checked mode, which sends every malloc to the slow path).
  // malloc finds a size's block with one load, not a class lookup and then a
  // load; every slot of a class points at the same block (sync_current).
  Page* by_size[kClassIndexSlots];
  // The class's current block: the one every slot of the class points at.
  Page* current(std::size_t cls) const noexcept { return by_size[kClassFirstSlot[cls]]; }
  ClassQueue queues[kClassCount];
  PageList empty_pages;         // retained empty blocks, most recently emptied first
  // The owner's activity, which free_remote reads to decide whether a block it
  // empties stays for the owner (cfg::kRemoteKeepMs, kRemoteKeepLag): refills
  // so far, and the coarse clock at the last one (set back when the thread
  // exits, so that an abandoned heap counts as idle at once).
  // Blocks other threads emptied while this heap was near them (free_remote's
  // keep rule): a stack they push onto and the owner takes whole at a refill,
  // so it reuses them warm without scanning its full list for them. On its own
  // line with what freeing threads read, away from the fast path's.
  alignas(64) std::atomic<Page*> ready{nullptr};
  std::atomic<std::uint32_t> refills{0};
  std::atomic<std::uint32_t> active_ms{0};
  // How many empty blocks the LRU keeps (kRetainedEmptyPages..kRetainedEmptyMax):
  // one more for each fresh block faulted in while a discard is unanswered,
  // one less for each discard.
  std::uint32_t retain_limit = cfg::kRetainedEmptyPages;
  std::uint32_t unanswered_discards = 0;  // discards not yet followed by a fresh block
  std::uint32_t overflows_to_lower = 0;   // blocks the LRU overflowed by since the limit was last lowered
  std::uint32_t kept_abandoned = 0;       // empty blocks counted in the abandoned heaps' budget
  // Idle front blocks (cfg::kIdleFrontScanMs): the clock at the last look,
  // and the classes whose front block was empty then.
  std::uint32_t front_scan_ms = 0;
  std::uint64_t fronts_empty[(kClassCount + 63) / 64] = {};
  // Slots each class took from a bigger class's block while it had none (borrow_slot).
  std::uint8_t borrowed[kClassCount] = {};
  SegmentList segments;         // segments this heap owns, those with unused pages first
  PerThreadHeap* next_heap = nullptr;    // registry of all heaps
  PerThreadHeap* next_abandoned = nullptr;
  std::uint32_t number = 0;     // creation order; picks the large arena
  bool abandoned = false;
  std::uint64_t rng = 1;        // the hardened build's random slot choice
  // The hardened build's quarantine (cfg::kQuarantineSlots): freed small
  // objects, oldest at quarantine_next, released when pushed out.
  std::uint32_t quarantine_next = 0;
  std::uint32_t quarantine_bytes = 0;  // the slots' bytes it holds (cfg::kQuarantineBytes)
  void* quarantine[cfg::kQuarantineSlots > 0 ? cfg::kQuarantineSlots : 1] = {};

  // The slow path of a small malloc: refill from collected frees, the full
  // list, a retained empty block, a segment, or a fresh segment. nullptr + ENOMEM.
  void* malloc_small(std::size_t cls) noexcept;
  // Any thread: put a block this heap owns, all of whose objects are on its
  // remote list, on `ready`; false if it is on a ready list already.
  bool push_ready(Page* page) noexcept;
  // The owner's free when the fast path cannot take it (page flags set).
  void free_local_slow(Page* page, void* p) noexcept;
  // Put a checked, tagged object of this heap's block back on its free list:
  // at the front, or (cfg::kRandomSlots) at random in the second place, so the
  // next malloc of this block may or may not return b.
  void push_local(Page* page, FreeBlock* b) noexcept { push_local_placed(page, b, cfg::kRandomSlots && random_bit()); }
  // The same with the place chosen by the caller: `second` puts b second (the
  // hardened build's quarantine draws one random word for a whole batch).
  void push_local_placed(Page* page, FreeBlock* b, bool second) noexcept {
    FreeBlock* head = page->free;
    if (second && head) {
      b->set_next(head->next_block());
      head->set_next(b);
    } else {
      b->set_next(head);
      page->free = b;
    }
    if (__builtin_expect(--page->used_minus_trigger == 0, 0)) on_trigger(page);
  }
  // One random bit: a next_random() draw serves 63 (the top bit marks the
  // reservoir's end).
  bool random_bit() noexcept {
    if (__builtin_expect(slot_bits == 1, 0)) slot_bits = fresh_slot_bits();
    bool bit = slot_bits & 1;
    slot_bits >>= 1;
    return bit;
  }
  std::uint64_t slot_bits = 1;
  // Out of line, so that the common path saves no registers for the call.
  __attribute__((noinline)) std::uint64_t fresh_slot_bits() noexcept { return next_random() | (std::uint64_t{1} << 63); }
  std::uint64_t next_random() noexcept;
  // The owner's free brought `used` to page->trigger.
  void on_trigger(Page* page) noexcept;
  // A block on the available list whose last object came back.
  void page_emptied(Page* page) noexcept;
  // Thread exit: collect remote frees, retire empty blocks, keep as many of
  // them resident as the abandoned heaps' budget allows, discard the rest.
  void release_all() noexcept;
  // Point the class's slots of by_size at the front of its available list (or the empty page).
  void sync_current(std::size_t cls) noexcept;
  // Allocate the object at the front of `page` or nullptr (also collects remote frees).
  static void* page_take(Page* page) noexcept;
  // The owner's lists against each block's state, class and free list:
  // nullptr when all holds, else what does not. The owner thread only.
  const char* verify() const noexcept;

 private:
  // A class without blocks (and no retained empty block to start one warm):
  // a slot of a bigger class's front block whose objects keep the class's
  // alignment, on memory already resident; nullptr when none has one, or the
  // class borrowed cfg::kBorrowedSlotsMax already. free() finds such an object
  // by its address like any other: it belongs to the host's block.
  void* borrow_slot(std::size_t cls) noexcept;
  Page* refill(std::size_t cls) noexcept;
  // Take the blocks on `ready` that are still this heap's and full: their
  // objects back, each to the front of its class.
  void take_ready() noexcept;
  Page* fresh_page(std::size_t cls) noexcept;
  void move_to_full(std::size_t cls, Page* page) noexcept;
  void move_to_front(Page* page) noexcept;
  void push_available(std::size_t cls, Page* page) noexcept;
  void retire(Page* page) noexcept;
  // Discard the pages of the front blocks that were empty at the last look
  // and still are (they start afresh where they are); note which are empty now.
  void purge_idle_fronts(std::uint32_t now) noexcept;
  void park_empty(Page* page) noexcept;
  // Discard the empty blocks beyond the retain limit that have waited
  // purge_delay_ms() by `now`, and the oldest beyond kDelayedEmptyMax more.
  void purge_empties(std::uint32_t now) noexcept;
  // Discard the `count` oldest empty blocks at once: sorted by address,
  // adjacent ones in one system call.
  void discard_oldest_empties(std::size_t count) noexcept;
  friend std::size_t give_back_abandoned_blocks(std::size_t count) noexcept;
  void release_page(Page* page) noexcept;  // its memory discarded already
  SmallSegment* take_segment() noexcept;
};

// Remote free: p belongs to a block owned by another heap (or by none). The
// free that hands back the last object of a full block discards the block,
// unless its owner is active and near it (cfg::kRemoteKeepMs, kRemoteKeepLag):
// then it goes on the owner's ready list, and the owner takes it warm at its
// next refill.
//
// The common case is inline in free's not-owned path (fast_paths.cpp,
// deallocate_other): two checks, one compare-and-swap, one test of in_full,
// and no frame: whatever needs registers across a call is out of line
// (free_remote_checked, remote_free_last), so the path saves none.
// `page`: the descriptor p's address selects (SmallSegment::page_at).
__attribute__((noinline)) void free_remote_checked(void* p, Page* page) noexcept;
// After a push that left every object of a full block on its remote list
// (`pushed`, the word the push left, counts the block's capacity): reclaim
// the block unless its owner will soon reuse it (try_reclaim), then raise the
// class's full_has_remote flag as remote_free_into_full does. (b, the object
// pushed, is not used: the remote free's own arguments, in the registers they
// are in, so the fast path moves none.)
__attribute__((noinline)) void remote_free_last(FreeBlock* b, Page* page, std::uintptr_t pushed) noexcept;

// Push the chain first..last of n objects onto the block's remote list (any
// thread); returns the word the push left (the list from first on, and its
// length). A block a freeing thread reclaimed holds only free objects: one
// more free into it is a double free.
inline __attribute__((always_inline)) std::uintptr_t push_remote(Page* page, FreeBlock* first, FreeBlock* last,
                                                                 std::uint32_t n) noexcept {
  std::atomic<std::uintptr_t>& remote = page->remote();
  std::uintptr_t head = remote.load(std::memory_order_relaxed);
  std::uintptr_t pushed;
  // The word from head: the list's address replaced by first's, n more objects.
  const std::uintptr_t add = reinterpret_cast<std::uintptr_t>(first) + n * kRemoteOne;
  do {
    if (__builtin_expect(head == kReclaimedBlock, 0)) report_freed(Use::kFree, first);
    std::uintptr_t list = head & (kRemoteOne - 1);
    last->set_next(reinterpret_cast<FreeBlock*>(list));
    pushed = head - list + add;
  } while (!remote.compare_exchange_weak(head, pushed, std::memory_order_seq_cst, std::memory_order_relaxed));
  return pushed;
}

// After a push into a block on its owner's full list (a producer's blocks,
// which a consumer thread frees): tell the owner, by the class's
// full_has_remote flag, unless it is up already; read first, since a store
// when it is up would take the line from the owner at every free. (Ordered
// after the push, so an owner that clears the flag after this read scans
// after the push too.) The owner is read after the push: a heap is never
// freed, and a stale one (the segment went to another heap meanwhile) gets
// a spurious flag at worst. The last object of the block takes
// remote_free_last, out of line.
inline __attribute__((always_inline)) void raise_full_has_remote(PerThreadHeap* owner, const Page* page) noexcept {
  std::size_t cls = page_shared(page).full_cls.load(std::memory_order_relaxed);
  if (owner && !owner->queues[cls].full_has_remote.load(std::memory_order_seq_cst))
    owner->queues[cls].full_has_remote.store(true, std::memory_order_release);
}
inline __attribute__((always_inline)) void remote_free_into_full(FreeBlock* b, Page* page,
                                                                  std::uintptr_t pushed) noexcept {
  if (__builtin_expect(remote_count(pushed) == page_shared(page).full_capacity.load(std::memory_order_relaxed), 0))
    return remote_free_last(b, page, pushed);
  raise_full_has_remote(segment_of_page(page)->header.owner, page);
}

// A tagged object onto its block's remote list. After the push (see
// PerThreadHeap::move_to_full): tell the owner if the block is on its full
// list. The descriptor stays mapped even if the owner has meanwhile collected
// this free and reused the block; the worst case is a spurious flag (or a
// stale capacity, which try_reclaim's compare-and-swap sees through).
inline __attribute__((always_inline)) void push_remote_free(Page* page, FreeBlock* b) noexcept {
  std::uintptr_t pushed = push_remote(page, b, b, 1);
  if (__builtin_expect(page->in_full().load(std::memory_order_seq_cst), 0)) remote_free_into_full(b, page, pushed);
}

// The remote free's fast path: the owner's two checks (anything else takes
// the full check, out of line), the freed tag, the push.
inline __attribute__((always_inline)) void free_remote(void* p, Page* page) noexcept {
  if (__builtin_expect(!passes_free_checks(page, p), 0)) return free_remote_checked(p, page);
  auto* b = static_cast<FreeBlock*>(p);
  b->tag = freed_tag(page);
  push_remote_free(page, b);
}
// The hardened build: release every object the heap's quarantine holds (hardened.cpp).
void quarantine_flush(PerThreadHeap* heap) noexcept;
std::size_t reclaimed_blocks() noexcept;  // blocks discarded that way (statistics)
// Statistics: empty blocks abandoned heaps keep now, and blocks new threads
// adopted warm that way since start.
std::size_t abandoned_kept_blocks() noexcept;
std::size_t handed_over_blocks() noexcept;

// PerThreadHeap lifecycle (locked registry; never on a fast path).
PerThreadHeap* heap_claim() noexcept;          // an abandoned heap, or a new one; nullptr + ENOMEM
void heap_abandon(PerThreadHeap* heap) noexcept;
PerThreadHeap* heap_registry_head() noexcept;  // walk with PerThreadHeap::next_heap (stats)

// The checks of every build: p must be a live object of `page` (or, in a block
// of aligned objects, point into one); reports and aborts if not (freed:
// double free; anything else: invalid). Returns the object's start. `owner`:
// the calling thread owns the block (it may read the block's own state).
void* small_live_object(Page* page, void* p, bool owner, Use use) noexcept;

// Checked mode: validate a small free or realloc (report and abort on misuse).
void check_small_free(SmallSegment* segment, Page* page, void* p, bool owner) noexcept;

// Fork: the registry and segment-pool locks.
void heaps_lock() noexcept;
void heaps_unlock() noexcept;

}  // namespace strata::malloc_detail
