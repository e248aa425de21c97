// The OS layer of libstrata: segments of address space, page discarding and
// the area map, on top of strata::platform. Nothing here allocates with malloc.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "config.hpp"

namespace strata::malloc_detail {

namespace cfg = strata::malloc_config;

// Fresh zeroed read-write memory of `bytes` (a multiple of the OS page) whose
// start + offset is aligned to `align` (a power of two >= kSegmentSize; offset a
// multiple of kSegmentSize), or nullptr with errno ENOMEM.
void* map_aligned(std::size_t bytes, std::size_t align, std::size_t offset = 0) noexcept;
// Move the pages of [from, from+old_bytes) to `to` (a mapping of new_bytes >=
// old_bytes made by map_aligned), keeping their contents; false if it cannot.
bool move_pages(void* from, std::size_t old_bytes, std::size_t new_bytes, void* to) noexcept;
// Grow a mapping in place (never moves it); false if the kernel cannot.
bool grow_in_place(void* ptr, std::size_t old_bytes, std::size_t new_bytes) noexcept;
void unmap(void* ptr, std::size_t bytes) noexcept;

// The segment range: one reservation of address space, made at start-up,
// that small segments and large regions are carved from, so that free() can
// tell a pointer of ours from any other with a subtract and a compare before
// it reads a segment header (fast_paths.hpp, in_segment_gate). Reserved
// read-only (no memory, no commit charge): every address in it can be read, so
// the header of a segment never carved or given back reads as zeros (no kind,
// no owner) and the slow path reports the pointer. Carved segments are made
// read-write in place; given back, they are replaced by fresh read-only pages,
// never unmapped, so no one else can ever map into the range. One more
// read-only segment lies just below the range, never carved: free reads the
// header of p - 1's segment, which for p at the range's start is that one.
struct AddressRange {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;  // 0: no range (the reservation failed)
};
// Reserves the range, once (later calls return the same range). Its size is
// cfg::kSegmentRangeBytes, or less under RLIMIT_AS (address_space_budget) or
// where the kernel gives less (valgrind), halving down to
// cfg::kSegmentRangeMinBytes; below that, no range.
AddressRange reserve_segment_range() noexcept;
// A small segment or large region: kSegmentSize bytes aligned to
// kSegmentSize, zeroed, read-write. From the range while it has room (and
// RLIMIT_AS would let a mapping of its own be made), else map_aligned.
void* map_segment() noexcept;
// Gives a map_segment segment back (its pages are lost).
void unmap_segment(void* segment) noexcept;
void segment_range_lock() noexcept;  // fork
void segment_range_unlock() noexcept;
// Address space for many objects at once: `bytes` read-write, aligned to
// `align` (>= kSegmentSize), with no swap reserved (MAP_NORESERVE), so that a
// page costs memory only once touched. nullptr when the kernel says no or
// commits strictly (vm.overcommit_memory = 2: the whole range would be
// charged at once). Counted in mapped_bytes().
void* reserve_address_space(std::size_t bytes, std::size_t align) noexcept;
// Is p inside a reserve_address_space reservation (which stays mapped)?
bool in_reservation(const void* p) noexcept;
// How much of `wanted` bytes reservations may take in all: at most an eighth
// of RLIMIT_AS (mostly empty reservations must not starve every other
// mapping), rounded down to `granule`.
std::size_t address_space_budget(std::size_t wanted, std::size_t granule) noexcept;
// Moves the pages of [from, from+bytes) to `to`, both inside reservations
// (the pages at `to` are dropped), and maps fresh reserved pages where they
// were, so that the reservation stays whole.
enum class MoveResult { kMoved, kNotMoved, kMovedLeavingAHole };
MoveResult move_within_reservation(void* from, std::size_t bytes, void* to) noexcept;
// Like discard, for a range inside a reservation: fresh pages are mapped over
// it instead (one system call too), so that pieces moved in there by
// move_within_reservation, each a kernel mapping of its own, merge back into
// their neighbours.
void discard_by_remapping(void* ptr, std::size_t bytes) noexcept;
// The process's number of kernel mappings (/proc/self/maps lines; 0 if unknown).
std::size_t count_mappings() noexcept;

// Guard pages (cfg::kGuardPages): [ptr, ptr+bytes), whole OS pages of a
// mapping of ours, become inaccessible, so that an access faults (their
// contents are lost). Guard markers (MADV_GUARD_INSTALL, Linux 6.13) where the
// kernel has them, else mprotect. False when they stay read-write: the kernel
// refused, or (mprotect, where each guard splits a kernel mapping) the process
// has cfg::kGuardMappingsMax mappings (counted every few guards).
bool protect_guard(void* ptr, std::size_t bytes) noexcept;
// Read-write again; harmless on pages that are not a guard. Aborts if the
// kernel refuses (the memory would be unusable).
void unprotect_guard(void* ptr, std::size_t bytes) noexcept;
// The hardened build's freed large and huge objects: [ptr, ptr+bytes), whole
// OS pages, become inaccessible but keep their pages and contents (mprotect:
// reusing them later faults nothing in again, as guard markers would). False
// when they stay read-write (the mapping limit of protect_guard, or the kernel
// refused). unprotect_freed: read-write again; aborts if the kernel refuses.
bool protect_freed(void* ptr, std::size_t bytes) noexcept;
void unprotect_freed(void* ptr, std::size_t bytes) noexcept;
std::size_t guards_refused() noexcept;  // protect_guard calls that returned false
bool guards_split_mappings() noexcept;  // mprotect, not guard markers
// Tests: mprotect from now on (a process with no guard set yet, or a child
// that frees no object guarded before).
void use_mprotect_guards() noexcept;

// Give the physical pages of [ptr, ptr+bytes) back (madvise); both ends are
// rounded inwards to OS pages. Counted in discarded_os_pages().
void discard(void* ptr, std::size_t bytes) noexcept;
std::size_t discarded_os_pages() noexcept;
std::size_t discard_calls() noexcept;  // system calls discard made (statistics, tests)
// glibc's unmap-on-free of its first big chunks (cfg::kEraseFrom): true when
// a freed object of `bytes` is the first at or above the threshold, which
// then rises above it; the caller discards the object's pages.
bool first_free_of_its_size(std::size_t bytes) noexcept;
// Would glibc map an object of `bytes` allocated now (at or above the
// threshold as it stands), and so give its pages back when it is freed?
bool mapped_by_glibc_now(std::size_t bytes) noexcept;
std::size_t mapped_bytes() noexcept;  // currently mapped by the allocator

// Fault in the OS pages inside [ptr, ptr+bytes) (rounded inwards) writable,
// in one system call (MADV_POPULATE_WRITE): for memory about to be used that
// reads as zeros already, instead of a page fault per page (two, when the
// program reads a page before it writes it). Best effort: nothing happens on
// a kernel without it (before Linux 5.14).
void populate(void* ptr, std::size_t bytes) noexcept;
std::size_t populate_calls() noexcept;  // made so far (statistics, tests)

// Fresh large-object regions: transparent huge pages wanted
// (cfg::kHugePagesForLarge). Best effort: ignored where THP is off. True
// when the kernel backs the range with huge pages where it can (the advice
// was taken and THP is not "never"): a write faults in the whole 2 MiB.
bool advise_huge_pages(void* ptr, std::size_t bytes) noexcept;

// A coarse monotonic clock in milliseconds (wraps after 49 days: compare
// differences only). For decisions on a slow path: the vDSO's coarse clock,
// no system call.
std::uint32_t coarse_clock_ms() noexcept;

// The area map (Vam §3.3's area table): one bit per kSegmentSize area of the
// address space, set while a strata segment header lives there. Checked mode
// asks it before trusting a pointer; the fast paths never look at it.
bool area_add(const void* segment) noexcept;  // false (ENOMEM) if the map cannot be made
void area_remove(const void* segment) noexcept;
bool area_contains(const void* segment) noexcept;

// The segment header responsible for pointer p (any pointer strata returned,
// including interior pointers of aligned allocations).
inline std::uintptr_t segment_base(const void* p) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) - 1) & ~(cfg::kSegmentSize - 1);
}

}  // namespace strata::malloc_detail
