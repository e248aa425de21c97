// Contender "inline": the region a C/C++ programmer writes by hand, inline in
// the program — the baseline every ratio is taken against. A bump pointer and
// a limit; 64 KiB chunks from malloc, kept across resets in a list; reset =
// rewind to the first chunk. The bump is inline in the workload loop; only
// moving to the next chunk is a call. No per-object header, no free.
// STRATA_BENCH_INLINE_GRANULE ("inline8": 8): sizes round up to it instead of
// 16, the yardstick of a sized reap, which rounds to 8.
#include <cstdlib>

#include "workload.hpp"

#ifndef STRATA_BENCH_INLINE_GRANULE
#define STRATA_BENCH_INLINE_GRANULE 16
#endif

namespace {

constexpr std::size_t kGranule = STRATA_BENCH_INLINE_GRANULE;

class InlineRegion {
 public:
  static constexpr std::size_t kChunkBytes = 64 * 1024;

  InlineRegion() = default;
  InlineRegion(const InlineRegion&) = delete;
  InlineRegion& operator=(const InlineRegion&) = delete;
  ~InlineRegion() {
    for (Chunk* c = first_; c != nullptr;) {
      Chunk* next = c->next;
      std::free(c);
      c = next;
    }
  }

  void* alloc(std::size_t size) {
    const std::size_t rounded = (size + kGranule - 1) & ~(kGranule - 1);
    if (rounded <= static_cast<std::size_t>(limit_ - top_) && rounded >= size) {
      char* p = top_;
      top_ += rounded;
      return p;
    }
    return nextChunk(rounded < size ? SIZE_MAX : rounded);
  }

  void reset() {  // rewind: the chunks stay for the next round
    current_ = nullptr;
    top_ = limit_ = nullptr;
  }

  std::size_t held() const { return held_; }

 private:
  struct alignas(16) Chunk {
    Chunk* next;
    std::size_t bytes;
  };

  [[gnu::noinline]] void* nextChunk(std::size_t rounded) {
    if (rounded > SIZE_MAX / 2) return nullptr;
    Chunk* c = current_ == nullptr ? first_ : current_->next;
    while (c != nullptr && c->bytes - sizeof(Chunk) < rounded) c = c->next;  // kept chunks first
    if (c == nullptr) {
      const std::size_t bytes = rounded + sizeof(Chunk) > kChunkBytes ? rounded + sizeof(Chunk) : kChunkBytes;
      c = static_cast<Chunk*>(std::malloc(bytes));
      if (c == nullptr) return nullptr;
      c->bytes = bytes;
      c->next = nullptr;
      (last_ == nullptr ? first_ : last_->next) = c;
      last_ = c;
      held_ += bytes;
    }
    current_ = c;
    top_ = reinterpret_cast<char*>(c + 1) + rounded;
    limit_ = reinterpret_cast<char*>(c) + c->bytes;
    return c + 1;
  }

  char* top_ = nullptr;
  char* limit_ = nullptr;
  Chunk* current_ = nullptr;
  Chunk* first_ = nullptr;
  Chunk* last_ = nullptr;
  std::size_t held_ = 0;
};

struct Inline {
  static constexpr const char* kName = kGranule == 16 ? "inline" : "inline8";
  static constexpr bool kCanFree = false;
  static constexpr std::size_t kAlignment = kGranule;

  void* alloc(std::size_t size) { return region.alloc(size); }
  void free(void*, std::size_t) {}
  void clear() { region.reset(); }
  std::optional<std::size_t> held() const { return region.held(); }

  InlineRegion region;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Inline>(argc, argv); }
