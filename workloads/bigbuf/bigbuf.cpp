// bigbuf — large buffers of varied sizes, like a program working on file
// inputs (the general-purpose benchmarks of the reaps and Vam papers whose
// objects are few and large: 164.gzip, 181.mcf, 254.gap).
//
// Each unit of scale "reads" a series of files whose sizes are log-uniform
// between 4 KiB and 8 MiB (generated content: words, numbers, runs and
// repeats, so that it compresses), and for each:
//   - delta-encodes it into a new buffer (a transform pass);
//   - compresses that with a small LZ77 (a 64K-entry hash table of its own;
//     the output buffer starts small and grows with realloc);
//   - decompresses into a buffer that also grows with realloc, undoes the
//     delta in place and checks the result equals the input;
//   - keeps the compressed image (shrunk to fit with realloc) and sometimes
//     the input in a cache of recent files; the cache evicts at random, and
//     now and then two cached images are concatenated (realloc + copy).
// Buffers die in varied order. The checksum digests every compressed image.
//
// Mode: only naive is meaningful (a general-purpose program).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Mode;
using strata::workload::Options;
using strata::workload::Rng;

// A malloc'd byte buffer that knows its size and capacity.
struct Buffer {
  std::uint8_t* data = nullptr;
  std::size_t size = 0, capacity = 0;

  static Buffer allocate(std::size_t n) {
    Buffer b;
    b.data = static_cast<std::uint8_t*>(std::malloc(n == 0 ? 1 : n));
    if (b.data == nullptr) throw std::bad_alloc();
    b.capacity = n;
    return b;
  }
  // Room for `more` bytes after size: grows by doubling with realloc.
  void reserve_more(std::size_t more) {
    if (size + more <= capacity) return;
    resize_capacity(std::max(size + more, capacity * 2));
  }
  void resize_capacity(std::size_t n) {
    auto* p = static_cast<std::uint8_t*>(std::realloc(data, n == 0 ? 1 : n));
    if (p == nullptr) throw std::bad_alloc();
    data = p;
    capacity = n;
  }
  void release() {
    std::free(data);
    data = nullptr;
    size = capacity = 0;
  }
};

std::uint64_t hash_bytes(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

// ------------------------------------------------------------ the content --

// Text-like content: words from a small dictionary, numbers, byte runs and
// copies of earlier stretches (what makes real files compressible).
void generate(Buffer& b, Rng& rng) {
  static const char* const kWords[] = {"the ", "allocator ", "region ", "reap ", "chunk ", "object ", "free ",
                                       "malloc ", "heap ", "page ", "cache ", "line ", "data ", "size ",
                                       "class ", "list ", "\n", "of ", "and ", "in "};
  std::size_t i = 0;
  while (i < b.size) {
    const std::uint64_t kind = rng.below(16);
    if (kind < 10) {
      const char* w = kWords[rng.below(20)];
      for (; *w != '\0' && i < b.size; ++w) b.data[i++] = static_cast<std::uint8_t>(*w);
    } else if (kind < 12) {
      std::uint64_t v = rng.next();
      for (int k = 0; k < 8 && i < b.size; ++k, v >>= 8) b.data[i++] = static_cast<std::uint8_t>(v);
    } else if (kind < 13) {
      const std::size_t run = std::min<std::size_t>(b.size - i, rng.between(4, 64));
      std::memset(b.data + i, static_cast<int>(rng.below(256)), run);
      i += run;
    } else if (i > 256) {
      const std::size_t from = i - rng.between(16, std::min<std::size_t>(i, 60000));
      const std::size_t len = std::min<std::size_t>({b.size - i, i - from, rng.between(8, 200)});
      std::memmove(b.data + i, b.data + from, len);
      i += len;
    }
  }
}

// ------------------------------------------------------------- the passes --

void delta_encode(const Buffer& in, Buffer& out) {
  std::uint8_t prev = 0;
  for (std::size_t i = 0; i < in.size; ++i) {
    out.data[i] = static_cast<std::uint8_t>(in.data[i] - prev);
    prev = in.data[i];
  }
  out.size = in.size;
}

void delta_decode(Buffer& b) {
  std::uint8_t prev = 0;
  for (std::size_t i = 0; i < b.size; ++i) {
    prev = static_cast<std::uint8_t>(prev + b.data[i]);
    b.data[i] = prev;
  }
}

// LZ77: a literal run is a byte 0..127 (length - 1) then the bytes; a match
// is a byte 0x80 | (length - 4) then a 16-bit little-endian distance.
constexpr std::size_t kMinMatch = 4, kMaxMatch = 131, kMaxLiterals = 128, kWindow = 65535;
constexpr int kHashBits = 16;

std::uint32_t hash4(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return (v * 2654435761u) >> (32 - kHashBits);
}

Buffer compress(const Buffer& in) {
  Buffer out = Buffer::allocate(std::max<std::size_t>(64, in.size / 16));
  auto* table = static_cast<std::uint32_t*>(std::malloc(sizeof(std::uint32_t) << kHashBits));
  if (table == nullptr) throw std::bad_alloc();
  std::fill(table, table + (1u << kHashBits), 0xffffffffu);
  std::size_t literal_start = 0, i = 0;
  auto flush_literals = [&](std::size_t end) {
    while (literal_start < end) {
      const std::size_t n = std::min(kMaxLiterals, end - literal_start);
      out.reserve_more(n + 1);
      out.data[out.size++] = static_cast<std::uint8_t>(n - 1);
      std::memcpy(out.data + out.size, in.data + literal_start, n);
      out.size += n;
      literal_start += n;
    }
  };
  while (i + kMinMatch <= in.size) {
    const std::uint32_t h = hash4(in.data + i);
    const std::uint32_t candidate = table[h];
    table[h] = static_cast<std::uint32_t>(i);
    if (candidate != 0xffffffffu && i - candidate <= kWindow &&
        std::memcmp(in.data + candidate, in.data + i, kMinMatch) == 0) {
      std::size_t len = kMinMatch;
      while (len < kMaxMatch && i + len < in.size && in.data[candidate + len] == in.data[i + len]) ++len;
      flush_literals(i);
      out.reserve_more(3);
      const std::size_t distance = i - candidate;
      out.data[out.size++] = static_cast<std::uint8_t>(0x80 | (len - kMinMatch));
      out.data[out.size++] = static_cast<std::uint8_t>(distance);
      out.data[out.size++] = static_cast<std::uint8_t>(distance >> 8);
      i += len;
      literal_start = i;
    } else {
      ++i;
    }
  }
  flush_literals(in.size);
  std::free(table);
  return out;
}

// nullptr data on a malformed stream.
Buffer decompress(const Buffer& in) {
  Buffer out = Buffer::allocate(std::max<std::size_t>(64, in.size * 2));
  std::size_t i = 0;
  while (i < in.size) {
    const std::uint8_t token = in.data[i++];
    if (token < 0x80) {
      const std::size_t n = token + 1u;
      if (i + n > in.size) break;
      out.reserve_more(n);
      std::memcpy(out.data + out.size, in.data + i, n);
      out.size += n;
      i += n;
    } else {
      if (i + 2 > in.size) break;
      const std::size_t len = (token & 0x7f) + kMinMatch;
      const std::size_t distance = in.data[i] | static_cast<std::size_t>(in.data[i + 1]) << 8;
      i += 2;
      if (distance == 0 || distance > out.size) break;
      out.reserve_more(len);
      for (std::size_t k = 0; k < len; ++k, ++out.size) out.data[out.size] = out.data[out.size - distance];
    }
  }
  if (i != in.size) out.release();
  return out;
}

// ------------------------------------------------------------ the program --

constexpr int kFilesPerScale = 6;
constexpr std::size_t kCacheSlots = 10;
constexpr double kMinSize = 4096, kMaxSize = 8 << 20;

std::uint64_t run(const Options& o) {
  Rng rng(o.seed);
  Checksum sum;
  std::vector<Buffer> cache;  // compressed images and some inputs, evicted at random
  std::uint64_t bytes_in = 0, bytes_out = 0, merges = 0;
  for (std::uint64_t f = 0; f < o.scale * kFilesPerScale; ++f) {
    const double log_size = std::log(kMinSize) + rng.unit() * (std::log(kMaxSize) - std::log(kMinSize));
    const auto size = static_cast<std::size_t>(std::exp(log_size));
    Buffer input = Buffer::allocate(size);
    input.size = size;
    generate(input, rng);

    Buffer delta = Buffer::allocate(size);
    delta_encode(input, delta);
    Buffer packed = compress(delta);
    delta.release();
    Buffer unpacked = decompress(packed);
    if (unpacked.data != nullptr) delta_decode(unpacked);
    if (unpacked.data == nullptr || unpacked.size != input.size || std::memcmp(unpacked.data, input.data, size) != 0) {
      std::fprintf(stderr, "strata-wl-bigbuf: file %llu did not survive compression\n",
                   static_cast<unsigned long long>(f));
      std::exit(1);
    }
    unpacked.release();
    bytes_in += size;
    bytes_out += packed.size;
    sum.add(size);
    sum.add(packed.size);
    sum.add(hash_bytes(packed.data, packed.size));

    packed.resize_capacity(packed.size);  // shrink to fit
    cache.push_back(packed);
    if (rng.chance(0.3)) {
      cache.push_back(input);
    } else {
      input.release();
    }
    if (cache.size() >= 2 && rng.chance(0.15)) {  // concatenate two cached images
      Buffer& a = cache[cache.size() - 2];
      Buffer b = cache.back();
      cache.pop_back();
      a.reserve_more(b.size);
      std::memcpy(a.data + a.size, b.data, b.size);
      a.size += b.size;
      b.release();
      sum.add(hash_bytes(a.data, a.size));
      ++merges;
    }
    while (cache.size() > kCacheSlots) {
      const std::size_t victim = rng.below(cache.size());
      cache[victim].release();
      cache.erase(cache.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  for (Buffer& b : cache) {
    sum.add(hash_bytes(b.data, b.size));
    b.release();
  }
  std::printf("bigbuf: %llu files, %llu bytes in, %llu bytes compressed, %llu merges\n",
              static_cast<unsigned long long>(o.scale * kFilesPerScale), static_cast<unsigned long long>(bytes_in),
              static_cast<unsigned long long>(bytes_out), static_cast<unsigned long long>(merges));
  return sum.value();
}

}  // namespace

int main(int argc, char** argv) { return strata::workload::main(argc, argv, "bigbuf", {Mode::naive}, run); }
