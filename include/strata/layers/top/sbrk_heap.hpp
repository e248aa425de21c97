// SbrkHeap — top heap: contiguous memory, the paper's thin layer over sbrk(2).
//
// Real sbrk fights the C library's malloc for the program break on Linux, so this
// emulates it: one large address-space reservation (platform::reserve_pages), bumped
// upward in 16-byte steps and committed as used (platform::commit_pages, 64 KiB at a
// time so most calls make no system call). Like sbrk there is ONE break per process
// for each reservation size: every SbrkHeap<R> object shares it, so the bins of a
// segregated heap draw from one contiguous area, and consecutive requests are
// adjacent unless another user took memory in between (CoalesceableHeap relies on
// nothing more than that).
//
// Limits: free is a no-op (sbrk cannot give back an object in the middle; memory
// stays with the break until the process exits). When the reservation is used up,
// malloc returns nullptr with errno ENOMEM. Thread-safe (a spin lock around the bump).
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "strata/layers/heap.hpp"
#include "strata/platform.hpp"

namespace strata::layers {

// Address space reserved for one break: 16 GiB (valgrind, used for instruction
// counts, refuses reservations of 64 GiB and more).
inline constexpr std::size_t kSbrkReserveBytes = std::size_t{16} << 30;
// Memory is committed in steps of this many bytes.
inline constexpr std::size_t kSbrkCommitStep = std::size_t{64} << 10;

template <std::size_t ReserveBytes = kSbrkReserveBytes>
class SbrkHeap {
  static_assert(ReserveBytes > 0 && ReserveBytes % kSbrkCommitStep == 0,
                "the reservation must be a whole number of commit steps (64 KiB)");

 public:
  // A fresh, 16-byte aligned block of at least size bytes (at least 16), just after
  // the previous one when nobody else bumped the break meanwhile. (Left inlinable:
  // refills are frequent; docs/benchmarks-choices.md, "SbrkHeap inline".)
  void* malloc(std::size_t size) noexcept {
    if (size > ReserveBytes) return out_of_memory();
    const std::size_t bytes = size == 0 ? kAlignment : align_up(size, kAlignment);
    std::lock_guard<platform::SpinLock> guard(state_.lock);
    if (state_.base == nullptr && !reserve()) return nullptr;
    if (bytes > static_cast<std::size_t>(state_.limit - state_.brk)) return out_of_memory();
    char* const block = state_.brk;
    char* const new_brk = block + bytes;
    if (new_brk > state_.committed && !commit_through(new_brk)) return nullptr;
    state_.brk = new_brk;
    return block;
  }

  // sbrk cannot return an object from the middle of the break.
  void free(void*) noexcept {}

  // Bytes handed out so far from this break (its high-water mark: it never shrinks).
  static std::size_t bytes_used() noexcept {
    std::lock_guard<platform::SpinLock> guard(state_.lock);
    return static_cast<std::size_t>(state_.brk - state_.base);
  }

 private:
  struct State {
    platform::SpinLock lock;
    char* base = nullptr;       // start of the reservation (nullptr until first use)
    char* brk = nullptr;        // the break: next byte to hand out
    char* committed = nullptr;  // end of the read-write part
    char* limit = nullptr;      // end of the reservation
  };

  static void* out_of_memory() noexcept {
    errno = ENOMEM;
    return nullptr;
  }

  static bool reserve() noexcept {
    void* base = platform::reserve_pages(ReserveBytes);
    if (base == nullptr) return false;
    state_.base = state_.brk = state_.committed = static_cast<char*>(base);
    state_.limit = state_.base + ReserveBytes;
    return true;
  }

  static bool commit_through(char* end) noexcept {
    std::size_t grow = align_up(static_cast<std::size_t>(end - state_.committed), kSbrkCommitStep);
    const auto room = static_cast<std::size_t>(state_.limit - state_.committed);
    if (grow > room) grow = room;
    if (!platform::commit_pages(state_.committed, grow)) return false;
    state_.committed += grow;
    return true;
  }

  static inline constinit State state_{};
};

}  // namespace strata::layers
