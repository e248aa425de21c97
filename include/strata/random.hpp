// strata's one random generator, for everything that wants a reproducible
// stream: the workloads, the benchmarks, the lab's preconditioner and tests.
//
// xoshiro256** seeded through splitmix64: a few instructions per number and
// the same sequence for a given seed on every machine, compiler and
// allocator (std::mt19937's distributions are not portable). The workloads'
// stored checksums depend on this exact sequence: do not change it.
#pragma once
#include <cstdint>

namespace strata {

class Random {
 public:
  explicit Random(std::uint64_t seed) noexcept {
    for (std::uint64_t& word : state_) word = splitmix64(seed);
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
  // Uniform in [lo, hi], lo <= hi.
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) noexcept { return lo + below(hi - lo + 1); }
  // Uniform in [0, 1), 53 random bits.
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // True with probability p.
  bool chance(double p) noexcept { return unit() < p; }

  // One step of splitmix64 (Steele, Lea, Flood 2014): advances state and
  // returns the next output. It spreads a seed over xoshiro's 256 bits.
  static std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace strata
