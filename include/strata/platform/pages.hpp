// Pages: mapping, protecting and advising the kernel about address space
// (mmap, munmap, mremap, mprotect, madvise) and the page size (sysconf).
// Map: map_pages (anywhere), map_pages_at (at an address), reserve_pages +
// commit_pages, map_read_only, replace_pages, move_pages, grow_pages_in_place,
// map_file, unmap_pages. Protect: protect_pages, unprotect_pages, guard
// markers. Advise: discard_pages, advise_huge_pages, populate_pages.
// Unless a function says otherwise, a failure leaves errno as the kernel set it.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace strata::platform {

namespace detail {
// Constant-initialised (no guard variable): libstrata must not need libstdc++'s
// __cxa_guard, which a function-local static would bring.
inline std::atomic<std::size_t> g_page_size{0};
}  // namespace detail

// The kernel's page size (asked once).
inline std::size_t page_size() noexcept {
  std::size_t size = detail::g_page_size.load(std::memory_order_relaxed);
  if (size == 0) {
    size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    detail::g_page_size.store(size, std::memory_order_relaxed);
  }
  return size;
}

// Whether the kernel sets swap aside for a mapping when it is made
// (kReserved, the default) or charges each page only once it is touched
// (kUnreserved, MAP_NORESERVE: room for many objects at little cost). Under
// vm.overcommit_memory = 2 the kernel charges every page at once either way.
enum class Swap { kReserved, kUnreserved };

namespace detail {
constexpr int map_flags(Swap swap) noexcept {
  return MAP_PRIVATE | MAP_ANONYMOUS | (swap == Swap::kUnreserved ? MAP_NORESERVE : 0);
}
}  // namespace detail

// Fresh zeroed read-write pages, or nullptr (errno ENOMEM) when the kernel says no.
inline void* map_pages(std::size_t bytes, Swap swap = Swap::kReserved) noexcept {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, detail::map_flags(swap), -1, 0);
  if (p == MAP_FAILED) {
    errno = ENOMEM;
    return nullptr;
  }
  return p;
}

inline void unmap_pages(void* ptr, std::size_t bytes) noexcept { ::munmap(ptr, bytes); }

// How map_file maps a file: read only, a private copy the process may write
// (the file never changes), or shared with the file (writes reach it, and
// every other process that maps it sees them).
enum class FileAccess { read_only, private_copy, shared };

// The first `bytes` of the open file fd, or nullptr (errno as the kernel set
// it). The mapping outlives fd; give it back with unmap_pages.
inline void* map_file(int fd, std::size_t bytes, FileAccess access) noexcept {
  const int protection = access == FileAccess::read_only ? PROT_READ : PROT_READ | PROT_WRITE;
  const int sharing = access == FileAccess::shared ? MAP_SHARED : MAP_PRIVATE;
  void* p = ::mmap(nullptr, bytes, protection, sharing, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Fresh zeroed read-write pages exactly at `address` (page-aligned), never over
// a mapping that is already there (MAP_FIXED_NOREPLACE); nullptr when the range
// is taken (errno as mmap left it). Lets an allocator ask for an aligned spot
// it expects to be free without over-mapping and trimming.
inline void* map_pages_at(void* address, std::size_t bytes, Swap swap = Swap::kReserved) noexcept {
  void* p = ::mmap(address, bytes, PROT_READ | PROT_WRITE, detail::map_flags(swap) | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  if (p != address) {  // a kernel before 4.17 takes the flag as a mere hint
    ::munmap(p, bytes);
    return nullptr;
  }
  return p;
}

// Fresh zeroed pages (swap unreserved) in place of whatever [address,
// address+bytes) held, in one system call; false if the kernel refuses. Unlike
// discard_pages this makes the range one new mapping, so pieces that
// move_pages put there merge back into their neighbours.
inline bool replace_pages(void* address, std::size_t bytes) noexcept {
  return ::mmap(address, bytes, PROT_READ | PROT_WRITE, detail::map_flags(Swap::kUnreserved) | MAP_FIXED, -1, 0) ==
         address;
}

// Moves the pages of [from, from+old_bytes), contents and all, to `to`
// (replacing the new_bytes mapped there; new_bytes >= old_bytes), without
// copying: the kernel rewrites page tables (mremap). The old range is
// unmapped. False if the kernel refuses.
inline bool move_pages(void* from, std::size_t old_bytes, std::size_t new_bytes, void* to) noexcept {
  return ::mremap(from, old_bytes, new_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED;
}

// Grows a mapping where it is (the pages after it must be free); never moves it.
inline bool grow_pages_in_place(void* ptr, std::size_t old_bytes, std::size_t new_bytes) noexcept {
  return ::mremap(ptr, old_bytes, new_bytes, 0) != MAP_FAILED;
}

// Address space only: no memory is committed until commit_pages.
inline void* reserve_pages(std::size_t bytes) noexcept {
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    errno = ENOMEM;
    return nullptr;
  }
  return p;
}

// Make reserved pages usable; false (errno ENOMEM) when the kernel refuses.
inline bool commit_pages(void* ptr, std::size_t bytes) noexcept {
  if (::mprotect(ptr, bytes, PROT_READ | PROT_WRITE) != 0) {
    errno = ENOMEM;
    return false;
  }
  return true;
}

// Give the physical pages back; the range stays mapped and reads as zero later.
inline void discard_pages(void* ptr, std::size_t bytes) noexcept { ::madvise(ptr, bytes, MADV_DONTNEED); }

// Fresh read-only pages, no swap reserved (a read-only private mapping is
// never charged to the commit limit): exactly at `address` over whatever was
// there when `fixed`, else anywhere. nullptr when the kernel refuses.
inline void* map_read_only(void* address, std::size_t bytes, bool fixed) noexcept {
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (fixed ? MAP_FIXED : 0);
  void* p = ::mmap(address, bytes, PROT_READ, flags, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// No access at all (a guard, or freed memory kept from use); false when the
// kernel refuses (e.g. a split would pass the mapping limit).
inline bool protect_pages(void* ptr, std::size_t bytes) noexcept { return ::mprotect(ptr, bytes, PROT_NONE) == 0; }

// Read-write again (or for the first time, in a reserved range); errno is the kernel's.
inline bool unprotect_pages(void* ptr, std::size_t bytes) noexcept {
  return ::mprotect(ptr, bytes, PROT_READ | PROT_WRITE) == 0;
}

// Linux 6.13's guard markers: PROT_NONE pages in the page tables alone, so a
// guard neither splits a kernel mapping nor takes the mmap lock for writing,
// and MADV_DONTNEED keeps them. An older kernel says EINVAL.
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif
inline bool install_guard_marker(void* ptr, std::size_t bytes) noexcept {
  return ::madvise(ptr, bytes, MADV_GUARD_INSTALL) == 0;
}
inline bool remove_guard_marker(void* ptr, std::size_t bytes) noexcept {
  return ::madvise(ptr, bytes, MADV_GUARD_REMOVE) == 0;
}

// Ask for transparent huge pages over the range (a hint; false if refused).
inline bool advise_huge_pages(void* ptr, std::size_t bytes) noexcept {
  return ::madvise(ptr, bytes, MADV_HUGEPAGE) == 0;
}

// Fault the range in, writable, in one system call (MADV_POPULATE_WRITE,
// Linux 5.14); false if refused, errno EINVAL when the kernel lacks it.
inline bool populate_pages(void* ptr, std::size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  return ::madvise(ptr, bytes, MADV_POPULATE_WRITE) == 0;
#else
  (void)ptr;
  (void)bytes;
  errno = EINVAL;
  return false;
#endif
}

}  // namespace strata::platform
