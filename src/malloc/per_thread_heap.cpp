#include "per_thread_heap.hpp"
#include "strata/assert.hpp"

#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "checked.hpp"
#include "fast_paths.hpp"
#include "huge_heap.hpp"
#include "large_heap.hpp"
#include "options.hpp"
#include "strata/platform.hpp"

namespace strata::malloc_detail {

constinit Page g_empty_page{};
std::uintptr_t g_heap_secret = 0;

namespace {

// ---- the registry of heaps and the pool of unused segments (locked; slow paths only)
pthread_mutex_t g_registry_lock = PTHREAD_MUTEX_INITIALIZER;
PerThreadHeap* g_heaps = nullptr;
PerThreadHeap* g_abandoned = nullptr;
std::uint32_t g_heap_count = 0;
char* g_meta_cursor = nullptr;  // PerThreadHeap objects are carved from mapped chunks and never freed
char* g_meta_end = nullptr;
constexpr std::size_t kMetaChunk = 256 * 1024;
// Debug builds verify the owner's lists at every kVerifyEvery-th refill.
[[maybe_unused]] constexpr std::uint32_t kVerifyEvery = 64;
constexpr std::size_t kHeapStride = (sizeof(PerThreadHeap) + 63) & ~std::size_t{63};

pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
SegmentList g_segment_pool;


// A per-process secret for the hardened build: the kernel's random bytes,
// else whatever varies from run to run.
std::uintptr_t fresh_secret() noexcept {
  std::uintptr_t secret = 0;
  if (!platform::random_bytes(&secret, sizeof secret)) {
    unsigned lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    secret = (std::uintptr_t{hi} << 32 | lo) ^ reinterpret_cast<std::uintptr_t>(&secret);
  }
  return secret | 1;  // never 0: a zero secret would leave links readable
}

std::atomic<std::size_t> g_reclaimed_blocks{0};
std::atomic<std::size_t> g_abandoned_kept{0};  // empty blocks abandoned heaps keep resident
std::atomic<std::size_t> g_handed_over{0};     // such blocks a new thread adopted (statistics)

// Claim room for up to `want` blocks in the abandoned heaps' budget; returns
// how many fit.
std::size_t reserve_abandoned(std::size_t want) noexcept {
  std::size_t before = g_abandoned_kept.fetch_add(want, std::memory_order_relaxed);
  std::size_t room = before >= cfg::kAbandonedRetainedMax ? 0 : cfg::kAbandonedRetainedMax - before;
  std::size_t keep = want < room ? want : room;
  if (keep < want) g_abandoned_kept.fetch_sub(want - keep, std::memory_order_relaxed);
  return keep;
}

// The last block of a non-empty list.
FreeBlock* list_tail(FreeBlock* list) noexcept {
  while (FreeBlock* next = list->next_block()) list = next;
  return list;
}

// Move the frees other threads pushed onto the block's own free list, counted
// by the word (not walked: the objects are in the freeing threads' caches). A
// block a freeing thread reclaimed (every object free, memory discarded)
// starts afresh.
bool collect_remote(Page* page) noexcept {
  std::atomic<std::uintptr_t>& remote = page->remote();
  if (remote.load(std::memory_order_relaxed) == 0) return false;
  std::uintptr_t word = remote.exchange(0, std::memory_order_acquire);
  if (word == 0) return false;
  if (word == kReclaimedBlock) {
    page->start_fresh();
    page->used_minus_trigger = -static_cast<std::int32_t>(page->trigger);  // used() == 0
    page->touched_pages = 0;  // the freeing thread discarded all of it
    return true;
  }
  // Behind the block's own frees, if any: those are this thread's, warm.
  if (FreeBlock* local = page->free) {
    list_tail(local)->set_next(remote_head(word));
  } else {
    page->free = remote_head(word);
  }
  page->used_minus_trigger -= static_cast<std::int32_t>(remote_count(word));
  STRATA_ASSERT(remote_count(word) <= page->capacity() && page->used() <= page->capacity());
  return true;
}

std::size_t page_index(const Page* page, const SmallSegment* seg) noexcept {
  return static_cast<std::size_t>(page - seg->pages);
}

// The hardened build: the last OS page of every page block becomes a guard, so
// that an overflow off a block's end faults. Once per segment (segments are
// never unmapped); a segment mapped near the mapping limit stays unguarded.
[[maybe_unused]] void protect_block_guards(char* segment) noexcept {
  for (std::size_t i = 1; i < cfg::kPagesPerSegment; ++i)
    if (!protect_guard(segment + i * cfg::kPageSize + kBlockObjectBytes, cfg::kBlockGuardBytes)) return;
}

SmallSegment* map_small_segment() noexcept {
  void* mem = map_segment();
  if (!mem) return nullptr;
  // A block's remote word keeps its count above the address (kRemoteCountShift).
  bool addressable = ((reinterpret_cast<std::uintptr_t>(mem) + cfg::kSegmentSize - 1) >> kRemoteCountShift) == 0;
  if (!addressable || !area_add(mem)) {
    unmap_segment(mem);
    errno = ENOMEM;
    return nullptr;
  }
  auto* seg = new (mem) SmallSegment{};
  init_segment_header(seg->header, SegmentKind::kSmall, mem);
  seg->free_pages = SmallSegment::kAllPagesFree;
  if constexpr (cfg::kGuardPages) protect_block_guards(static_cast<char*>(mem));
  for (std::size_t i = 0; i < cfg::kPagesPerSegment; ++i) {
    Page& page = seg->pages[i];
    page.touched_pages = 0;
    page.state = PageState::kUnused;
  }
  return seg;
}

}  // namespace

// Discard up to `count` of the oldest empty blocks of the heap abandoned
// longest ago that keeps any (the last an adopter would take), in one batch;
// returns how many. Best effort: when the registry is busy, the next fresh
// block tries again (32 threads waiting on it here were 4 000 futex calls a
// run).
std::size_t give_back_abandoned_blocks(std::size_t count) noexcept {
  if (pthread_mutex_trylock(&g_registry_lock) != 0) return 0;
  PerThreadHeap* oldest = nullptr;
  for (PerThreadHeap* h = g_abandoned; h; h = h->next_abandoned)
    if (h->kept_abandoned > 0) oldest = h;
  std::size_t given = 0;
  if (oldest) {
    given = count < oldest->kept_abandoned ? count : oldest->kept_abandoned;
    oldest->kept_abandoned -= static_cast<std::uint32_t>(given);
    g_abandoned_kept.fetch_sub(given, std::memory_order_relaxed);
    oldest->discard_oldest_empties(given);
  }
  pthread_mutex_unlock(&g_registry_lock);
  return given;
}

// ---- allocation -------------------------------------------------------------

void* PerThreadHeap::page_take(Page* page) noexcept {
  // Reap allocation (Vam §3.4): bump through the open fresh memory, then reuse
  // the block's free list; only when that is empty (remote frees collected
  // too) open the next OS page of fresh memory.
  if (page->bump == page->bump_end) {
    if (!page->free) collect_remote(page);
    if (FreeBlock* b = page->free) {
      STRATA_ASSERT(reinterpret_cast<char*>(b) >= page->start() && reinterpret_cast<char*>(b) < page->objects_end());
      page->free = b->next_block();
      ++page->used_minus_trigger;
      b->tag = nullptr;
      return b;
    }
    if (!page->open_fresh()) return nullptr;
  }
  char* p = page->bump;
  STRATA_ASSERT(page->bump_end <= page->objects_end() && p + page->block_size <= page->bump_end);
  page->bump = p + page->block_size;
  ++page->used_minus_trigger;
  reinterpret_cast<FreeBlock*>(p)->tag = nullptr;
  return p;
}

void* PerThreadHeap::malloc_small(std::size_t cls) noexcept {
  ClassQueue& q = queues[cls];
  for (;;) {
    Page* page = q.available.front();
    if (!page) {
      if (void* p = borrow_slot(cls)) return p;
      page = refill(cls);
      if (!page) return nullptr;
    }
    if (void* p = page_take(page)) return p;
    move_to_full(cls, page);
  }
}

namespace {
// A slot of `page` on memory already resident: malloc's own take_slot (its
// free list, then its open fresh memory), unless the free list is empty and
// the next fresh object would start a page not yet touched.
void* take_resident_slot(Page* page) noexcept {
  bool next_starts_a_page = (static_cast<std::size_t>(page->bump - page->start()) & (cfg::kOsPageSize - 1)) == 0;
  if (!page->free && next_starts_a_page) return nullptr;
  return take_slot(page);
}
}  // namespace

void* PerThreadHeap::borrow_slot(std::size_t cls) noexcept {
  // The hardened build's canaries and checks follow the class a request maps to.
  if constexpr (cfg::kHardened) return nullptr;
  if (borrowed[cls] >= cfg::kBorrowedSlotsMax || queues[cls].full.front() || empty_pages.count > 0 || checked_mode())
    return nullptr;
  std::size_t size = kClassSize[cls];
  // allocate_aligned counts on a class's objects being aligned to the largest
  // power of two dividing its size: a host's size keeps that divisor.
  std::size_t alignment = size & (~size + 1);
  for (std::size_t host = cls + 1; host < kClassCount && kClassSize[host] <= 2 * size; ++host) {
    Page* page = current(host);
    if (page == &g_empty_page || kClassSize[host] % alignment != 0) continue;
    if (void* p = take_resident_slot(page)) {
      ++borrowed[cls];
      return p;
    }
  }
  return nullptr;
}

// The trigger of the block malloc takes from (current(cls)): beyond any count
// of objects, so its frees never meet it. Its emptying is ignored anyway
// (page_emptied), and the owner's free then needs no test for it.
constexpr std::uint16_t kFrontTrigger = 0xFFFF;
static_assert(kBlockObjectBytes / cfg::kMinAlign < kFrontTrigger);

void PerThreadHeap::sync_current(std::size_t cls) noexcept {
  Page* front = queues[cls].available.front();
  Page* page = (front && !checked_mode()) ? front : &g_empty_page;
  Page* old = current(cls);
  if (old == page) return;
  if (old != &g_empty_page && old->trigger == kFrontTrigger) old->set_trigger(0);
  if (page != &g_empty_page) page->set_trigger(kFrontTrigger);
  for (std::size_t slot = kClassFirstSlot[cls]; slot <= kClassSize[cls] / cfg::kMinAlign; ++slot) by_size[slot] = page;
}

void PerThreadHeap::move_to_full(std::size_t cls, Page* page) noexcept {
  ClassQueue& q = queues[cls];
  STRATA_ASSERT(page->state == PageState::kInClass && page->cls == cls && !page->full());
  q.available.remove(page);
  std::uint32_t capacity = page->capacity();
  page->set_trigger(capacity - (capacity / cfg::kUnfullFraction > 0 ? capacity / cfg::kUnfullFraction : 1));
  q.full.push_back(page);  // oldest first: the refill scan meets the likeliest freed first
  page_shared(page).full_cls.store(static_cast<std::uint8_t>(cls), std::memory_order_relaxed);
  page_shared(page).full_capacity.store(static_cast<std::uint16_t>(capacity), std::memory_order_relaxed);
  page_shared(page).full_epoch.store(refills.load(std::memory_order_relaxed), std::memory_order_relaxed);
  // Publish "full" before looking at the remote list one last time; a freeing
  // thread pushes before it reads in_full (both seq_cst), so at least one of
  // us sees the other and no remote free is stranded on the full list.
  page->in_full().store(true, std::memory_order_seq_cst);
  if (page->remote().load(std::memory_order_seq_cst) != 0) {
    collect_remote(page);
    if (page->used_minus_trigger <= 0) move_to_front(page);
  }
  sync_current(cls);
}

void PerThreadHeap::move_to_front(Page* page) noexcept {
  ClassQueue& q = queues[page->cls];
  STRATA_ASSERT(page->state == PageState::kInClass && page->full() && q.full.count > 0);
  q.full.remove(page);
  page->set_trigger(0);
  page->in_full().store(false, std::memory_order_relaxed);
  push_available(page->cls, page);
}

// A new front block for the class. The old front was exempt from retiring
// while it was the front (hysteresis); if it is empty now, it goes.
void PerThreadHeap::push_available(std::size_t cls, Page* page) noexcept {
  ClassQueue& q = queues[cls];
  Page* old_front = q.available.front();
  q.available.push_front(page);
  if (old_front && old_front->used() == 0) retire(old_front);
  sync_current(cls);
}

Page* PerThreadHeap::refill(std::size_t cls) noexcept {
  ClassQueue& q = queues[cls];
  // The owner is active: blocks that other threads empty soon stay for it
  // (free_remote). Only this thread writes these.
  refills.store(refills.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if constexpr (STRATA_ASSERTS_ON) {
    if (refills.load(std::memory_order_relaxed) % kVerifyEvery == 0) STRATA_ASSERT_VALID(verify());
  }
  std::uint32_t now = coarse_clock_ms();
  active_ms.store(now, std::memory_order_relaxed);
  if (now - front_scan_ms >= cfg::kIdleFrontScanMs) purge_idle_fronts(now);
  if (empty_pages.count > retain_limit) purge_empties(now);  // the blocks of a burst the delay let stay
  if (huge_purge_due(now)) huge_purge_expired(now);
  large_purge_if_due(now);
  if (ready.load(std::memory_order_relaxed)) {
    take_ready();
    if (q.available.front()) return q.available.front();
  }
  if (q.full_has_remote.load(std::memory_order_relaxed) &&
      q.full_has_remote.exchange(false, std::memory_order_acq_rel))
    q.scan_left = q.full.count;  // look at every full block once more
  if (q.scan_left > 0) {
    // Round robin over the full list: a block without enough remote frees
    // goes to the back, so the next refill continues with the unseen ones.
    std::size_t budget = cfg::kFullScanBudget;
    while (q.scan_left > 0 && budget-- > 0 && q.full.front()) {
      Page* page = q.full.front();
      --q.scan_left;
      if (collect_remote(page) && page->used_minus_trigger <= 0) {
        // One block with room will do: the rest wait for the next refills.
        // Taking every ready block at once would retire the empty ones beyond
        // the LRU's limit (discarded, then faulted in again), when a consumer
        // thread empties a producer's blocks in bursts.
        move_to_front(page);
        break;
      }
      q.full.remove(page);
      q.full.push_back(page);
    }
    if (q.available.front()) return q.available.front();
  }
  Page* page = fresh_page(cls);
  if (!page) return nullptr;
  push_available(cls, page);
  return page;
}

bool PerThreadHeap::push_ready(Page* page) noexcept {
  SmallSegment::PageShared& shared = page_shared(page);
  if (shared.ready_queued.exchange(true, std::memory_order_acquire)) return false;
  Page* head = ready.load(std::memory_order_relaxed);
  do {
    shared.ready_next.store(head, std::memory_order_relaxed);
  } while (!ready.compare_exchange_weak(head, page, std::memory_order_release, std::memory_order_relaxed));
  return true;
}

void PerThreadHeap::take_ready() noexcept {
  // The owner takes the whole stack: pushers only ever add, so no ABA.
  Page* page = ready.exchange(nullptr, std::memory_order_acquire);
  while (page) {
    SmallSegment::PageShared& shared = page_shared(page);
    Page* next = shared.ready_next.load(std::memory_order_relaxed);
    shared.ready_queued.store(false, std::memory_order_release);
    // A stale entry (the block went back to the owner's lists another way, or
    // to another heap meanwhile) is only dropped. Blocks emptied beyond the
    // first retire warm to the LRU of empty blocks (push_available), where
    // the next refills find them.
    if (segment_of_page(page)->header.owner == this && page->state == PageState::kInClass && page->full() &&
        collect_remote(page) && page->used_minus_trigger <= 0)
      move_to_front(page);
    page = next;
  }
}

Page* PerThreadHeap::fresh_page(std::size_t cls) noexcept {
  Page* page = empty_pages.front();  // the most recently emptied block is the warmest
  if (page) {
    empty_pages.remove(page);
  } else {
    // A fresh block faults its pages in: if this heap discarded a block it
    // now needs again, it keeps one more empty block from now on.
    if (unanswered_discards > 0) {
      --unanswered_discards;
      if (retain_limit < cfg::kRetainedEmptyMax) ++retain_limit;
    }
    // While exited threads' empty blocks wait resident for adopters, a block
    // faulted in here gives one of them back: the waiting costs no RSS. (One
    // at a time: batching them merged few, the oldest blocks of a heap lie
    // apart, and the blocks owed meanwhile raised threadchurn's peak RSS.)
    if (g_abandoned_kept.load(std::memory_order_relaxed) > 0) give_back_abandoned_blocks(1);
    SmallSegment* seg = segments.front();
    if (!seg || seg->free_pages == 0) seg = take_segment();
    if (!seg) return nullptr;
    unsigned i = static_cast<unsigned>(__builtin_ctzll(seg->free_pages));
    STRATA_ASSERT(i > 0 && i < cfg::kPagesPerSegment);  // page 0 holds the header
    seg->free_pages &= ~(std::uint64_t{1} << i);
    if (seg->free_pages == 0 && SegmentList::next(seg)) {  // full segments go to the back
      segments.remove(seg);
      segments.push_back(seg);
    }
    page = &seg->pages[i];
  }
  if (cfg::kZeroOnFree && page->block_size != kClassSize[cls] && page->touched_pages > 0) {
    // The hardened build's freed slots are zero but for their first two
    // words (link, freed tag), which fall anywhere inside another class's
    // slots: clear those. (Not a discard: the pages would fault in again at
    // once, for a zeroing by the kernel; a producer-consumer program's blocks
    // change class all the time.)
    char* end = page->start() + std::size_t{page->touched_pages} * cfg::kOsPageSize;
    for (char* slot = page->start(); slot < end; slot += page->block_size) std::memset(slot, 0, sizeof(FreeBlock));
  }
  page->set_block_size(kClassSize[cls]);
  page->share_slot_magic();
  page->cls = static_cast<std::uint8_t>(cls);
  page->start_fresh();
  page->used_minus_trigger = 0;
  page->trigger = 0;
  page->flags = 0;
  page->state = PageState::kInClass;
  page->link = {};
  page->in_full().store(false, std::memory_order_relaxed);
  return page;
}

namespace {
// One list of the owner's against the state its blocks must be in.
const char* verify_list(const PageList& list, PageState state, int cls, int full) noexcept {
  std::size_t n = 0;
  for (const Page* page = list.front(); page; page = PageList::next(page)) {
    if (++n > list.count) return "a page list holds more blocks than its count";
    if (page->state != state) return "a block is on the list of another state";
    if (cls >= 0 && page->cls != cls) return "a block is on another class's list";
    if (full >= 0 && page->full() != (full == 1)) return "a block's full flag disagrees with its list";
    if (state != PageState::kInClass) continue;
    std::uint32_t free_objects = 0;
    for (const FreeBlock* b = page->free; b; b = b->next_block()) {
      auto* at = reinterpret_cast<const char*>(b);
      if (at < page->start() || at >= page->bump) return "a free-list object lies outside its block's used part";
      if (!Page::is_slot_start(at, static_cast<std::uint32_t>(0xFFFFFFFFu / page->block_size + 1)))
        return "a free-list object does not start a slot";
      if (++free_objects > page->capacity()) return "a block's free list loops";
    }
    if (page->used() > page->capacity()) return "a block counts more objects in use than it holds";
  }
  return n == list.count ? nullptr : "a page list's count is off";
}
}  // namespace

const char* PerThreadHeap::verify() const noexcept {
  for (std::size_t cls = 0; cls < kClassCount; ++cls) {
    const ClassQueue& q = queues[cls];
    if (const char* problem = verify_list(q.available, PageState::kInClass, static_cast<int>(cls), 0)) return problem;
    if (const char* problem = verify_list(q.full, PageState::kInClass, static_cast<int>(cls), 1)) return problem;
  }
  if (const char* problem = verify_list(empty_pages, PageState::kEmptyRetained, -1, -1)) return problem;
  for (const SmallSegment* seg = segments.front(); seg; seg = SegmentList::next(seg))
    if (seg->free_pages & 1) return "a segment's header page is marked free";
  return nullptr;
}

SmallSegment* PerThreadHeap::take_segment() noexcept {
  pthread_mutex_lock(&g_pool_lock);
  SmallSegment* seg = g_segment_pool.pop_front();
  pthread_mutex_unlock(&g_pool_lock);
  if (!seg) seg = map_small_segment();
  if (!seg) return nullptr;
  seg->header.owner = this;
  segments.push_front(seg);
  return seg;
}

// ---- freeing ----------------------------------------------------------------

void PerThreadHeap::free_local_slow(Page* page, void* p) noexcept {
  auto* b = static_cast<FreeBlock*>(small_live_object(page, p, true, Use::kFree));
  b->tag = freed_tag(page);
  push_local(page, b);
}

std::uint64_t PerThreadHeap::next_random() noexcept {
  // xorshift64: cheap, and seeded from the secret (heap_claim), never 0.
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

void PerThreadHeap::on_trigger(Page* page) noexcept {
  // Vam §3.5: a full block that gets frees goes to the front of the available
  // list. Vam moves it at the first free; waiting for 1/kUnfullFraction of it
  // keeps a churn of single frees from moving blocks back and forth.
  if (page->full()) {
    move_to_front(page);
    if (page->used() != 0) return;
  }
  page_emptied(page);
}

void PerThreadHeap::page_emptied(Page* page) noexcept {
  // Hysteresis: the front block of a class stays even when empty, so a loop
  // that allocates and frees one object does not retire and refetch it
  // (until it idles: purge_idle_fronts).
  if (page == queues[page->cls].available.front()) return;
  retire(page);
}

void PerThreadHeap::purge_idle_fronts(std::uint32_t now) noexcept {
  front_scan_ms = now;
  for (std::size_t cls = 0; cls < kClassCount; ++cls) {
    std::uint64_t bit = std::uint64_t{1} << (cls % 64);
    std::uint64_t& word = fronts_empty[cls / 64];
    Page* front = queues[cls].available.front();
    if (!front || front->used() != 0) {
      word &= ~bit;
    } else if (word & bit) {
      word &= ~bit;
      front->note_touched();
      if (front->touched_pages > 1) {
        discard(front->start(), std::size_t{front->touched_pages} * cfg::kOsPageSize);
        front->touched_pages = 0;
        front->start_fresh();
      }
    } else {
      word |= bit;
    }
  }
}

void PerThreadHeap::retire(Page* page) noexcept {
  park_empty(page);
  if (empty_pages.count > retain_limit) purge_empties(page->emptied_ms());
}

void PerThreadHeap::purge_empties(std::uint32_t now) noexcept {
  // The oldest blocks are at the back: count those whose delay is over.
  std::size_t over = empty_pages.count - retain_limit;
  std::size_t n = over > cfg::kDelayedEmptyMax ? over - cfg::kDelayedEmptyMax : 0;
  std::uint32_t delay = purge_delay_ms();
  Page* page = empty_pages.back();
  for (std::size_t i = 0; i < n; ++i) page = PageList::prev(page);
  for (; n < over && now - page->emptied_ms() >= delay; ++n) page = PageList::prev(page);
  if (n == 0) return;
  // While the limit is raised, kPurgeBatch of them at once (adjacent ones in
  // one system call), so the LRU drops below the limit and never holds more
  // than the limit allows.
  if (retain_limit > cfg::kRetainedEmptyPages && n < cfg::kPurgeBatch)
    n = cfg::kPurgeBatch < empty_pages.count ? cfg::kPurgeBatch : empty_pages.count;
  // For every kRetainLowerEvery blocks discarded the limit drops by one, so a
  // burst going away brings a raised limit back to kRetainedEmptyPages
  // within a few times as many frees, while a working set that breathes
  // (each turn discards what the next turn faults in again, one raise per
  // block) still climbs to its size.
  for (overflows_to_lower += static_cast<std::uint32_t>(n); overflows_to_lower >= cfg::kRetainLowerEvery;
       overflows_to_lower -= cfg::kRetainLowerEvery)
    if (retain_limit > cfg::kRetainedEmptyPages) --retain_limit;
  unanswered_discards = static_cast<std::uint32_t>(
      unanswered_discards + n < cfg::kRetainedEmptyMax ? unanswered_discards + n : cfg::kRetainedEmptyMax);
  discard_oldest_empties(n);
}

// Move an empty block from its class to the front of the LRU of empty blocks.
void PerThreadHeap::park_empty(Page* page) noexcept {
  STRATA_ASSERT(page->state == PageState::kInClass && page->used() == 0 && !page->full());
  queues[page->cls].available.remove(page);
  sync_current(page->cls);
  page->note_touched();
  page->state = PageState::kEmptyRetained;
  page->flags = 0;
  page->set_slot_magic(0);  // a free into the block now is a misuse: the slow path says which
  page->set_emptied_ms(coarse_clock_ms());
  empty_pages.push_front(page);
}

void PerThreadHeap::discard_oldest_empties(std::size_t count) noexcept {
  while (count > 0) {
    Page* batch[cfg::kPurgeBatch];
    std::size_t n = 0;
    for (; n < cfg::kPurgeBatch && n < count && empty_pages.count > 0; ++n) {
      batch[n] = empty_pages.back();
      empty_pages.remove(batch[n]);
    }
    if (n == 0) return;
    count -= n;
    for (std::size_t i = 1; i < n; ++i)  // by address (insertion sort: a handful)
      for (std::size_t j = i; j > 0 && batch[j]->start() < batch[j - 1]->start(); --j) std::swap(batch[j], batch[j - 1]);
    // A run: blocks each right after the last, all but the last touched whole.
    for (std::size_t i = 0; i < n;) {
      std::size_t end = i + 1;
      while (end < n && batch[end - 1]->start() + cfg::kPageSize == batch[end]->start() &&
             std::size_t{batch[end - 1]->touched_pages} * cfg::kOsPageSize == cfg::kPageSize)
        ++end;
      char* from = batch[i]->start();
      discard(from, static_cast<std::size_t>(batch[end - 1]->start() - from) +
                        std::size_t{batch[end - 1]->touched_pages} * cfg::kOsPageSize);
      for (; i < end; ++i) release_page(batch[i]);
    }
  }
}

// Give a retired block, its memory discarded, back to its segment.
void PerThreadHeap::release_page(Page* page) noexcept {
  STRATA_ASSERT(page->state == PageState::kEmptyRetained);
  page->touched_pages = 0;
  page->state = PageState::kUnused;
  SmallSegment* seg = segment_of_page(page);
  STRATA_ASSERT(!(seg->free_pages >> page_index(page, seg) & 1));  // not given back twice
  seg->free_pages |= std::uint64_t{1} << page_index(page, seg);
  segments.remove(seg);
  if (seg->free_pages == SmallSegment::kAllPagesFree) {
    // All unused and discarded: the segment goes to the global pool. Segments
    // are never unmapped, so a late remote free's read of a descriptor always
    // reads mapped memory.
    seg->header.owner = nullptr;
    pthread_mutex_lock(&g_pool_lock);
    g_segment_pool.push_front(seg);
    pthread_mutex_unlock(&g_pool_lock);
  } else {
    segments.push_front(seg);
  }
}

void PerThreadHeap::release_all() noexcept {
  take_ready();
  for (std::size_t cls = 0; cls < kClassCount; ++cls) {
    ClassQueue& q = queues[cls];
    q.full_has_remote.store(false, std::memory_order_relaxed);
    for (Page* page = q.full.front(); page;) {
      Page* next = PageList::next(page);
      if (collect_remote(page)) move_to_front(page);
      page = next;
    }
    for (Page* page = q.available.front(); page;) {
      Page* next = PageList::next(page);
      collect_remote(page);
      if (page->used() == 0) park_empty(page);  // the front blocks too: all go to the adopter
      page = next;
    }
    sync_current(cls);
  }
  // Idle from now on: blocks other threads empty are discarded at once.
  active_ms.store(coarse_clock_ms() - cfg::kRemoteKeepMs - 1, std::memory_order_relaxed);
  // The thread that adopts this heap reuses its empty blocks warm (thread
  // churn); abandoned heaps keep kAbandonedRetainedMax blocks at most, in all.
  std::size_t keep = reserve_abandoned(empty_pages.count);
  discard_oldest_empties(empty_pages.count - keep);
  kept_abandoned = static_cast<std::uint32_t>(keep);
}

namespace {

// Will the owner of `page` soon collect it and reuse it warm? Yes while it
// is active (a refill within kRemoteKeepMs) and still near the block (fewer
// than kRemoteKeepLag refills since the block went full): a consumer thread
// emptying a producer's blocks. No for an idle or exited owner, or a block
// filled long ago (a burst freed by another thread while its owner moved on).
bool owner_will_reuse(const PerThreadHeap* owner, const Page* page) noexcept {
  if (!owner) return false;
  std::uint32_t lag =
      owner->refills.load(std::memory_order_relaxed) - page_shared(page).full_epoch.load(std::memory_order_relaxed);
  std::uint32_t idle_ms = coarse_clock_ms() - owner->active_ms.load(std::memory_order_relaxed);
  return lag < cfg::kRemoteKeepLag && idle_ms <= cfg::kRemoteKeepMs;
}

// Every object of `page` is on its remote list: the word `full` (count ==
// capacity) was there after this thread's push. Unless the owner will soon
// reuse the block warm, take the list: then nobody else can touch the block
// until its owner looks again, so discard the memory and leave
// kReclaimedBlock for the owner. If the word changed meanwhile (the owner
// collected), the block is the owner's business again.
void try_reclaim(Page* page, std::uintptr_t full) noexcept {
  std::atomic<std::uintptr_t>& remote = page->remote();
  if (!remote.compare_exchange_strong(full, 0, std::memory_order_acquire, std::memory_order_relaxed)) return;
  // With the objects in hand the owner cannot recycle the block, so its
  // geometry is stable: the count is the proof (the capacity read before the
  // compare-and-swap may have been another class's).
  if (remote_count(full) != page->capacity()) {
    FreeBlock* list = remote_head(full);
    push_remote(page, list, list_tail(list), remote_count(full));
    return;
  }
  discard(page->start(), cfg::kPageSize);
  g_reclaimed_blocks.fetch_add(1, std::memory_order_relaxed);
  remote.store(kReclaimedBlock, std::memory_order_release);
}

}  // namespace

void free_remote_checked(void* p, Page* page) noexcept {
  auto* b = static_cast<FreeBlock*>(small_live_object(page, p, false, Use::kFree));
  b->tag = freed_tag(page);
  push_remote_free(page, b);
}

void remote_free_last(FreeBlock*, Page* page, std::uintptr_t pushed) noexcept {
  // The last object of a full block: to its owner's ready list if the owner
  // will soon reuse it (a consumer emptying a producer's blocks), else give
  // its memory back now (a burst freed by another thread, an exited owner).
  // A stale owner only misleads owner_will_reuse: try_reclaim's
  // compare-and-swap checks its verdict, take_ready the block's owner.
  PerThreadHeap* owner = segment_of_page(page)->header.owner;
  if (owner_will_reuse(owner, page)) {
    // Straight to the owner: a producer's full list is long, and a scan of it
    // finds an emptied block late, after faulting fresh ones in meanwhile.
    if (owner->push_ready(page)) return;
  } else if (!checked_mode()) {
    try_reclaim(page, pushed);
  }
  raise_full_has_remote(owner, page);
}

std::size_t reclaimed_blocks() noexcept { return g_reclaimed_blocks.load(std::memory_order_relaxed); }
std::size_t abandoned_kept_blocks() noexcept { return g_abandoned_kept.load(std::memory_order_relaxed); }
std::size_t handed_over_blocks() noexcept { return g_handed_over.load(std::memory_order_relaxed); }

// ---- heap lifecycle -----------------------------------------------------------

PerThreadHeap* heap_claim() noexcept {
  pthread_mutex_lock(&g_registry_lock);
  PerThreadHeap* heap = g_abandoned;
  if (heap) {
    g_abandoned = heap->next_abandoned;
    heap->next_abandoned = nullptr;
    heap->abandoned = false;
    // Its empty blocks are this thread's now, out of the abandoned heaps' budget.
    g_abandoned_kept.fetch_sub(heap->kept_abandoned, std::memory_order_relaxed);
    g_handed_over.fetch_add(heap->kept_abandoned, std::memory_order_relaxed);
    heap->kept_abandoned = 0;
    pthread_mutex_unlock(&g_registry_lock);
    for (std::size_t cls = 0; cls < kClassCount; ++cls) heap->sync_current(cls);
    return heap;
  }
  if (static_cast<std::size_t>(g_meta_end - g_meta_cursor) < kHeapStride) {
    void* chunk = platform::map_pages(kMetaChunk);
    if (!chunk) {
      pthread_mutex_unlock(&g_registry_lock);
      return nullptr;
    }
    g_meta_cursor = static_cast<char*>(chunk);
    g_meta_end = g_meta_cursor + kMetaChunk;
  }
  if (cfg::kHardened && g_heap_count == 0) g_heap_secret = fresh_secret();  // before the first small object
  heap = new (g_meta_cursor) PerThreadHeap{};
  heap->rng = (g_heap_secret ^ (std::uint64_t{g_heap_count} * 0x9e3779b97f4a7c15)) | 1;
  g_meta_cursor += kHeapStride;
  for (auto& c : heap->by_size) c = &g_empty_page;
  heap->number = g_heap_count++;
  heap->next_heap = g_heaps;
  g_heaps = heap;
  pthread_mutex_unlock(&g_registry_lock);
  return heap;
}

void heap_abandon(PerThreadHeap* heap) noexcept {
  if constexpr (cfg::kQuarantineSlots > 0) quarantine_flush(heap);
  heap->release_all();
  pthread_mutex_lock(&g_registry_lock);
  heap->abandoned = true;
  heap->next_abandoned = g_abandoned;
  g_abandoned = heap;
  pthread_mutex_unlock(&g_registry_lock);
}

PerThreadHeap* heap_registry_head() noexcept {
  pthread_mutex_lock(&g_registry_lock);
  PerThreadHeap* head = g_heaps;
  pthread_mutex_unlock(&g_registry_lock);
  return head;
}

void heaps_lock() noexcept {
  pthread_mutex_lock(&g_registry_lock);
  pthread_mutex_lock(&g_pool_lock);
}

void heaps_unlock() noexcept {
  pthread_mutex_unlock(&g_pool_lock);
  pthread_mutex_unlock(&g_registry_lock);
}

// ---- the checks of every build ---------------------------------------------------

namespace {

// Is b on one of the block's free lists? Only the owner may walk its own list;
// the remote list is read from its published head.
bool on_free_list(const Page* page, const FreeBlock* b) noexcept {
  for (const FreeBlock* f = page->free; f; f = f->next_block())
    if (f == b) return true;
  std::uintptr_t word = page->remote().load(std::memory_order_acquire);
  if (word == kReclaimedBlock) return false;
  for (const FreeBlock* f = remote_head(word); f; f = f->next_block())
    if (f == b) return true;
  return false;
}

}  // namespace

void* small_live_object(Page* page, void* p, bool owner, Use use) noexcept {
  // Read as its underlying byte: clang's __atomic builtins take integers only.
  const auto state = static_cast<PageState>(
      __atomic_load_n(reinterpret_cast<const std::uint8_t*>(&page->state), __ATOMIC_RELAXED));
  if (state != PageState::kInClass) {
    // A block whose objects all came back: a free into it is a second one
    // if p is where an object was.
    bool was_slot = state == PageState::kEmptyRetained &&
                    (reinterpret_cast<std::uintptr_t>(p) & (cfg::kPageSize - 1)) % page->block_size == 0;
    if (was_slot) report_freed(use, p);
    report_invalid(use, p);
  }
  char* object = static_cast<char*>(p);
  std::uint32_t magic = __atomic_load_n(&page->slot_magic, __ATOMIC_RELAXED);
  if (__atomic_load_n(&page->flags, __ATOMIC_RELAXED) & kPageInterior) {
    object = page->object_start(p);  // aligned objects: any pointer into the object is its own
  } else if (magic != 0 ? !Page::is_slot_start(p, magic)
                        : (reinterpret_cast<std::uintptr_t>(p) & (cfg::kPageSize - 1)) % page->block_size != 0) {
    report_invalid(use, p);
  }
  // Past the last object (no division: a slot start is inside the block iff
  // its slot ends inside it), or (the owner knows) past what bumping reached.
  auto offset = reinterpret_cast<std::uintptr_t>(object) & (cfg::kPageSize - 1);
  if (offset + page->block_size > kBlockObjectBytes || (owner && object >= page->bump)) report_invalid(use, p);
  auto* b = reinterpret_cast<FreeBlock*>(object);
  if (b->tag == freed_tag(page)) {
    // Only a free puts the tag there; the owner confirms, so that live data
    // that happens to hold it is no false alarm. (The hardened build's tag is
    // keyed with the secret: no data holds it by accident, and a freed object
    // may wait in any thread's quarantine, on no list.)
    if (cfg::kHardened || !owner || on_free_list(page, b)) report_freed(use, p);
  }
  return object;
}

// ---- checked mode -------------------------------------------------------------

void check_small_free(SmallSegment* segment, Page* page, void* p, bool owner) noexcept {
  (void)segment;
  if (page->remote().load(std::memory_order_relaxed) == kReclaimedBlock) report_misuse("double free of", p);
  if (page->state != PageState::kInClass) report_misuse("free(): pointer was not allocated by strata (unused page block):", p);
  char* object = page->object_start(p);
  if (object != p && !(page->flags & kPageInterior) && owner)
    report_misuse("free(): pointer is not the start of an object:", p);
  if (object >= page->objects_end() || (owner && object >= page->bump))
    report_misuse("free(): pointer was never allocated:", p);
  // The freed tag every build keeps (small_live_object) says the rest, in
  // checked mode's terms for realloc too ("double free of").
  (void)small_live_object(page, p, owner, Use::kFree);
}

}  // namespace strata::malloc_detail
