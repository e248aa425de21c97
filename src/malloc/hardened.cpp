// The hardened build's malloc and free (hardened.hpp): canaries, zeroing and
// verifying, the quarantine, size checks. The free-list encoding and the
// keyed freed tag live with the free lists (segment.hpp); the random slot
// choice is the quarantine's release order (drain_quarantine).
#include "hardened.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "strata/platform.hpp"

#include "allocator.hpp"
#include "fast_paths.hpp"

namespace strata::malloc_detail {

namespace {

// [[maybe_unused]]: in the default build the policies are off, so `if constexpr`
// drops every use of a policy's helper (clang warns of unneeded functions).
std::uintptr_t* slot_words(void* object) noexcept { return static_cast<std::uintptr_t*>(object); }

// The tail word of the slot at `object` (cfg::kCanaryBytes): the request's
// size in its top 16 bits, keyed with the secret and the word's own address;
// its low 48 bits decode to zero. Every byte between the request's end and
// the tail is slack that stays zero while the object lives, so an overflow of
// even one byte changes the slack or the tail's low bytes (which it reaches
// first), and any change there is seen.
constexpr unsigned kSizeShift = 48;
static_assert(cfg::kSmallMax < (std::size_t{1} << (64 - kSizeShift)));

// `slot`: the block's slot size (Page::block_size, or its copy for other
// threads, PageShared::remote_block_size), a multiple of 16: no rounding to
// words needed.
[[maybe_unused]] std::uintptr_t* tail_of(void* object, std::size_t slot) noexcept {
  return reinterpret_cast<std::uintptr_t*>(static_cast<char*>(object) + slot - sizeof(std::uintptr_t));
}
[[maybe_unused]] std::uintptr_t tail_key(const std::uintptr_t* tail) noexcept {
  return g_heap_secret ^ reinterpret_cast<std::uintptr_t>(tail);
}
[[maybe_unused]] void record_size(void* object, const Page* page, std::size_t size) noexcept {
  std::uintptr_t* tail = tail_of(object, page->block_size);
  *tail = tail_key(tail) ^ (std::uintptr_t{size} << kSizeShift);
}
// The recorded size, once the tail is seen intact (else `p` overflowed).
[[maybe_unused]] std::size_t recorded_size(void* object, std::size_t slot, const void* p) noexcept {
  std::uintptr_t* tail = tail_of(object, slot);
  std::uintptr_t decoded = *tail ^ tail_key(tail);
  std::size_t size = decoded >> kSizeShift;
  if ((decoded << (64 - kSizeShift)) != 0 || size > slot - cfg::kCanaryBytes) report_misuse("heap overflow past", p);
  return size;
}

// The slack free checks: its first word, read unaligned right after the
// request (overflows start there), masked to the slack's length when the
// tail follows closer than a word.
// min(a, b) by a conditional move: the sizes these take (slot sizes,
// slack) follow the request sizes, which programs vary at random, and GCC
// would branch on them (a branch mispredicted that often costs more than
// the few instructions it saves).
[[maybe_unused]] std::size_t min_no_branch(std::size_t a, std::size_t b) noexcept {
#if defined(__x86_64__)
  asm("cmpq %1, %0\n\tcmova %1, %0" : "+r"(a) : "r"(b) : "cc");
  return a;
#else
  return a < b ? a : b;
#endif
}

// Without a branch (the slack follows the request's size, which programs
// vary at random): the word's low min(slack, 8) bytes; two shifts, as one by
// 64 would be undefined.
[[maybe_unused]] std::uintptr_t checked_slack_mask(std::size_t slot, std::size_t size) noexcept {
  std::size_t slack = slot - cfg::kCanaryBytes - size;
  unsigned half_bits = 4 * static_cast<unsigned>(min_no_branch(slack, sizeof(std::uintptr_t)));
  return ~((~std::uintptr_t{0} << half_bits) << half_bits);
}
[[maybe_unused]] bool slack_is_zero(void* object, std::size_t slot, std::size_t size) noexcept {
  std::uintptr_t word;
  std::memcpy(&word, static_cast<char*>(object) + size, sizeof word);  // may reach into the tail: masked
  return (word & checked_slack_mask(slot, size)) == 0;
}
// Without zero on free (cfg::kZeroOnFree off), malloc clears what free checks.
[[maybe_unused]] void clear_slack(void* object, const Page* page, std::size_t size) noexcept {
  std::uintptr_t word;
  char* at = static_cast<char*>(object) + size;
  std::memcpy(&word, at, sizeof word);
  word &= ~checked_slack_mask(page->block_size, size);
  std::memcpy(at, &word, sizeof word);
}

// A freed slot is zero but for its freed tag (word 1) and, once it left the
// quarantine, its free-list link (word 0). Zeroing all but the smallest slots
// is libc's memset (wide stores); checking uses 16-byte SSE2 loads, in loops
// the compiler may not turn into library calls
// (-fno-tree-loop-distribute-patterns).
using Chunk16 = long long __attribute__((vector_size(16)));
constexpr std::size_t kInlineZeroing = 64;

// Slots of 16 to kInlineZeroing bytes: cheaper than the call. Four 16-byte
// stores, at 0, 16, 32 and 48 clamped to the slot (overlapping in slots
// smaller than 64): no loop, and no branch on the slot's size, which
// programs vary at random.
static_assert(kInlineZeroing == 4 * sizeof(Chunk16) && cfg::kMinAlign == sizeof(Chunk16));
void zero_small_slot(void* object, std::size_t size) noexcept {
  char* at = static_cast<char*>(object);
  std::size_t last = size - sizeof(Chunk16);
  for (std::size_t offset : {std::size_t{0}, min_no_branch(16, last), min_no_branch(32, last), last})
    *reinterpret_cast<Chunk16*>(at + offset) = Chunk16{0, 0};
}
[[maybe_unused]] void zero_slot(void* object, std::size_t slot) noexcept {
  if (slot > kInlineZeroing) return (void)std::memset(object, 0, slot);
  zero_small_slot(object, slot);
}
// The fast free zeroes a slot above kInlineZeroing in two steps, so that its
// last act is a jump to memset (and it saves no register for a call): the
// link word at once, the rest past the link and the tag last.
[[maybe_unused]] void zero_past_tag(void* object, std::size_t size) noexcept {
  std::memset(static_cast<char*>(object) + sizeof(FreeBlock), 0, size - sizeof(FreeBlock));
}
static_assert(sizeof(FreeBlock) == 16);

// The slot's bytes past the link and the tag are zero.
[[maybe_unused]] bool body_is_zero(const void* object, const Page* page) noexcept {
  const auto* v = static_cast<const Chunk16*>(object);
  Chunk16 any{0, 0};
  for (std::size_t i = 1, n = page->block_size / sizeof(Chunk16); i < n; ++i) any |= v[i];
  return (any[0] | any[1]) == 0;
}
[[maybe_unused]] bool all_zero(Chunk16 any) noexcept { return (any[0] | any[1]) == 0; }
// malloc checks the first cfg::kVerifiedOnReuse bytes only: writes after
// free mostly hit an object's first fields, and a full check doubled the
// cost of zeroing on free. (The exits check quarantined slots in full.)
static_assert(cfg::kVerifiedOnReuse == 4 * sizeof(Chunk16));
// Bytes 16-63 of a slot of at least 32 bytes, or'ed 16 at a time:
// straight-line loads, overlapping in slots smaller than 64 (no branch on the
// slot's size, which programs vary at random).
[[maybe_unused]] Chunk16 body_chunks(const void* object, std::size_t size) noexcept {
  const char* at = static_cast<const char*>(object);
  std::size_t last = size - sizeof(Chunk16);
  return *reinterpret_cast<const Chunk16*>(at + 16) | *reinterpret_cast<const Chunk16*>(at + min_no_branch(32, last)) |
         *reinterpret_cast<const Chunk16*>(at + min_no_branch(48, last));
}
// 16-byte slots hold only the link and the tag.
[[maybe_unused]] bool reused_slot_is_zero(const void* object, std::size_t size) noexcept {
  if (STRATA_UNLIKELY(size < 2 * sizeof(Chunk16))) return true;
  return all_zero(body_chunks(object, size));
}

// A quarantined slot as free left it: zero, its tag in word 1.
[[maybe_unused]] bool quarantined_slot_is_intact(void* object) noexcept {
  const Page* page = reinterpret_cast<SmallSegment*>(segment_of(object))->page_of(object);
  const auto* b = static_cast<const FreeBlock*>(object);
  return slot_words(object)[0] == 0 && b->tag == freed_tag(page) && body_is_zero(object, page);
}

// The report as a call malloc's fast path can jump to (a call to a
// noreturn function is never a tail call): then it keeps no frame.
[[maybe_unused]] __attribute__((noinline, cold)) void* report_write_after_free(void* object) noexcept {
  report_misuse("write after free of", object);
}

__attribute__((always_inline)) inline void* hand_out(void* object, const Page* page, std::size_t size) noexcept {
  if constexpr (cfg::kZeroOnFree) {
    if (!reused_slot_is_zero(object, page->block_size)) return report_write_after_free(object);
  }
  slot_words(object)[0] = 0;
  if constexpr (cfg::kCanaryBytes > 0) {
    if constexpr (!cfg::kZeroOnFree) clear_slack(object, page, size);
    record_size(object, page, size);
  }
  return object;
}

// A slot leaving the quarantine is still as free left it in the words its
// free-list life overwrites (the link, the tag) and the ones malloc checks
// at reuse: a write after free during the quarantine is seen here, before
// the link hides a write to the first word. `slot`: as tail_of's.
[[maybe_unused]] void check_leaving_quarantine(void* object, const Page* page, std::size_t slot) noexcept {
  if constexpr (cfg::kZeroOnFree) {
    const auto* b = static_cast<const FreeBlock*>(object);
    if (slot_words(object)[0] != 0 || b->tag != freed_tag(page) || !reused_slot_is_zero(object, slot))
      report_misuse("write after free of", object);
  }
}
// The slot size a thread other than the block's owner reads: the copy beside
// the remote list, not the descriptor, whose line the owner's malloc writes
// at every call (a consumer's free would take that line from the producer).
[[maybe_unused]] std::size_t shared_slot_size(const Page* page) noexcept {
  return page_shared(page).remote_block_size.load(std::memory_order_relaxed);
}

// Back to its block, from whichever thread: the owner's list (`second`: in
// its second place, PerThreadHeap::push_local_placed) or the remote one.
[[maybe_unused]] void release_small(PerThreadHeap* heap, void* object, bool second) noexcept {
  auto* seg = reinterpret_cast<SmallSegment*>(segment_of(object));
  Page* page = seg->page_of(object);
  auto* b = static_cast<FreeBlock*>(object);
  if (STRATA_LIKELY(seg->header.owner == heap)) {
    if constexpr (cfg::kQuarantineSlots > 0) check_leaving_quarantine(object, page, page->block_size);
    heap->push_local_placed(page, b, second);
  } else {
    if constexpr (cfg::kQuarantineSlots > 0) check_leaving_quarantine(object, page, shared_slot_size(page));
    push_remote_free(page, b);
  }
}

// A drained batch's objects of other threads' blocks, chained per block
// while the drain walks the batch, so that each block takes one
// compare-and-swap a batch, not one an object (a consumer thread's batch
// holds a few blocks' objects: the producer's current block of each class).
// Direct-mapped by the descriptor's address; a block that meets another's
// entry pushes the chain there first.
class RemoteChains {
 public:
  void add(Page* page, FreeBlock* b) noexcept {
    unsigned i = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(page) / sizeof(Page)) % kChains);
    Chain& c = chains_[i];
    if ((open_ & (1u << i)) && c.page == page) {
      b->set_next(c.first);
      c.first = b;
      ++c.count;
      return;
    }
    if (open_ & (1u << i)) push(c);
    open_ |= 1u << i;
    c = Chain{page, b, b, 1};
  }
  void push_all() noexcept {
    for (unsigned open = open_; open != 0; open &= open - 1) push(chains_[__builtin_ctz(open)]);
  }

 private:
  struct Chain {
    Page* page;
    FreeBlock* first;
    FreeBlock* last;
    std::uint32_t count;
  };
  static constexpr unsigned kChains = 8;
  static void push(const Chain& c) noexcept {
    std::uintptr_t pushed = push_remote(c.page, c.first, c.last, c.count);
    if (STRATA_UNLIKELY(c.page->in_full().load(std::memory_order_seq_cst)))
      remote_free_into_full(c.first, c.page, pushed);
  }
  unsigned open_ = 0;  // bit i: chains_[i] holds a chain (no batch of an owner's own objects pays more)
  Chain chains_[kChains];
};

// The quarantine is a ring filled in order; the objects leave it a batch at
// a time, the oldest kDrainBatch when the ring reaches them, so a free pays
// no call and the releases share one loop (an object waits for between
// kQuarantineSlots - kDrainBatch and kQuarantineSlots later frees).
constexpr std::size_t kRing = sizeof PerThreadHeap::quarantine / sizeof PerThreadHeap::quarantine[0];
constexpr std::size_t kDrainBatch = kRing < 32 ? kRing : 32;
static_assert(kRing % kDrainBatch == 0);

// Releases the batch at `from`, which the next frees fill, each object to
// the front of its block's free list, in a random order (cfg::kRandomSlots):
// the k-th released is entry ((start + k * stride) % kDrainBatch) ^ flip,
// with an odd stride (so every entry once), start, stride and flip from one
// random word; malloc hands a block's objects out in that order reversed.
// No branch depends on a random bit: the former choice per object (first or
// second place on the list) was mispredicted half the time
// (docs/benchmarks-choices.md, "Quarantine drain order").
static_assert((kDrainBatch & (kDrainBatch - 1)) == 0, "masks, and odd strides visit every entry");
__attribute__((noinline)) void drain_quarantine(PerThreadHeap* heap, std::size_t from) noexcept {
  constexpr std::size_t kMask = kDrainBatch - 1;
  void** batch = &heap->quarantine[from];
  // A batch is full or empty: the ring fills each from its start (a flush
  // starts it again at 0) and drains it whole. The byte bound's early drains
  // leave empty ones behind.
  if (!batch[0]) return;
  std::uint64_t r = cfg::kRandomSlots ? heap->next_random() : 0;
  std::size_t i = r & kMask, stride = ((r >> 16) & kMask) | 1, flip = (r >> 32) & kMask;
  RemoteChains remote;
  for (std::size_t k = 0; k < kDrainBatch; ++k, i = (i + stride) & kMask) {
    void*& entry = batch[i ^ flip];
    void* oldest = entry;
    entry = nullptr;
    auto* seg = reinterpret_cast<SmallSegment*>(segment_of(oldest));
    Page* page = seg->page_of(oldest);
    auto* b = static_cast<FreeBlock*>(oldest);
    if (STRATA_LIKELY(seg->header.owner == heap)) {
      heap->quarantine_bytes -= page->block_size;
      check_leaving_quarantine(oldest, page, page->block_size);
      heap->push_local_placed(page, b, false);
    } else {
      std::size_t slot = shared_slot_size(page);
      heap->quarantine_bytes -= static_cast<std::uint32_t>(slot);
      check_leaving_quarantine(oldest, page, slot);
      remote.add(page, b);
    }
  }
  remote.push_all();
}

// The ring has come round to the batch at heap->quarantine_next: it leaves,
// and while the ring holds more than cfg::kQuarantineBytes, the next oldest
// batches too, all but the newest.
void drain_due(PerThreadHeap* heap) noexcept {
  std::size_t from = heap->quarantine_next;
  drain_quarantine(heap, from);
  for (std::size_t k = 1; k + 1 < kRing / kDrainBatch && heap->quarantine_bytes > cfg::kQuarantineBytes; ++k)
    drain_quarantine(heap, (from + k * kDrainBatch) % kRing);
}

// Files `object` (a slot of `slot` bytes) in the ring; true when the ring
// has come round to a batch to drain (at heap->quarantine_next).
bool file_in_quarantine(PerThreadHeap* heap, void* object, std::size_t slot) noexcept {
  std::size_t next = heap->quarantine_next;
  heap->quarantine[next] = object;  // drained before the ring came here
  // One add to memory: as a load, add and store GCC took a register more,
  // which the fast free then saved and restored.
#if defined(__x86_64__)
  asm("addl %1, %0" : "+m"(heap->quarantine_bytes) : "r"(static_cast<std::uint32_t>(slot)));
#else
  heap->quarantine_bytes += static_cast<std::uint32_t>(slot);
#endif
  next = (next + 1) % kRing;
  heap->quarantine_next = static_cast<std::uint32_t>(next);
  return next % kDrainBatch == 0;
}

// The quarantine of threads without a heap: a thread that only frees (a
// consumer, as bench/malloc prodcons's) or whose exit gave its heap up, and
// the objects an exiting thread's quarantine still held. Shared, and without
// a lock (fork-safe): the n-th such free takes an entry of a ring and the
// object that entry held leaves. Taken in order, the entries would hand the
// objects to their owners' remote lists in the order they were freed, and
// malloc would give them back in exactly that order reversed; so with
// cfg::kRandomSlots each round of the ring visits every group of kDrainBatch
// entries in an order of its own (drain_quarantine's walk: an odd stride, a
// start and a xor mask, drawn from the round's number keyed with the secret,
// a few instructions a free): every object still waits for
// kSharedRing - kDrainBatch + 1 to kSharedRing + kDrainBatch - 1 later frees,
// and leaves its group in a random order. No extra atomic operation.
constexpr std::size_t kSharedRing = cfg::kQuarantineSlots > 0 ? cfg::kQuarantineSlots : 1;
constinit std::atomic<std::size_t> g_shared_next{0};
constinit std::atomic<void*> g_shared_quarantine[kSharedRing] = {};

[[maybe_unused]] __attribute__((always_inline)) inline std::size_t shared_entry(std::size_t n) noexcept {
  std::size_t i = n % kSharedRing;
  if constexpr (!cfg::kRandomSlots || kSharedRing < kDrainBatch) {
    return i;
  } else {
    constexpr std::size_t kMask = kDrainBatch - 1;
    std::uint64_t r = ((n / kSharedRing) ^ g_heap_secret) * 0x9e3779b97f4a7c15;  // the round's draw
    std::size_t stride = ((r >> 40) & kMask) | 1, start = (r >> 48) & kMask, flip = (r >> 56) & kMask;
    return (i & ~kMask) + ((((i & kMask) * stride + start) & kMask) ^ flip);
  }
}

// acq_rel: the releasing thread sees the slot as the freeing thread left it.
[[maybe_unused]] __attribute__((always_inline)) inline void quarantine_shared(void* object) noexcept {
  std::size_t n = g_shared_next.fetch_add(1, std::memory_order_relaxed);
  void* oldest = g_shared_quarantine[shared_entry(n)].exchange(object, std::memory_order_acq_rel);
  if (!oldest) return;
  auto* seg = reinterpret_cast<SmallSegment*>(segment_of(oldest));  // the caller has no heap: always remote
  Page* page = seg->page_of(oldest);
  check_leaving_quarantine(oldest, page, shared_slot_size(page));
  push_remote_free(page, static_cast<FreeBlock*>(oldest));
}

[[maybe_unused]] void quarantine(PerThreadHeap* heap, void* object, std::size_t slot) noexcept {
  if (heap == &g_no_heap) return quarantine_shared(object);
  if (file_in_quarantine(heap, object, slot)) drain_due(heap);
}

// Objects still quarantined when their thread or the process ends were never
// reused, so nothing else looks at them: a write after free there is seen here.
[[maybe_unused]] void verify_quarantined(void* slot) noexcept {
  if constexpr (!cfg::kZeroOnFree) return;
  if (slot && !quarantined_slot_is_intact(slot)) report_misuse("write after free of", slot);
}
[[maybe_unused]] void verify_quarantine(PerThreadHeap* heap) noexcept {
  for (void* slot : heap->quarantine) verify_quarantined(slot);
}
// At the process's end, while other threads may still free into it: every
// object taken out first (no other thread releases it then), then put back.
[[maybe_unused]] void verify_shared_quarantine() noexcept {
  void* taken[kSharedRing];
  for (std::size_t i = 0; i < kSharedRing; ++i) taken[i] = g_shared_quarantine[i].exchange(nullptr, std::memory_order_acq_rel);
  for (void* slot : taken) verify_quarantined(slot);
  for (void* slot : taken)
    if (slot) quarantine_shared(slot);
}

// small_live_object's verdict, for the owner's common case in the checks its
// fast free makes in every build (a slot start, below the bump pointer, not
// tagged freed); everything else gets the full checks.
bool owner_frees_live_slot(const Page* page, const void* p) noexcept {
  return page->is_slot_start(p) && static_cast<const char*>(p) < page->bump &&
         static_cast<const FreeBlock*>(p)->tag != freed_tag(page);
}
// The same for another thread's object, by what a freeing thread may read
// (`slot`: shared_slot_size): the block's end first (the tag of a slot start
// past the last slot would be read from the guard page), then the default
// build's remote free checks (the shared slot magic, 0 for a block not in
// use, and the tag).
bool other_frees_live_slot(const Page* page, const void* p, std::size_t slot) noexcept {
  auto offset = reinterpret_cast<std::uintptr_t>(p) & (cfg::kPageSize - 1);
  return offset + slot <= kBlockObjectBytes && passes_free_checks(page, p);
}
}  // namespace

void* hardened_live_object(Page* page, void* p, bool owner, Use use) noexcept {
  if (STRATA_LIKELY(owner ? owner_frees_live_slot(page, p) : other_frees_live_slot(page, p, shared_slot_size(page))))
    return p;
  return small_live_object(page, p, owner, use);
}

namespace {

// A thread that frees before it ever allocates (a consumer) takes a heap
// here, for its own quarantine ring: the shared ring costs every such free
// two atomic operations on lines all those threads share. Not once its heap
// is given up (thread exit): its last frees go to the shared ring.
PerThreadHeap* freeing_heap() noexcept {
  PerThreadHeap* heap = tl_heap;
  if (STRATA_LIKELY(heap != &g_no_heap) || cfg::kQuarantineSlots == 0 || tl_heap_given_up) return heap;
  int saved = errno;  // free never sets errno
  heap = claim_thread_heap();
  errno = saved;
  return heap ? heap : &g_no_heap;
}

// The tail word and the slack's first word (cfg::kCanaryBytes); `slot`: as
// tail_of's.
// Returns the recorded size (cfg::kCanaryBytes > 0; else 0).
__attribute__((always_inline)) inline std::size_t check_canary(void* object, std::size_t slot, const void* p) noexcept {
  if constexpr (cfg::kCanaryBytes > 0) {
    std::size_t size = recorded_size(object, slot, p);
    if (!slack_is_zero(object, slot, size)) report_misuse("heap overflow past", p);
    return size;
  }
  return 0;
}

// Every small free but the fast one in hardened_free.
__attribute__((noinline)) void free_small(SmallSegment* seg, void* p) noexcept {
  // An aligned block takes any pointer into an object for the object: not
  // an unaligned one (the fast free checks no alignment inside the gate).
  if (reinterpret_cast<std::uintptr_t>(p) % cfg::kMinAlign != 0) report_invalid(Use::kFree, p);
  PerThreadHeap* heap = freeing_heap();
  Page* page = seg->page_of(p);
  bool owner = seg->header.owner == heap;
  void* object = hardened_live_object(page, p, owner, Use::kFree);
  std::size_t slot = owner ? page->block_size : shared_slot_size(page);
  check_canary(object, slot, p);
  if constexpr (cfg::kZeroOnFree) zero_slot(object, slot);
  static_cast<FreeBlock*>(object)->tag = freed_tag(page);
  if constexpr (cfg::kQuarantineSlots > 0) {
    quarantine(heap, object, slot);
  } else {
    release_small(heap, object, cfg::kRandomSlots && heap->random_bit());
  }
}

// Out of line, so that the common path saves no registers for calls.
__attribute__((noinline)) void* allocate_small_slow(std::size_t cls, std::size_t size) noexcept {
  PerThreadHeap* heap = thread_heap();
  void* p = heap ? heap->malloc_small(cls) : nullptr;
  if (!p) {
    errno = ENOMEM;
    return nullptr;
  }
  return hand_out(p, reinterpret_cast<SmallSegment*>(segment_of(p))->page_of(p), size);
}
__attribute__((noinline)) void* allocate_not_small(std::size_t size) noexcept {
  if (cfg::kNoAccessZero && size == 0) {
    if (void* p = zero_area_allocate()) return p;
    PerThreadHeap* heap = thread_heap();  // the area is used up: a slot as any small size
    void* p = heap ? heap->malloc_small(kClassIndex[size_slot(0)]) : nullptr;
    if (!p) {
      errno = ENOMEM;
      return nullptr;
    }
    return hand_out(p, reinterpret_cast<SmallSegment*>(segment_of(p))->page_of(p), 0);
  }
  bool zeroed;
  return allocate_big(size, cfg::kMinAlign, &zeroed);
}
}  // namespace

void* hardened_allocate(std::size_t size) noexcept {
  // With cfg::kNoAccessZero, size 0 wraps around to the slow side too.
  constexpr std::size_t kFirst = cfg::kNoAccessZero ? 1 : 0;
  if (STRATA_UNLIKELY(size - kFirst > cfg::kSmallMax - cfg::kCanaryBytes - kFirst)) return allocate_not_small(size);
  PerThreadHeap* heap = tl_heap;
  const std::size_t slot = size_slot(size);
  Page* page = heap->by_size[slot];
  void* p = take_slot(page);
  if (STRATA_UNLIKELY(!p)) return allocate_small_slow(kClassIndex[slot], size);
  return hand_out(p, page, size);
}

namespace {
// The small segments the calling thread's frees found in the area map, by
// segment number, direct-mapped: small segments are never unmapped, so a
// free there needs no lookup. One entry was not enough: a program whose
// small objects span a few segments (bench/malloc churn's default window)
// freed into another segment than the last nearly every time, each free then
// paying the area map and a mispredicted branch
// (docs/benchmarks-choices.md, "Known segments").
constexpr std::size_t kKnownSegments = 8;
thread_local constinit std::uintptr_t tl_known_segments[kKnownSegments] __attribute__((tls_model("initial-exec"))) = {};
std::uintptr_t& known_segment(std::uintptr_t base) noexcept {
  return tl_known_segments[(base >> cfg::kSegmentShift) % kKnownSegments];
}

// A free outside the known segments (or of an unaligned pointer). Nothing is
// read before the area map vouches for the segment: a pointer strata never
// returned is reported, not a fault.
__attribute__((noinline)) void free_in_unknown_segment(void* p) noexcept {
  if (!p) return;
  std::uintptr_t base = segment_base(p);
  if (cfg::kNoAccessZero && in_zero_area(p)) return zero_area_free(p, Use::kFree);
  if (reinterpret_cast<std::uintptr_t>(p) % cfg::kMinAlign != 0) report_invalid(Use::kFree, p);
  // Outside the area map: a freed huge object (in a region or the cache: a
  // double free) or no object of ours; check_outside_gate reports which.
  if (!area_contains(reinterpret_cast<void*>(base))) check_outside_gate(p, Use::kFree);
  SegmentHeader* seg = segment_of(p);
  if (seg->kind != SegmentKind::kSmall) return deallocate_other(p, reinterpret_cast<SmallSegment*>(seg)->page_of(p));
  known_segment(base) = base;
  hardened_free(p);  // the fast path, now that the segment is known
}

// The fast free's last steps when the ring has come round to a batch.
__attribute__((noinline)) void zero_then_drain(PerThreadHeap* heap, void* object, std::size_t size) noexcept {
  if (size > kInlineZeroing) zero_past_tag(object, size);
  drain_due(heap);
}
}  // namespace

// ---- The zero area (cfg::kNoAccessZero) ------------------------------------
// Reserved inaccessible (no memory, no commit charge), handed out 16 bytes
// at a time and never reused; a bit per address says it was freed (its map:
// address space too, a page touched per 512 KiB of the area handed out).
namespace {
constexpr std::size_t kZeroAddresses = cfg::kZeroAreaBytes / cfg::kMinAlign;
constinit std::atomic<char*> g_zero_area{nullptr};
constinit std::atomic<std::uint64_t*> g_zero_freed{nullptr};
constinit std::atomic<std::size_t> g_zero_next{0};
constinit std::atomic<bool> g_zero_failed{false};

// The area, reserved at the first malloc(0) (a racing thread's spare
// reservation is given back); nullptr when the kernel says no.
char* zero_area() noexcept {
  if (char* area = g_zero_area.load(std::memory_order_acquire)) return area;
  if (g_zero_failed.load(std::memory_order_relaxed)) return nullptr;
  auto* area = static_cast<char*>(platform::reserve_pages(cfg::kZeroAreaBytes));
  auto* map = static_cast<std::uint64_t*>(platform::map_pages(kZeroAddresses / 8, platform::Swap::kUnreserved));
  if (!area || !map) {
    if (area) platform::unmap_pages(area, cfg::kZeroAreaBytes);
    if (map) platform::unmap_pages(map, kZeroAddresses / 8);
    g_zero_failed.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  std::uint64_t* no_map = nullptr;
  if (!g_zero_freed.compare_exchange_strong(no_map, map, std::memory_order_acq_rel))
    platform::unmap_pages(map, kZeroAddresses / 8);
  char* none = nullptr;
  if (g_zero_area.compare_exchange_strong(none, area, std::memory_order_acq_rel)) return area;
  platform::unmap_pages(area, cfg::kZeroAreaBytes);
  return none;
}
}  // namespace

void* zero_area_allocate() noexcept {
  char* area = zero_area();
  if (!area) return nullptr;
  std::size_t n = g_zero_next.fetch_add(1, std::memory_order_relaxed);
  if (n >= kZeroAddresses) return nullptr;
  return area + n * cfg::kMinAlign;
}

bool in_zero_area(const void* p) noexcept {
  char* area = g_zero_area.load(std::memory_order_acquire);
  return area && static_cast<std::size_t>(static_cast<const char*>(p) - area) < cfg::kZeroAreaBytes;
}

void zero_area_free(void* p, Use use) noexcept {
  auto offset = static_cast<std::size_t>(static_cast<char*>(p) - g_zero_area.load(std::memory_order_acquire));
  std::size_t n = offset / cfg::kMinAlign;
  if (offset % cfg::kMinAlign != 0 || n >= g_zero_next.load(std::memory_order_relaxed)) report_invalid(use, p);
  std::uint64_t bit = std::uint64_t{1} << (n % 64);
  std::uint64_t* word = g_zero_freed.load(std::memory_order_acquire) + n / 64;
  if (use != Use::kFree) {  // realloc and malloc_usable_size: only checked
    if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit) report_freed(use, p);
    return;
  }
  if (__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit) report_freed(use, p);
}

namespace {
// Could a small object of `usable` bytes in a slot of `slot` bytes have been
// allocated with `size`? realloc may keep an object in place down to half
// its size; and every size whose class is this one (malloc(1) in a 16-byte
// class).
bool small_size_fits(std::size_t slot, std::size_t usable, std::size_t size) noexcept {
  if (size > usable) return false;
  if (size >= usable / 2) return true;
  return size <= cfg::kSmallMax - cfg::kCanaryBytes && kClassSize[class_of(size + cfg::kCanaryBytes)] == slot;
}

// A sized free the fast free could not take: the full size check, then free.
[[maybe_unused]] __attribute__((noinline)) void check_size_then_free(void* p, std::size_t request) noexcept {
  hardened_check_size(p, request, 0);
  hardened_free(p);
}

// The free of a live slot in a known segment, inline, by its owner or by
// another thread that has a heap (a consumer's); everything else in
// free_in_unknown_segment or free_small. A leaf but for its last act
// (memset, or zero_then_drain every kDrainBatch frees): no register is saved.
// What the fast free hands on: the full checks (and, sized, the size check
// first) of an object in a small segment, or of one elsewhere (the known
// segments and the area map decide what it is).
template <bool kSized>
__attribute__((always_inline)) inline void free_small_checked(SmallSegment* seg, void* p,
                                                              [[maybe_unused]] std::size_t request) noexcept {
  if constexpr (kSized) return check_size_then_free(p, request);
  return free_small(seg, p);
}
template <bool kSized>
__attribute__((always_inline)) inline void free_elsewhere_checked(void* p,
                                                                  [[maybe_unused]] std::size_t request) noexcept {
  if constexpr (kSized) return check_size_then_free(p, request);
  return free_in_unknown_segment(p);
}

// kSized (free_sized, sized operator delete, cfg::kCheckSizes): `request`
// checked against the size the tail word records, which the canary's check
// decodes anyway; the other cases take the full size check first.
template <bool kSized>
__attribute__((always_inline)) inline void free_fast(void* p, [[maybe_unused]] std::size_t request) noexcept {
  std::uintptr_t base = segment_base(p);
  auto* seg = reinterpret_cast<SmallSegment*>(base);
  PerThreadHeap* heap = tl_heap;
  // Inside the free gate (the segment range, every header of which can be
  // read) the owner's match proves a small segment of the thread's, and
  // another's segment says its kind; outside it (NULL, a segment mapped past
  // the range), the known segments, else the area map. Alignment: a slot
  // start is aligned, and free_small checks the rest.
  if (STRATA_UNLIKELY(!in_free_gate(p)) &&
      (reinterpret_cast<std::uintptr_t>(p) % cfg::kMinAlign != 0 || base != known_segment(base)))
    return free_elsewhere_checked<kSized>(p, request);
  Page* page = seg->page_of(p);
  if (!cfg::kZeroOnFree || cfg::kQuarantineSlots == 0 || (kSized && cfg::kCanaryBytes == 0)) {
    if (seg->header.owner != heap && seg->header.kind != SegmentKind::kSmall)
      return free_elsewhere_checked<kSized>(p, request);
    return free_small_checked<kSized>(seg, p, request);
  }
  // Only the owner reads the block's bump pointer, tags and descriptor;
  // another thread what a remote free reads. A thread without a heap
  // (&g_no_heap, which owns nothing) claims one in free_small.
  std::size_t size;
  if (STRATA_LIKELY(seg->header.owner == heap)) {
    if (STRATA_UNLIKELY(!owner_frees_live_slot(page, p))) return free_small_checked<kSized>(seg, p, request);
    size = page->block_size;
  } else {
    if (STRATA_UNLIKELY(seg->header.kind != SegmentKind::kSmall)) return free_elsewhere_checked<kSized>(p, request);
    size = shared_slot_size(page);
    if (STRATA_UNLIKELY(heap == &g_no_heap || !other_frees_live_slot(page, p, size)))
      return free_small_checked<kSized>(seg, p, request);
  }
  std::size_t recorded = check_canary(p, size, p);
  if constexpr (kSized) {
    if (!small_size_fits(size, recorded, request)) report_misuse("wrong size in sized free of", p);
  }
  auto* b = static_cast<FreeBlock*>(p);
  const Page* tag = freed_tag(page);
  bool drain = file_in_quarantine(heap, p, size);  // first: fewer values live across the zeroing
  if (size <= kInlineZeroing) {
    zero_small_slot(p, size);
  } else {
    b->next = nullptr;
  }
  b->tag = tag;
  if (drain) return zero_then_drain(heap, p, size);
  if (size > kInlineZeroing) zero_past_tag(p, size);
}
}  // namespace

void hardened_free(void* p) noexcept { free_fast<false>(p, 0); }

void hardened_free_sized(void* p, std::size_t size) noexcept { free_fast<cfg::kCheckSizes>(p, size); }

namespace {
// A sized free of a live small object in a small segment free may read (in
// the free gate, or one the thread's frees know): the size checked against
// the slot alone (free's own checks follow). nullptr-free; false when the
// full checks must decide.
bool checked_size_in_known_segment(void* p, std::size_t size) noexcept {
  std::uintptr_t base = segment_base(p);
  if (reinterpret_cast<std::uintptr_t>(p) % cfg::kMinAlign != 0) return false;
  if (in_free_gate(p) ? segment_of(p)->kind != SegmentKind::kSmall : base != known_segment(base)) return false;
  Page* page = reinterpret_cast<SmallSegment*>(base)->page_of(p);
  if (!page->is_slot_start(p) || static_cast<const FreeBlock*>(p)->tag == freed_tag(page)) return false;
  std::size_t usable = page->block_size - cfg::kCanaryBytes;
  if constexpr (cfg::kCanaryBytes > 0) usable = recorded_size(p, page->block_size, p);
  if (!small_size_fits(page->block_size, usable, size)) report_misuse("wrong size in sized free of", p);
  return true;
}
}  // namespace

void hardened_check_size(void* p, std::size_t size, std::size_t align) noexcept {
  if (!p) return;
  if (align <= cfg::kMinAlign && checked_size_in_known_segment(p, size)) return;
  if (cfg::kNoAccessZero && in_zero_area(p)) {
    if (size != 0) report_misuse("wrong size in sized free of", p);
    return;
  }
  if (reinterpret_cast<std::uintptr_t>(p) % cfg::kMinAlign != 0 ||
      !area_contains(reinterpret_cast<void*>(segment_base(p))))
    report_invalid(Use::kFree, p);
  std::size_t usable = checked_usable_size(p, Use::kFree);  // checks p itself
  if (align > cfg::kMinAlign && reinterpret_cast<std::uintptr_t>(p) % align != 0)
    report_misuse("wrong alignment in aligned free of", p);
  // Small aligned objects sit in bigger slots, so only the upper bound holds
  // for them (large and huge ones are placed at their alignment, no bigger).
  bool fits;
  if (segment_of(p)->kind != SegmentKind::kSmall) {
    fits = size <= usable && size >= usable / 2;
  } else if (align > cfg::kMinAlign) {
    fits = size <= usable;
  } else {
    fits = small_size_fits(reinterpret_cast<SmallSegment*>(segment_of(p))->page_of(p)->block_size, usable, size);
  }
  if (!fits) report_misuse("wrong size in sized free of", p);
}

std::size_t hardened_usable_size(void* object, const Page* page, const void* p) noexcept {
  return static_cast<std::size_t>(static_cast<char*>(object) + recorded_size(object, page->block_size, p) -
                                  static_cast<const char*>(p));
}

bool hardened_resize(void* p, std::size_t have, std::size_t size) noexcept {
  Page* page = reinterpret_cast<SmallSegment*>(segment_of(p))->page_of(p);
  std::size_t room = page->block_size - cfg::kCanaryBytes;
  if ((page->flags & kPageInterior) || size > room || size < room / 2) return false;
  // The bytes given up become slack, which must be zero.
  if constexpr (cfg::kCanaryBytes > 0) {
    if (size < have) std::memset(static_cast<char*>(p) + size, 0, have - size);
    if constexpr (!cfg::kZeroOnFree) clear_slack(p, page, size);
    // Only with a canary: without one the tail word is the object's last
    // word, which this overwrote (the model test's corrupted objects).
    record_size(p, page, size);
  }
  return true;
}

// The thread's end: its quarantined objects wait on in the shared quarantine
// (released at once, the last ones freed would be reusable at once).
void quarantine_flush(PerThreadHeap* heap) noexcept {
  if constexpr (cfg::kQuarantineSlots == 0) return;  // never called: the default build has no quarantine
  verify_quarantine(heap);
  for (void*& slot : heap->quarantine) {
    if (slot) quarantine_shared(slot);
    slot = nullptr;
  }
  heap->quarantine_bytes = 0;
  heap->quarantine_next = 0;  // batches fill from their start (drain_quarantine)
}

// The process's end: the exiting thread's quarantine (other threads may still
// run, and own theirs) and the shared one.
__attribute__((destructor)) static void verify_quarantine_at_exit() noexcept {
  if constexpr (cfg::kQuarantineSlots > 0) {
    if (tl_heap != &g_no_heap) verify_quarantine(tl_heap);
    verify_shared_quarantine();
  }
}

}  // namespace strata::malloc_detail
