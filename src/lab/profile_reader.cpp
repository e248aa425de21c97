#include "profile_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "lab_memory.hpp"

namespace strata::lab {
namespace {

struct Cursor {
  const char* at;
  const char* end;

  void skip_space() noexcept {
    while (at < end && (*at == ' ' || *at == '\n' || *at == '\r' || *at == '\t')) ++at;
  }
  bool eat(char c) noexcept {
    skip_space();
    if (at < end && *at == c) {
      ++at;
      return true;
    }
    return false;
  }
  bool number(std::uint64_t* out) noexcept {
    skip_space();
    std::uint64_t v = 0;
    const char* start = at;
    while (at < end && *at >= '0' && *at <= '9') {
      if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, unsigned(*at - '0'), &v)) return false;
      ++at;
    }
    *out = v;
    return at != start;
  }
  // Positions just after `"key":`, searching from the start; false if absent.
  bool find_key(const char* begin, const char* key) noexcept {
    const std::size_t len = std::strlen(key);
    for (const char* p = begin; p + len + 2 <= end; ++p) {
      if (p[0] == '"' && std::memcmp(p + 1, key, len) == 0 && p[len + 1] == '"') {
        at = p + len + 2;
        return eat(':');
      }
    }
    return false;
  }
};

}  // namespace

const char* read_size_distribution(const char* path, SizeDistribution* out) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open the profile";
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    return "the profile is empty";
  }
  const auto length = static_cast<std::size_t>(st.st_size);
  auto* text = static_cast<char*>(map_lab_memory(length));
  std::size_t got = 0;
  while (text != nullptr && got < length) {
    const ssize_t n = ::read(fd, text + got, length - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (text == nullptr || got != length) {
    unmap_lab_memory(text, length);
    return "cannot read the profile";
  }
  const char* error = nullptr;
  Cursor c{text, text + length};
  if (!c.find_key(text, "peak_live_objects") || !c.number(&out->peak_live_objects)) {
    error = "no integer \"peak_live_objects\"";
  } else if (!c.find_key(text, "size_histogram") || !c.eat('{')) {
    error = "no object \"size_histogram\"";
  } else {
    // Entries: "size": count. Count them first, then fill the arrays.
    std::size_t entries = 0;
    for (const char* p = c.at; p < c.end && *p != '}'; ++p) entries += (*p == ':');
    out->size = static_cast<std::uint64_t*>(map_lab_memory((entries + 1) * sizeof(std::uint64_t)));
    out->cumulative = static_cast<std::uint64_t*>(map_lab_memory((entries + 1) * sizeof(std::uint64_t)));
    if (out->size == nullptr || out->cumulative == nullptr) error = "no memory for the histogram";
    std::uint64_t running = 0;
    bool first = true;
    while (error == nullptr && !c.eat('}')) {
      std::uint64_t size = 0, count = 0;
      if ((!first && !c.eat(',')) || !c.eat('"') || !c.number(&size) || !c.eat('"') || !c.eat(':') ||
          !c.number(&count)) {
        error = "malformed \"size_histogram\" (expected \"size\": count pairs)";
        break;
      }
      first = false;
      if (count == 0) continue;
      if (out->sizes > 0 && size <= out->size[out->sizes - 1]) {
        error = "\"size_histogram\" sizes are not in ascending order";
        break;
      }
      running += count;
      out->size[out->sizes] = size;
      out->cumulative[out->sizes] = running;
      ++out->sizes;
    }
  }
  unmap_lab_memory(text, length);
  return error;
}

std::uint64_t sample_size(const SizeDistribution& d, std::uint64_t random) noexcept {
  const std::uint64_t target = random % d.total();  // bias below 2^-40 for realistic totals
  std::size_t lo = 0, hi = d.sizes - 1;
  while (lo < hi) {  // first i with cumulative[i] > target
    const std::size_t mid = lo + (hi - lo) / 2;
    if (d.cumulative[mid] > target)
      hi = mid;
    else
      lo = mid + 1;
  }
  return d.size[lo];
}

}  // namespace strata::lab
