// The trace file format shared by the recorder (libstrata-trace.so) and the
// replayer (strata-replay). docs/lab.md gives the same description for users.
//
//   header  16 bytes: "STRTRACE", u32 version (1), u32 zero
//   records, each: u8 op, then unsigned LEB128 varints:
//     time since the previous record in ns, thread index (1, 2, ... in order of
//     first appearance), object id (1, 2, ... in order of creation), and
//       ops 1-9 (a new object, named after the call):  size [, alignment for ops 5-9]
//       op 16 Resize (realloc of a live object):       new size
//       op 17 Free, op 18 ReallocFree (realloc to 0 that freed the object): nothing more
//   trailer 72 bytes: "STRTEND1" then u64 little-endian: records, objects,
//     peak_live_bytes, peak_live_objects, threads, duration_ns, unknown_frees,
//     live_bytes_at_end.
// A trace without its trailer is incomplete (the program did not exit normally).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata::lab::trace {

inline constexpr char kHeaderMagic[8] = {'S', 'T', 'R', 'T', 'R', 'A', 'C', 'E'};
inline constexpr char kTrailerMagic[8] = {'S', 'T', 'R', 'T', 'E', 'N', 'D', '1'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr std::size_t kTrailerBytes = 72;
inline constexpr std::size_t kMaxRecordBytes = 1 + 6 * 10;

enum Op : std::uint8_t {
  // New objects: the values of strata::lab::Call.
  kMalloc = 1,
  kCalloc = 2,
  kReallocNew = 3,
  kReallocArrayNew = 4,
  kPosixMemalign = 5,
  kAlignedAlloc = 6,
  kMemalign = 7,
  kValloc = 8,
  kPvalloc = 9,
  kResize = 16,
  kFree = 17,
  kReallocFree = 18,
};

inline bool creates_object(std::uint8_t op) noexcept { return op >= kMalloc && op <= kPvalloc; }
inline bool has_alignment(std::uint8_t op) noexcept { return op >= kPosixMemalign && op <= kPvalloc; }
inline bool is_known_op(std::uint8_t op) noexcept {
  return creates_object(op) || op == kResize || op == kFree || op == kReallocFree;
}

struct Trailer {
  std::uint64_t records;
  std::uint64_t objects;
  std::uint64_t peak_live_bytes;
  std::uint64_t peak_live_objects;
  std::uint64_t threads;
  std::uint64_t duration_ns;
  std::uint64_t unknown_frees;
  std::uint64_t live_bytes_at_end;
};
static_assert(sizeof(Trailer) + 8 == kTrailerBytes);

// Appends v as unsigned LEB128; returns the new end.
inline std::uint8_t* put_varint(std::uint8_t* out, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *out++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<std::uint8_t>(v);
  return out;
}

// Reads one varint from [*in, end); false if truncated or longer than 64 bits.
inline bool get_varint(const std::uint8_t** in, const std::uint8_t* end, std::uint64_t* v) noexcept {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*in == end) return false;
    const std::uint8_t byte = *(*in)++;
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = value;
      return true;
    }
  }
  return false;
}

}  // namespace strata::lab::trace
