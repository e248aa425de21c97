// The fuzz input read as a stream of small decisions (docs/fuzzing.md).
//
// Every read succeeds: past the end it yields zeros, so any byte string is a
// valid program and libFuzzer's mutations never produce a rejected input.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::fuzz {

// Requests this large can never be served: the API must refuse them (NULL + ENOMEM).
inline constexpr std::size_t kAbsurdSize = std::size_t{1} << 48;
// Larger requests (but not absurd ones) are not attempted: whether a few GiB
// can be had depends on the machine.
inline constexpr std::size_t kMostServed = std::size_t{64} << 20;

inline bool is_power_of_two(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool done() const { return pos_ >= size_; }
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(byte() | byte() << 8); }

  // A request size shaped like allocator traffic: mostly small, some up to
  // the large classes, rarely a few MiB (huge objects), sometimes an edge.
  std::size_t request_size() {
    const std::uint8_t kind = byte();
    if (kind < 128) return byte();                                   // 0..255: the exact classes
    if (kind < 192) return u16() & 0x3fff;                           // up to 16 KiB: every small class
    if (kind < 224) return std::size_t{u16()} * 4 + (kind & 15);     // up to 256 KiB: large objects
    if (kind < 232) return (std::size_t{3} << 19) + std::size_t{u16()} * 16 + (kind & 15);  // 1.5 to 2.5 MiB: large to huge
    return edge_size(byte());
  }

  // calloc's count: mostly 0 to 16, rarely one whose product with any size
  // but 0 or 1 overflows.
  std::size_t calloc_count() {
    const std::uint8_t c = byte();
    return c < 240 ? c % 17 : SIZE_MAX / (c - 238);
  }

  // A power of two up to 4 MiB, or now and then a value that is not one.
  std::size_t alignment() {
    const std::uint8_t b = byte();
    if (b < 240) return std::size_t{1} << (b % 23);
    static constexpr std::size_t kInvalid[] = {0, 3, 24, 48, 100, 4095, SIZE_MAX};
    return kInvalid[b % (sizeof kInvalid / sizeof kInvalid[0])];
  }

 private:
  // Sizes at the boundaries of size classes, pages and object kinds, and
  // sizes no allocator can serve (their arithmetic overflows when rounded).
  static std::size_t edge_size(std::uint8_t b) {
    static constexpr std::size_t kEdges[] = {
        0,          1,          15,          16,           17,         511,        512,
        513,        4095,       4096,        4097,         8191,       8192,       8193,
        65535,      65536,      65537,       (1u << 21) - 1, 1u << 21, (1u << 21) + 1, SIZE_MAX,
        SIZE_MAX - 15, SIZE_MAX / 2 + 1, PTRDIFF_MAX, kAbsurdSize};
    return kEdges[b % (sizeof kEdges / sizeof kEdges[0])];
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace strata::fuzz
