// A tiny program on libstrata's prefixed API, run by test_environment.cpp and
// test_checked.cpp with different STRATA_* settings. argv[1] says what to do.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "strata/strata.h"

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "work";
  if (std::strcmp(what, "work") == 0) {  // allocate a little of everything, free it, exit 0
    void* p[6] = {strata_malloc(24), strata_malloc(300), strata_malloc(5000), strata_malloc(100000),
                  strata_malloc(3 << 20), strata_malloc(48)};
    for (void* q : p)
      if (!q) return 1;
    std::memset(p[3], 1, 100000);
    for (int i = 0; i < 5; ++i) strata_free(p[i]);  // p[5] stays live for the statistics
    std::puts("probe: done");
    return 0;
  }
  if (std::strcmp(what, "double-free-small") == 0) {
    void* p = strata_malloc(40);
    std::printf("probe: %p\n", p);
    std::fflush(stdout);
    strata_free(p);
    strata_free(p);
    return 0;
  }
  if (std::strcmp(what, "double-free-large") == 0) {
    void* p = strata_malloc(50000);
    std::printf("probe: %p\n", p);
    std::fflush(stdout);
    strata_free(p);
    strata_free(p);
    return 0;
  }
  if (std::strcmp(what, "foreign") == 0) {
    static char not_ours[64];
    std::printf("probe: %p\n", static_cast<void*>(not_ours + 16));
    std::fflush(stdout);
    strata_free(not_ours + 16);
    return 0;
  }
  if (std::strcmp(what, "stats-call") == 0) {
    void* p = strata_malloc(64);
    strata_stats_print();
    strata_free(p);
    return 0;
  }
  return 3;
}
