// The platform layer: the only place strata talks to the kernel about pages,
// threads and locks. Everything above it is portable C++. Page mapping:
// map_pages (anywhere), map_pages_at (at an address), reserve_pages +
// commit_pages, replace_pages, move_pages, grow_pages_in_place,
// discard_pages, unmap_pages.
#pragma once
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/syscall.h>

namespace strata::platform {

inline std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
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

inline std::uint64_t thread_id() noexcept {
  static thread_local const std::uint64_t tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  return tid;
}

// A test-and-test-and-set spin lock: allocator critical sections are a few
// dozen instructions, too short for a futex round trip to pay. Satisfies
// BasicLockable, so std::lock_guard works.
class SpinLock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace strata::platform
