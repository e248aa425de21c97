// The model both harnesses check the allocator against (docs/fuzzing.md): a
// table of live objects, each filled with a pattern derived from its id.
//
// Every byte an object owns is checked before it is freed, reallocated or
// dropped by a clear, and at the end of the input: two objects that overlap,
// a realloc that loses data or a free that scribbles on a neighbour shows up
// as a wrong byte. A failed check prints one line and aborts, which libFuzzer
// reports as a crash and a replay test as a failure.
#pragma once
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// The byte loops below run over megabytes: libFuzzer's comparison tracing
// there would cost far more than the allocator calls and guide nothing.
#if defined(__clang__)
#define STRATA_FUZZ_UNTRACED __attribute__((no_sanitize("coverage"), noinline))
#else
#define STRATA_FUZZ_UNTRACED
#endif

namespace strata::fuzz {

[[noreturn]] inline void model_failure(const char* what, const void* ptr, std::size_t a, std::size_t b) {
  std::fprintf(stderr, "fuzz model: %s (object %p, %zu, %zu)\n", what, ptr, a, b);
  std::fflush(stderr);
  std::abort();
}

inline void expect(bool ok, const char* what, const void* ptr = nullptr, std::size_t a = 0, std::size_t b = 0) {
  if (!ok) model_failure(what, ptr, a, b);
}

// A request the API had to refuse: NULL, and errno says why.
inline void expect_refused(const void* p, int error, std::size_t size) {
  expect(p == nullptr, "impossible request served: size", p, size);
  expect(errno == error, "wrong errno on refusal: errno, size", p, static_cast<std::size_t>(errno), size);
}

// Object `id`'s pattern, eight bytes at a time: word w covers bytes
// [8w, 8w + 8), little-endian. Two ids never share a word at the same
// offset; the loops below move whole words (ASan checks each access once).
inline std::uint64_t pattern_word(std::uint64_t id, std::size_t w) {
  return id * 0x9E3779B97F4A7C15ull + w * 0xBF58476D1CE4E5B9ull;
}

inline unsigned char pattern_byte(std::uint64_t id, std::size_t offset) {
  return static_cast<unsigned char>(pattern_word(id, offset / 8) >> (8 * (offset % 8)));
}

struct LiveObject {
  unsigned char* ptr = nullptr;  // nullptr: the slot is empty
  std::size_t size = 0;          // bytes the model owns (the request, or the usable size once asked)
  std::uint64_t id = 0;
  int owner = -1;                // the reap harness: index of the reap holding the object

  bool live() const { return ptr != nullptr; }
};

// Bytes [from, o.size) get the pattern.
STRATA_FUZZ_UNTRACED inline void fill(const LiveObject& o, std::size_t from) {
  std::size_t i = from;
  for (; i < o.size && i % 8 != 0; ++i) o.ptr[i] = pattern_byte(o.id, i);
  for (; i + 8 <= o.size; i += 8) {
    const std::uint64_t word = pattern_word(o.id, i / 8);
    std::memcpy(o.ptr + i, &word, 8);
  }
  for (; i < o.size; ++i) o.ptr[i] = pattern_byte(o.id, i);
}

// Every byte in [0, upto) must still hold the object's pattern.
STRATA_FUZZ_UNTRACED inline void verify_prefix(const LiveObject& o, std::size_t upto) {
  std::size_t i = 0;
  for (; i + 8 <= upto; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, o.ptr + i, 8);
    if (word != pattern_word(o.id, i / 8)) break;  // the byte loop below names the offset
  }
  for (; i < upto; ++i)
    if (o.ptr[i] != pattern_byte(o.id, i)) model_failure("live byte changed: offset, size", o.ptr, i, o.size);
}

inline void verify(const LiveObject& o) { verify_prefix(o, o.size); }

STRATA_FUZZ_UNTRACED inline void verify_zero(const void* p, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(p);
  std::size_t i = 0;
  for (std::uint64_t word; i + 8 <= size; i += 8)
    if (std::memcpy(&word, bytes + i, 8), word != 0) break;
  for (; i < size; ++i)
    if (bytes[i] != 0) model_failure("calloc memory not zero: offset, size", p, i, size);
}

class LiveObjects {
 public:
  // A selector byte names any slot; 256 small objects fill a page of a size class.
  static constexpr std::size_t kSlots = 256;

  LiveObject& slot(std::uint8_t selector) { return slots_[selector % kSlots]; }

  // A fresh object of `size` bytes at ptr enters the model, filled with its pattern.
  void adopt(LiveObject& o, void* ptr, std::size_t size, int owner = -1) {
    o = {static_cast<unsigned char*>(ptr), size, next_id_++, owner};
    fill(o, 0);
  }

  // After a realloc to new_size: the old contents must have come along (up to
  // the smaller size); the bytes gained get the pattern.
  static void moved(LiveObject& o, void* ptr, std::size_t new_size) {
    const std::size_t kept = std::min(o.size, new_size);
    o.ptr = static_cast<unsigned char*>(ptr);
    verify_prefix(o, kept);
    o.size = new_size;
    fill(o, kept);
  }

  // usable_size promised `usable` bytes: the model takes the slack too.
  static void grow_to(LiveObject& o, std::size_t usable) {
    if (usable <= o.size) return;
    const std::size_t old = o.size;
    o.size = usable;
    fill(o, old);
  }

  static void forget(LiveObject& o) { o = {}; }

  void verify_all() const {
    for (const LiveObject& o : slots_)
      if (o.live()) verify(o);
  }

  template <class F>
  void for_each_live(F&& f) {
    for (LiveObject& o : slots_)
      if (o.live()) f(o);
  }

 private:
  std::array<LiveObject, kSlots> slots_{};
  std::uint64_t next_id_ = 1;
};

}  // namespace strata::fuzz
