// The allocation sequences of the 2001 paper's §5 special-purpose allocators,
// the same for the layer and for the original it replaces:
//   parser_workload  197.parser's stack-like use of xalloc: small objects
//                    (8-40 B; 197.parser's average is 21 B), mostly freed
//                    newest first, sometimes just below the top, and the whole
//                    heap reset at the end of each sentence;
//   gcc_workload     gcc's parse phase on obstacks: nested scopes whose exit
//                    frees everything allocated in them, objects of 16-128 B,
//                    and symbol names grown one byte at a time.
// Each returns a checksum of bytes read back, which depends only on the sequence.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <strata/random.hpp>

namespace strata::bench {

// X: malloc(n), free(p), clear().
template <class X>
std::uint64_t parser_workload(X& heap, std::size_t operations) {
  strata::Random rng(0x5EED0197ull);
  std::vector<unsigned char*> live;
  std::uint64_t checksum = 0;
  for (std::size_t i = 0; i < operations; ++i) {
    const std::uint64_t r = rng.next();
    const unsigned pick = static_cast<unsigned>(r % 1000);
    if (pick < 550 || live.empty()) {
      const std::size_t size = 8 + (r >> 16) % 33;
      auto* p = static_cast<unsigned char*>(heap.malloc(size));
      if (p == nullptr) return 0;
      std::memset(p, static_cast<int>(i), size);
      live.push_back(p);
    } else if (pick < 998) {
      // Newest first, one time in ten one of the few below it (xalloc marks it free).
      const std::size_t back = pick < 950 ? 0 : (r >> 16) % (live.size() < 8 ? live.size() : 8);
      const std::size_t at = live.size() - 1 - back;
      checksum += live[at][0];
      heap.free(live[at]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
    } else {  // the end of a sentence: everything at once
      for (unsigned char* p : live) checksum += p[0];
      heap.clear();
      live.clear();
    }
  }
  heap.clear();
  return checksum;
}

// O: alloc(n), grow1(byte), finish(), free_to(p) (p and everything after it).
template <class O>
std::uint64_t gcc_workload(O& obstack, std::size_t operations) {
  constexpr std::size_t kMaxDepth = 32;
  strata::Random rng(0x5EED0176ull);
  std::vector<unsigned char*> scopes;  // each scope's first object
  std::uint64_t checksum = 0;
  auto enter = [&] {
    auto* mark = static_cast<unsigned char*>(obstack.alloc(16));
    mark[0] = static_cast<unsigned char>(scopes.size());
    scopes.push_back(mark);
  };
  enter();
  for (std::size_t i = 0; i < operations; ++i) {
    const std::uint64_t r = rng.next();
    const unsigned pick = static_cast<unsigned>(r % 100);
    if (pick < 7 && scopes.size() < kMaxDepth) {
      enter();
    } else if (pick < 15) {  // leave the innermost scope (the outermost is left and entered again)
      checksum += scopes.back()[0];
      obstack.free_to(scopes.back());
      scopes.pop_back();
      if (scopes.empty()) enter();
    } else if (pick < 45) {  // a symbol's name, grown byte by byte
      const std::size_t length = 4 + (r >> 16) % 21;
      for (std::size_t c = 0; c < length; ++c) obstack.grow1(static_cast<char>('a' + (r >> (20 + c % 40)) % 26));
      const auto* name = static_cast<unsigned char*>(obstack.finish());
      checksum += name[length - 1];
    } else {
      const std::size_t size = 16 + (r >> 16) % 113;
      auto* p = static_cast<unsigned char*>(obstack.alloc(size));
      std::memset(p, static_cast<int>(i), size);
      checksum += p[size / 2];
    }
  }
  obstack.free_to(scopes.front());
  return checksum;
}

}  // namespace strata::bench
