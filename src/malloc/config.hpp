// libstrata's tunables: every number that shapes the allocator, in one place.
// Changing one of these changes behaviour, never correctness (the static_asserts
// at the bottom hold the invariants the code relies on).
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::malloc_config {

// ---- Address-space layout -------------------------------------------------
// Every object lives in a segment: an area of kSegmentSize bytes aligned to
// kSegmentSize, with its header at the start. free() finds the header of any
// pointer p by masking: (p - 1) & ~(kSegmentSize - 1). This is Vam's "area"
// (16 MB there, 4 MiB here) and the BIBOP lookup that lets small objects go
// without a header.
inline constexpr std::size_t kSegmentShift = 22;  // 4 MiB
inline constexpr std::size_t kSegmentSize = std::size_t{1} << kSegmentShift;

// A segment of small objects is cut into page blocks ("pages", Vam's page
// blocks) of kPageSize bytes, each holding objects of one size class. Page 0
// holds the segment header, so every page block starts kPageSize-aligned and
// power-of-two classes are naturally aligned. Fresh memory is bump-allocated,
// so a big page block costs RSS only for the OS pages actually reached.
inline constexpr std::size_t kPageShift = 16;  // 64 KiB
inline constexpr std::size_t kPageSize = std::size_t{1} << kPageShift;
inline constexpr std::size_t kPagesPerSegment = kSegmentSize / kPageSize;

// ---- Size classes ---------------------------------------------------------
// Small objects: exact fit 16 bytes apart up to kExactMax. (Vam spaces classes
// 8 bytes apart; on x86-64 max_align_t is 16 and compilers assume malloc and
// operator new results are 16-byte aligned, so 16 is the finest spacing that
// keeps every object aligned.) Above kExactMax: kClassesPerDoubling classes per
// power of two (12.5% apart) up to kSmallMax.
inline constexpr std::size_t kMinAlign = 16;
inline constexpr std::size_t kExactMax = 512;
inline constexpr std::size_t kClassesPerDoubling = 8;
inline constexpr std::size_t kSmallMax = 8 * 1024;

// A full page block goes back to the front of its class's available list
// once this fraction of it has been freed (Vam: at the first free).
inline constexpr std::size_t kUnfullFraction = 8;
// Full blocks a refill examines for remote frees at most (round robin).
inline constexpr std::size_t kFullScanBudget = 32;

// ---- Large and huge objects -----------------------------------------------
// Large objects (kSmallMax < size <= kLargeMax) are carved from shared
// multi-page regions with a 16-byte boundary-tag header: segregated good-fit
// bins ~12.5% apart, splitting, immediate coalescing (Vam §3.1, Large Objects).
// Huge objects (> kLargeMax) are mapped straight from the OS.
inline constexpr std::size_t kLargeMax = 2 * 1024 * 1024;
// Number of independently locked large-object arenas; a thread uses arena
// (thread heap number % kLargeArenas).
inline constexpr std::size_t kLargeArenas = 4;
// Large-object regions ask the kernel for transparent huge
// pages (MADV_HUGEPAGE; this matters where THP is "madvise", Debian's default):
// one fault per 2 MiB instead of 512. stress2 (issue 20) took 121 K faults
// against mimalloc 3's 340 (which asks the same of its arenas); with this
// 70-77 K, for about 4% more peak RSS. Small segments do not ask: their blocks
// are bump-touched, and a huge page there tripled threadsmall's RSS. Nor do
// huge objects: it changed no measured figure, and a big buffer that is
// touched sparsely would pay 2 MiB a touch.
inline constexpr bool kHugePagesForLarge = true;
// The huge page (x86-64's 2 MiB). In a region that huge pages back, calloc
// faults in each huge page's extent whole, once (large_heap.cpp,
// populate_clean): the kernel gives the whole extent at the first touch
// anyway, and later callocs of clean memory there need no system call.
inline constexpr std::size_t kHugePageSize = 2 * 1024 * 1024;
// Only once the large arenas together hold this many regions: a huge page
// is faulted in whole at its first touch, which a program with a few MiB of
// large objects, touched sparsely, pays in RSS (git's pack-objects, and
// threadchurn with every region advised; docs/benchmarks-malloc.md, "git's
// memory").
inline constexpr std::size_t kHugePagesFromRegion = 8;
// A thread frees another arena's large chunk without its lock, onto the
// arena's deferred list, while that list holds less than this.
inline constexpr std::size_t kLargeDeferredBytes = 1024 * 1024;
// glibc's dynamic mmap threshold, for what it catches: glibc unmaps a freed
// chunk of its mmap threshold (128 KiB at first) or more, so that a read of
// it faults, and raises the threshold to that chunk's size, up to 32 MiB. A
// large or huge object of kEraseFrom bytes or more has its whole pages
// discarded on free (they read as zeros: its contents do not leak), and
// kEraseFrom rises to 1/8 above its size, up to kEraseUpTo: a program's first
// frees of ever bigger objects pay a system call and the page faults of their
// reuse, at most ~45 of them (12.5% a step from 128 KiB to 32 MiB), then no more.
inline constexpr std::size_t kEraseFrom = 128 * 1024;
inline constexpr std::size_t kEraseUpTo = 32 * 1024 * 1024;

// ---- Returning memory (Vam §3.6, with hysteresis) ---------------------------
// A thread heap keeps up to this many empty page blocks resident (dirty) before
// it discards the oldest with madvise: a malloc/free loop that empties and
// refills a page block never pays a system call and a page fault per turn.
inline constexpr std::size_t kRetainedEmptyPages = 8;
// A heap that discards blocks and soon has to fault fresh ones in again (thread
// churn, a working set that breathes) raises its own limit, up to this many
// blocks; overflows lower it again (kRetainLowerEvery), so a heap that only frees (a
// burst) keeps kRetainedEmptyPages. (64 capped stress2, issue 20, whose heaps
// reached 45 and discarded 1 700 blocks a run; 256: limits up to ~230, 36-40 K
// faults a run against 43 K, but larson's peak RSS once 1.03x mimalloc 3's;
// 128: 41.5 K faults, up to 8 MiB a heap kept.)
inline constexpr std::size_t kRetainedEmptyMax = 128;
// While a heap's limit is raised above kRetainedEmptyPages, an overflow of
// its LRU discards the kPurgeBatch oldest blocks at once, adjacent blocks in
// one madvise (bench/malloc's stress2, issue 20: 1 900 calls of 64 KiB a
// run, each a TLB shootdown on every CPU the process runs on; batches of 8
// merged about a sixth of them away). The LRU then holds up to kPurgeBatch
// - 1 blocks less than the limit, never more (an LRU allowed to run over the
// limit instead raised threadchurn's peak RSS). At the lowest limit, one
// block a time.
inline constexpr std::size_t kPurgeBatch = 8;
// The limit drops by one every this many overflows. Lowering at every overflow
// undid the raises of a program that allocates a batch of blocks and frees it
// all, turn after turn (bench/malloc's `simple`: 1.70x mimalloc 3's time, 0.81x
// the fixed limit of 8's; the fixed 64 measured 1.07x).
inline constexpr std::size_t kRetainLowerEvery = 4;
// Purging on a clock (jemalloc's decay, mimalloc's purge_delay): an empty
// block beyond the retain limit is discarded only once it has stayed empty
// this many milliseconds (STRATA_PURGE_DELAY_MS overrides it; 0 discards at
// once, the old rule). The heap looks at its oldest blocks when a block
// empties and at every refill, so a burst that follows a burst reuses the
// first one's blocks warm, and a burst that is not followed goes back at the
// heap's first refill or emptied block after the delay. (Chosen between the
// Vec-growth faults a short delay saves and the huge cache a long one keeps:
// docs/benchmarks-malloc.md, "Purging on a clock".)
inline constexpr std::uint32_t kPurgeDelayMs = 300;
// A class's front block stays when it empties (hysteresis: a loop that
// allocates and frees one object keeps it). One found empty at two looks of
// its heap (at refills, at least kIdleFrontScanMs apart) is idle: its pages
// are discarded and it starts afresh, still the front. Kept resident, the
// blocks of classes a program used only for a while held their pages to the
// end; retired to the empty blocks instead, other classes took them, and the
// class that came back faulted a fresh block in (docs/benchmarks-malloc.md,
// "Where the real programs' extra memory is").
inline constexpr std::uint32_t kIdleFrontScanMs = 10;
// A class's first objects, while it has no block, take a slot of a bigger
// class's front block on a page already resident (PerThreadHeap::borrow_slot):
// a program that makes a handful of objects of a size touches no page for
// them. Past this many a heap's class takes blocks of its own.
inline constexpr std::uint32_t kBorrowedSlotsMax = 16;
inline constexpr std::uint32_t kPurgeDelayMaxMs = 60 * 60 * 1000;
// However young, at most this many empty blocks beyond the retain limit wait
// for the clock (64 MiB a heap): a thread that frees a burst and then sleeps
// holds no more than this until it runs again.
inline constexpr std::size_t kDelayedEmptyMax = 1024;
// A full block whose last object another thread frees stays resident for its
// owner (who collects it warm at a refill) while the owner is active: it has
// refilled within the last kRemoteKeepMs milliseconds, and fewer than
// kRemoteKeepLag times since the block went full. Otherwise (the owner is idle,
// gone, or long past this block: a burst freed by another thread) the freeing
// thread discards the block at once. A consumer that empties blocks in bursts
// while its producer waits for a CPU must not discard them (bench/malloc's
// prodcons: 8 500 madvise calls and 157 K faults a run with a count since the
// last refill instead).
inline constexpr std::uint32_t kRemoteKeepMs = 50;
inline constexpr std::uint32_t kRemoteKeepLag = 128;
// Empty blocks the heaps of exited threads keep resident, in all, for the
// threads that adopt those heaps (a thread-churn program's next threads start
// warm); beyond this an exiting thread discards its empty blocks.
inline constexpr std::size_t kAbandonedRetainedMax = 1024;
// A large arena discards the pages inside its free chunks once this many bytes
// of free chunks are dirty (not yet discarded), the biggest chunks first, down
// to kLargeDirtyKept: what is left stays warm for the next large callocs. A
// thread-churn program frees its large objects at each thread's end and
// callocs them again in the next thread (bench/malloc's stress2, issue 20:
// 32/0 MiB discarded 715 MiB a run and faulted 64 K pages in again, 64/32 MiB
// 128 MiB and 43 K, the same peak RSS).
inline constexpr std::size_t kLargeDirtyLimit = 64 * 1024 * 1024;
inline constexpr std::size_t kLargeDirtyKept = 32 * 1024 * 1024;
// Each large arena keeps this many completely free regions mapped (their
// pages discarded by the dirty limit like any free chunk, so this bounds
// address space, not RSS).
inline constexpr std::size_t kLargeSpareRegions = 2;
// An arena that has to map a region again after unmapping one keeps one more
// spare, up to this many; each unmap lowers its limit again by one. (With 2
// fixed spares bench/malloc's `large` unmapped and mapped again ~20 regions a
// run, each refaulting its pages.)
inline constexpr std::size_t kLargeSpareRegionsMax = 8;
// Huge objects up to kHugeRegionObjectMax live in regions of address space
// reserved kHugeRegionBytes at a time (read-write, no swap reserved: a page
// costs memory only once touched), up to kHugeRegions of them; placing,
// growing and freeing an object there needs no system call. Bigger objects,
// and all of them when no region can be reserved, get a mapping of their own.
inline constexpr std::size_t kHugeRegionBytes = std::size_t{1} << 30;
inline constexpr std::size_t kHugeRegions = 32;
inline constexpr std::size_t kHugeRegionObjectMax = kHugeRegionBytes / 4;
// Resident pages of freed huge objects kept for reuse (bytes, in total), so
// that a program that allocates and frees big buffers in a loop does not pay
// a page fault per page each turn; beyond it the least recently freed pages
// are discarded (madvise).
inline constexpr std::size_t kHugeCacheBytes = 80 * 1024 * 1024;

// Small segments and large regions are carved from one reservation of this
// much address space (os.hpp, the segment range), so that free() tells our
// pointers from others with one subtract and compare. Read-only until carved:
// it costs no memory and no commit charge, only address space (47 bits give
// 128 TiB). Where less can be had (RLIMIT_AS, valgrind) the size halves down
// to kSegmentRangeMinBytes; segments beyond the range are mapped anywhere and
// their frees take a slow path (one bit test of the area map more).
inline constexpr std::size_t kSegmentRangeBytes = std::size_t{256} << 30;
inline constexpr std::size_t kSegmentRangeMinBytes = std::size_t{64} << 20;

// The OS page, for discarding (the real one is asked at run time; this is the
// granularity we assume for rounding and never exceeds the real one on x86-64).
inline constexpr std::size_t kOsPageSize = 4096;

// ---- Checked mode -----------------------------------------------------------
// STRATA_MALLOC_CHECKED (a build option) turns checking on for good; otherwise
// STRATA_CHECK=1 turns it on at start-up.
#ifdef STRATA_MALLOC_CHECKED
inline constexpr bool kAlwaysChecked = true;
#else
inline constexpr bool kAlwaysChecked = false;
#endif

// ---- The hardened build (libstrata-hardened.so) -------------------------------
// Each hardening policy is one bit of a compile-time set (docs/libstrata.md,
// "Checks and the hardened build"). STRATA_HARDENING, when defined, is that
// set as an expression of the policy names below (CMake's
// -DSTRATA_HARDENING=<list> joins the list with '|'; a misspelt name fails
// the build); STRATA_MALLOC_HARDENED alone turns every policy on. The
// default build compiles none of it.
namespace policy {
enum : unsigned {
  encode_free_lists = 1u << 0,
  canaries = 1u << 1,
  zero_on_free = 1u << 2,
  quarantine = 1u << 3,
  check_sizes = 1u << 4,
  random_slots = 1u << 5,
  guard_pages = 1u << 6,
  no_access_zero = 1u << 7,
  all = (1u << 8) - 1,
  none = 0,
};
}  // namespace policy
#if defined(STRATA_HARDENING)
inline constexpr unsigned kHardening = [] {
  using namespace policy;
  return static_cast<unsigned>(STRATA_HARDENING);
}();
#elif defined(STRATA_MALLOC_HARDENED)
inline constexpr unsigned kHardening = policy::all;
#else
inline constexpr unsigned kHardening = policy::none;
#endif
static_assert((kHardening & ~policy::all) == 0, "STRATA_HARDENING names a policy config.hpp lacks");
constexpr bool hardening_has(unsigned policies) noexcept { return (kHardening & policies) == policies; }
// Any policy on: malloc and free take the hardened entry points (hardened.cpp),
// a freed slot's tag is keyed with the per-process secret, and every pointer
// freed is checked in full.
inline constexpr bool kHardened = kHardening != 0;
// Free-list links stored as next ^ the link's own address ^ a per-process
// secret (safe-linking): a heap overflow cannot forge them, and a decoded link
// that leaves its block is reported.
inline constexpr bool kEncodeFreeLists = hardening_has(policy::encode_free_lists);
// A tail word ends every small slot: the request's size, keyed with the
// secret and the word's address. The bytes between the request and the tail
// (the slack; malloc(0)'s whole object) stay zero while the object lives:
// free checks the tail and the slack's first 8 bytes (overflows start
// there), so even a 1-byte overflow is seen. Small requests take a class
// this much bigger, and malloc_usable_size is the request itself.
inline constexpr std::size_t kCanaryBytes = hardening_has(policy::canaries) ? 8 : 0;
// free zeroes a small object (all but the freed tag); malloc checks that its
// first kVerifiedOnReuse bytes are still zero (a write after free) before
// handing it out, and a thread's end and the process's end check all of
// every object still quarantined.
inline constexpr bool kZeroOnFree = hardening_has(policy::zero_on_free);
inline constexpr std::size_t kVerifiedOnReuse = 64;
// Small objects freed by a thread wait in its quarantine, a ring of this many,
// before their slots can be reused; they leave it oldest first, 32 at a time
// (hardened.cpp, drain_quarantine), so each waits 224 to 256 later frees.
inline constexpr std::size_t kQuarantineSlots = hardening_has(policy::quarantine) ? 256 : 0;
// ...and hold at most about this many bytes of slots: beyond it, the drain
// releases the next oldest batches too (never the newest). Each quarantined
// slot is one malloc must take elsewhere, and with slots of a few KiB that
// spread a program's objects over about twice the blocks (git gc;
// docs/libstrata.md, "The quarantine's bytes"; the bound halved again in
// docs/benchmarks-malloc.md, "Hardening cost (issue 33, sixth round)").
inline constexpr std::size_t kQuarantineBytes = 64 * 1024;
// free_sized, sized operator delete: the size must be one the object could
// have been allocated with.
inline constexpr bool kCheckSizes = hardening_has(policy::check_sizes);
// The quarantine releases each batch in a random order (hardened.cpp,
// drain_quarantine), so the next allocation's address is not predictable
// from the last free.
inline constexpr bool kRandomSlots = hardening_has(policy::random_slots);

// malloc(0) answers with an address of a reservation no page of which can be
// read or written (hardened.cpp, the zero area), so that any access through
// it faults; each address once (free(p) is told from a second free by a bit
// of the area's map). When the area is used up, malloc(0) takes a small slot.
inline constexpr bool kNoAccessZero = hardening_has(policy::no_access_zero);
inline constexpr std::size_t kZeroAreaBytes = std::size_t{256} << 20;

// Guard pages (PROT_NONE), so that a linear overflow faults at once: the last
// OS page of every small page block (its slots end before it), one page after
// each huge object (placed right-aligned against it), and one page after each
// large object of kLargeGuardMin bytes or more (carved from its chunk). Each
// guard splits a kernel mapping, so guards stop while the process has
// kGuardMappingsMax mappings, far below vm.max_map_count (65530 by default);
// memory placed meanwhile goes unguarded.
inline constexpr bool kGuardPages = hardening_has(policy::guard_pages);
inline constexpr std::size_t kBlockGuardBytes = kGuardPages ? kOsPageSize : 0;
inline constexpr std::size_t kGuardMappingsMax = 32768;
inline constexpr std::size_t kGuardMappingsCheckEvery = 1024;  // guards set between two counts, at most
// Large objects get guards from this size on (in arenas of their own): an
// mprotect per malloc and per free is small beside the work such an object
// takes, not beside an 8 KiB one's (bench/malloc's xfree, 10% of its objects
// 8-16 KiB, ran 20x slower with a guard on each).
inline constexpr std::size_t kLargeGuardMin = 64 * 1024;
// Use after free of those large objects: free makes the first whole pages of
// an object (up to kLargeFreedProtectBytes) inaccessible, keeping their
// contents (mprotect: no page faults when the memory is reused), so that a
// read or a write there faults, and the object waits in its arena's
// quarantine, out of reuse, until kLargeQuarantineSlots later frees of the
// arena or kLargeQuarantineBytes of them have come (hardened_malloc's region
// quarantine; large_heap.cpp). Two system calls per object: bench/malloc's
// large ran 1.77x the default build's time instead of 1.38x (+28%; 0 slots
// turns it off; docs/libstrata.md, "Guard pages").
// Only the first pages, because the cost is the calls, not the range: the
// whole object made the same run 2.6x (the kernel walks every page table
// entry), guard markers over it 11x (its pages faulted in again at reuse).
inline constexpr std::size_t kLargeQuarantineSlots = kGuardPages ? 8 : 0;
inline constexpr std::size_t kLargeQuarantineBytes = 16 * 1024 * 1024;
// Quarantined chunks stay resident and out of reuse, so each byte there is a
// byte of peak RSS above the default build's: an arena quarantines at most
// 1/kLargeQuarantineShare of its live bytes, or kLargeQuarantineFloor when
// that is more (a program with a modest heap still has its last frees held
// back; git gc carried kLargeQuarantineBytes of them against far fewer live).
inline constexpr std::size_t kLargeQuarantineShare = 8;
inline constexpr std::size_t kLargeQuarantineFloor = 4 * 1024 * 1024;
inline constexpr std::size_t kLargeFreedProtectBytes = 64 * 1024;

static_assert(kPageSize % kOsPageSize == 0);
static_assert(kSegmentSize % kHugePageSize == 0 && kSegmentSize / kHugePageSize <= 4);
static_assert(kSegmentRangeBytes % kSegmentSize == 0 && kSegmentRangeMinBytes % kSegmentSize == 0);
static_assert(kSegmentRangeMinBytes <= kSegmentRangeBytes);
static_assert(kLargeFreedProtectBytes % kOsPageSize == 0);
static_assert(kLargeQuarantineFloor <= kLargeQuarantineBytes);
static_assert(kRetainedEmptyPages <= kRetainedEmptyMax);
static_assert(kLargeSpareRegions <= kLargeSpareRegionsMax);
static_assert(kLargeDirtyKept < kLargeDirtyLimit);
static_assert(kSegmentSize % kPageSize == 0 && kPagesPerSegment <= 64, "free-page mask is one word");
static_assert(kSmallMax <= kPageSize / 8, "a page block holds at least 8 objects");
static_assert(kExactMax % kMinAlign == 0 && kSmallMax % kMinAlign == 0);
static_assert(kLargeMax * 2 <= kSegmentSize, "a large region holds the largest large object with room to align it");

}  // namespace strata::malloc_config
