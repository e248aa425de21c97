// cfrac — factoring with bignums, the classic allocator benchmark's pattern
// (cfrac: many small, short-lived multi-precision numbers; see the Vam and
// reaps papers' general-purpose benchmarks).
//
// Each unit of scale generates composite numbers (products of three random
// primes of 18–34 bits, found with Miller–Rabin) and factors them completely:
// Miller–Rabin for primality, Pollard's rho (Brent's cycle finding, gcds in
// batches) to split. Every number is an immutable heap object of its own (a
// length and 32-bit limbs, 8–48 bytes): each add, multiply, division
// remainder and gcd step allocates its result and frees its temporaries, as
// cfrac's reference-counted precision type does. The checksum digests every
// number's sorted factors.
//
// Mode: only naive is meaningful (a general-purpose program); every number
// goes straight to malloc/free.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Mode;
using strata::workload::Options;
using strata::workload::Rng;

// ------------------------------------------------------------- the bignum --

// A non-negative integer: `size` significant 32-bit limbs, least significant
// first (size 0 is zero). One malloc per value.
class Num {
  struct Rep {
    std::uint32_t size;
    std::uint32_t capacity;
    std::uint32_t* limbs() { return reinterpret_cast<std::uint32_t*>(this + 1); }
  };

 public:
  Num() = default;
  explicit Num(std::uint64_t v) {
    if (v == 0) return;
    rep_ = make(2);
    rep_->limbs()[0] = static_cast<std::uint32_t>(v);
    rep_->limbs()[1] = static_cast<std::uint32_t>(v >> 32);
    rep_->size = 2;
    trim();
  }
  Num(const Num& o) {
    if (o.rep_ == nullptr) return;
    rep_ = make(o.size());
    std::memcpy(rep_->limbs(), o.rep_->limbs(), o.size() * sizeof(std::uint32_t));
    rep_->size = o.size();
  }
  Num(Num&& o) noexcept : rep_(std::exchange(o.rep_, nullptr)) {}
  Num& operator=(Num o) noexcept {
    std::swap(rep_, o.rep_);
    return *this;
  }
  ~Num() { std::free(rep_); }

  std::uint32_t size() const { return rep_ != nullptr ? rep_->size : 0; }
  std::uint32_t limb(std::uint32_t i) const { return i < size() ? rep_->limbs()[i] : 0; }
  bool is_zero() const { return size() == 0; }
  bool is_odd() const { return (limb(0) & 1) != 0; }
  bool is_one() const { return size() == 1 && limb(0) == 1; }
  std::uint64_t low64() const { return limb(0) | static_cast<std::uint64_t>(limb(1)) << 32; }
  std::uint32_t bits() const {
    if (is_zero()) return 0;
    return 32 * (size() - 1) + (32 - static_cast<std::uint32_t>(__builtin_clz(limb(size() - 1))));
  }
  bool bit(std::uint32_t i) const { return (limb(i / 32) >> (i % 32)) & 1; }

  friend int compare(const Num& a, const Num& b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    for (std::uint32_t i = a.size(); i-- > 0;)
      if (a.limb(i) != b.limb(i)) return a.limb(i) < b.limb(i) ? -1 : 1;
    return 0;
  }

  friend Num operator+(const Num& a, const Num& b) {
    const std::uint32_t n = std::max(a.size(), b.size());
    Num r = sized(n + 1);
    std::uint64_t carry = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      carry += static_cast<std::uint64_t>(a.limb(i)) + b.limb(i);
      r.rep_->limbs()[i] = static_cast<std::uint32_t>(carry);
      carry >>= 32;
    }
    r.rep_->limbs()[n] = static_cast<std::uint32_t>(carry);
    r.trim();
    return r;
  }

  // a - b, a >= b.
  friend Num operator-(const Num& a, const Num& b) {
    Num r = sized(a.size());
    std::int64_t borrow = 0;
    for (std::uint32_t i = 0; i < a.size(); ++i) {
      std::int64_t t = static_cast<std::int64_t>(a.limb(i)) - b.limb(i) - borrow;
      borrow = t < 0;
      r.rep_->limbs()[i] = static_cast<std::uint32_t>(t + (borrow << 32));
    }
    r.trim();
    return r;
  }

  friend Num operator*(const Num& a, const Num& b) {
    if (a.is_zero() || b.is_zero()) return Num();
    Num r = sized(a.size() + b.size());
    std::uint32_t* out = r.rep_->limbs();
    std::fill(out, out + a.size() + b.size(), 0u);
    for (std::uint32_t i = 0; i < a.size(); ++i) {
      std::uint64_t carry = 0;
      for (std::uint32_t j = 0; j < b.size(); ++j) {
        carry += static_cast<std::uint64_t>(a.limb(i)) * b.limb(j) + out[i + j];
        out[i + j] = static_cast<std::uint32_t>(carry);
        carry >>= 32;
      }
      out[i + b.size()] = static_cast<std::uint32_t>(carry);
    }
    r.trim();
    return r;
  }

  // Quotient and remainder (Knuth's algorithm D over 32-bit limbs); d != 0.
  friend std::pair<Num, Num> divmod(const Num& a, const Num& d) {
    if (compare(a, d) < 0) return {Num(), a};
    const std::uint32_t n = d.size(), m = a.size() - n;
    if (n == 1) {
      Num q = sized(a.size());
      std::uint64_t rem = 0;
      for (std::uint32_t i = a.size(); i-- > 0;) {
        const std::uint64_t cur = rem << 32 | a.limb(i);
        q.rep_->limbs()[i] = static_cast<std::uint32_t>(cur / d.limb(0));
        rem = cur % d.limb(0);
      }
      q.trim();
      return {std::move(q), Num(rem)};
    }
    // Normalize so the divisor's top limb has its high bit set: both
    // shifted copies are temporaries of their own.
    const int s = __builtin_clz(d.limb(n - 1));
    Num vn = d.shifted_left(s, n);
    Num un = a.shifted_left(s, a.size() + 1);
    std::uint32_t* u = un.rep_->limbs();
    const std::uint32_t* v = vn.rep_->limbs();
    Num q = sized(m + 1);
    constexpr std::uint64_t kBase = 1ULL << 32;
    for (std::uint32_t j = m + 1; j-- > 0;) {
      const std::uint64_t num = static_cast<std::uint64_t>(u[j + n]) << 32 | u[j + n - 1];
      std::uint64_t qhat = num / v[n - 1], rhat = num % v[n - 1];
      while (qhat >= kBase || qhat * v[n - 2] > (rhat << 32 | u[j + n - 2])) {
        --qhat;
        rhat += v[n - 1];
        if (rhat >= kBase) break;
      }
      std::int64_t borrow = 0;
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint64_t p = qhat * v[i];
        const std::int64_t t =
            static_cast<std::int64_t>(u[i + j]) - borrow - static_cast<std::int64_t>(p & 0xffffffffU);
        u[i + j] = static_cast<std::uint32_t>(t);
        borrow = static_cast<std::int64_t>(p >> 32) - (t >> 32);
      }
      const std::int64_t t = static_cast<std::int64_t>(u[j + n]) - borrow;
      u[j + n] = static_cast<std::uint32_t>(t);
      if (t < 0) {  // qhat was one too large: add the divisor back
        --qhat;
        std::uint64_t carry = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
          carry += static_cast<std::uint64_t>(u[i + j]) + v[i];
          u[i + j] = static_cast<std::uint32_t>(carry);
          carry >>= 32;
        }
        u[j + n] += static_cast<std::uint32_t>(carry);
      }
      q.rep_->limbs()[j] = static_cast<std::uint32_t>(qhat);
    }
    q.trim();
    Num r = sized(n);
    for (std::uint32_t i = 0; i < n; ++i)
      r.rep_->limbs()[i] = s == 0 ? u[i] : (u[i] >> s) | (u[i + 1] << (32 - s));
    r.trim();
    return {std::move(q), std::move(r)};
  }
  friend Num operator%(const Num& a, const Num& d) { return divmod(a, d).second; }
  friend Num operator/(const Num& a, const Num& d) { return divmod(a, d).first; }

  Num half() const {
    Num r = sized(size());
    for (std::uint32_t i = 0; i < size(); ++i) r.rep_->limbs()[i] = (limb(i) >> 1) | (limb(i + 1) << 31);
    r.trim();
    return r;
  }

  void digest(Checksum& sum) const {
    sum.add(size());
    for (std::uint32_t i = 0; i < size(); ++i) sum.add(limb(i));
  }

 private:
  static Rep* make(std::uint32_t capacity) {
    auto* rep = static_cast<Rep*>(std::malloc(sizeof(Rep) + capacity * sizeof(std::uint32_t)));
    if (rep == nullptr) throw std::bad_alloc();
    rep->size = 0;
    rep->capacity = capacity;
    return rep;
  }
  static Num sized(std::uint32_t n) {
    Num r;
    r.rep_ = make(n);
    r.rep_->size = n;
    return r;
  }
  void trim() {
    while (rep_->size > 0 && rep_->limbs()[rep_->size - 1] == 0) --rep_->size;
    if (rep_->size == 0) {
      std::free(rep_);
      rep_ = nullptr;
    }
  }
  // This value times 2^s (s < 32) in exactly `limbs` limbs (zero-padded).
  Num shifted_left(int s, std::uint32_t limbs) const {
    Num r = sized(limbs);
    for (std::uint32_t i = 0; i < limbs; ++i) {
      const std::uint32_t lo = i > 0 ? limb(i - 1) : 0;
      r.rep_->limbs()[i] = s == 0 ? limb(i) : (limb(i) << s) | (lo >> (32 - s));
    }
    return r;
  }

  Rep* rep_ = nullptr;
};

Num mulmod(const Num& a, const Num& b, const Num& n) { return a * b % n; }

Num powmod(const Num& base, const Num& exponent, const Num& n) {
  Num result(1);
  for (std::uint32_t i = exponent.bits(); i-- > 0;) {
    result = mulmod(result, result, n);
    if (exponent.bit(i)) result = mulmod(result, base, n);
  }
  return result;
}

Num gcd(Num a, Num b) {
  while (!b.is_zero()) {
    Num r = a % b;
    a = std::move(b);
    b = std::move(r);
  }
  return a;
}

Num absdiff(const Num& a, const Num& b) { return compare(a, b) >= 0 ? a - b : b - a; }

// A uniform-ish value in [2, n-2] from the workload's generator.
Num random_below(const Num& n, Rng& rng) {
  Num r(rng.next());
  r = r * Num(rng.next()) + Num(rng.next());
  return r % (n - Num(3)) + Num(2);
}

constexpr std::uint32_t kSmallPrimes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47};

// Miller–Rabin with `rounds` random bases (plus trial division by small primes).
bool is_probable_prime(const Num& n, Rng& rng, int rounds) {
  if (n.bits() <= 6) {
    const std::uint64_t v = n.low64();
    for (std::uint32_t p : kSmallPrimes)
      if (v == p) return true;
    return false;
  }
  for (std::uint32_t p : kSmallPrimes)
    if ((n % Num(p)).is_zero()) return false;
  const Num one(1);
  const Num minus_one = n - one;
  Num d = minus_one;
  int twos = 0;
  while (!d.is_odd()) {
    d = d.half();
    ++twos;
  }
  for (int round = 0; round < rounds; ++round) {
    Num x = powmod(random_below(n, rng), d, n);
    if (x.is_one() || compare(x, minus_one) == 0) continue;
    bool composite = true;
    for (int i = 1; i < twos && composite; ++i) {
      x = mulmod(x, x, n);
      if (compare(x, minus_one) == 0) composite = false;
    }
    if (composite) return false;
  }
  return true;
}

Num random_prime(std::uint32_t bits, Rng& rng) {
  for (;;) {
    const std::uint64_t v = (rng.next() >> (64 - bits)) | 1ULL | (1ULL << (bits - 1));
    Num candidate(v);
    if (is_probable_prime(candidate, rng, 8)) return candidate;
  }
}

// A non-trivial factor of composite n (Pollard's rho, Brent's variant with
// the gcd taken once per batch of steps).
Num rho_factor(const Num& n, Rng& rng) {
  for (std::uint64_t c_value = 1;; ++c_value) {
    const Num c(c_value + rng.below(1000));
    Num y = random_below(n, rng), x, saved;
    Num g(1), q(1);
    constexpr std::uint64_t kBatch = 32;
    for (std::uint64_t r = 1; g.is_one(); r *= 2) {
      x = y;
      for (std::uint64_t i = 0; i < r; ++i) y = (y * y + c) % n;
      for (std::uint64_t k = 0; k < r && g.is_one(); k += kBatch) {
        saved = y;
        for (std::uint64_t i = 0; i < std::min(kBatch, r - k); ++i) {
          y = (y * y + c) % n;
          q = mulmod(q, absdiff(x, y), n);
        }
        g = gcd(q, n);
      }
    }
    if (compare(g, n) == 0) {  // the batch overshot: redo it one step at a time
      do {
        saved = (saved * saved + c) % n;
        g = gcd(absdiff(x, saved), n);
      } while (g.is_one());
    }
    if (compare(g, n) != 0) return g;
  }
}

void factor(const Num& n, Rng& rng, std::vector<Num>& out) {
  if (n.is_one()) return;
  if (is_probable_prime(n, rng, 12)) {
    out.push_back(n);
    return;
  }
  const Num d = rho_factor(n, rng);
  factor(d, rng, out);
  factor(n / d, rng, out);
}

constexpr int kNumbersPerScale = 4;

std::uint64_t run(const Options& o) {
  Rng rng(o.seed);
  Checksum sum;
  std::uint64_t factors_found = 0;
  std::vector<Num> results;
  for (std::uint64_t k = 0; k < o.scale * kNumbersPerScale; ++k) {
    std::vector<Num> primes;
    for (int i = 0; i < 3; ++i) primes.push_back(random_prime(static_cast<std::uint32_t>(rng.between(18, 34)), rng));
    const Num n = primes[0] * primes[1] * primes[2];
    std::vector<Num> found;
    factor(n, rng, found);
    std::sort(found.begin(), found.end(), [](const Num& a, const Num& b) { return compare(a, b) < 0; });
    std::sort(primes.begin(), primes.end(), [](const Num& a, const Num& b) { return compare(a, b) < 0; });
    // The factors must multiply back to n and be the primes it was made of.
    Num product(1);
    for (const Num& f : found) product = product * f;
    if (compare(product, n) != 0 || found.size() != primes.size() ||
        !std::equal(found.begin(), found.end(), primes.begin(),
                    [](const Num& a, const Num& b) { return compare(a, b) == 0; })) {
      std::fprintf(stderr, "strata-wl-cfrac: wrong factorization of number %llu\n", static_cast<unsigned long long>(k));
      std::exit(1);
    }
    factors_found += found.size();
    // The results stay live to the end (long-lived objects among the churn).
    results.push_back(n);
    for (Num& f : found) results.push_back(std::move(f));
  }
  for (const Num& r : results) r.digest(sum);
  std::printf("cfrac: %llu numbers factored into %llu primes\n",
              static_cast<unsigned long long>(o.scale * kNumbersPerScale),
              static_cast<unsigned long long>(factors_found));
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) { return strata::workload::main(argc, argv, "cfrac", {Mode::naive}, run); }
