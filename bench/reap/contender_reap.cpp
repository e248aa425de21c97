// Contender "reap" (and, built against the region emulator, "emulator"): one
// strata reap as the region — strata_reap_malloc, strata_reap_free,
// strata_reap_clear.  The same source is linked once with strata::reap and
// once with the region emulator (paper §5.1: every object a glibc malloc,
// clear frees each one); STRATA_BENCH_REAP_NAME tells them apart.
// STRATA_BENCH_REAP_SIZED ("sized-reap"): a sized reap — strata_reap_malloc_sized,
// strata_reap_free_sized (the workload knows every size), no tags.
#include <strata/reap.h>

#include "workload.hpp"

#ifndef STRATA_BENCH_REAP_NAME
#define STRATA_BENCH_REAP_NAME "reap"
#endif

namespace {

#ifdef STRATA_BENCH_REAP_SIZED
constexpr bool kSized = true;
#else
constexpr bool kSized = false;
#endif

struct Reap {
  static constexpr const char* kName = STRATA_BENCH_REAP_NAME;
  static constexpr bool kCanFree = true;
  // Promised by strata/reap.h: 16 bytes, a sized reap's 8 (its granule).
  static constexpr std::size_t kAlignment = kSized ? STRATA_REAP_SIZED_GRANULE : 16;

  Reap() : reap(kSized ? strata_reap_create_sized(nullptr) : strata_reap_create(nullptr)) {
    if (reap == nullptr) strata::bench_reap::fail("strata_reap_create failed");
  }
  Reap(const Reap&) = delete;
  Reap& operator=(const Reap&) = delete;
  ~Reap() { strata_reap_destroy(reap); }

  void* alloc(std::size_t size) {
    if constexpr (kSized) return strata_reap_malloc_sized(reap, size);
    return strata_reap_malloc(reap, size);
  }
  void free(void* p, std::size_t size) {
    if constexpr (kSized) return strata_reap_free_sized(reap, p, size);
    strata_reap_free(reap, p);
  }
  void clear() { strata_reap_clear(reap); }
  // The reap: bytes of chunks and large objects it holds from the system.
  // The emulator: its estimate (objects + malloc headers + its pointer array).
  std::optional<std::size_t> held() const {
    strata_reap_stats stats;
    strata_reap_get_stats(reap, &stats);
    return stats.bytes_held;
  }

  strata_reap* reap;
};

}  // namespace

int main(int argc, char** argv) { return strata::bench_reap::contender_main<Reap>(argc, argv); }
