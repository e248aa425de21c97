// The preconditioner's random numbers: the same sequence for a given seed on
// every platform and run, so a preset with a seed is a reproducible heap.
#pragma once
#include <cstdint>

namespace strata::lab {

// xoshiro256** seeded through splitmix64: small, fast, and the same sequence
// on every platform for a given seed.
class Random {
 public:
  explicit Random(std::uint64_t seed) noexcept {
    for (std::uint64_t& word : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }
  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, bound), bound > 0 (Lemire's multiply-shift; bias < bound / 2^64).
  std::uint64_t below(std::uint64_t bound) noexcept {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace strata::lab
