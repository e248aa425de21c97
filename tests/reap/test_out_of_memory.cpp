// Real out-of-memory (not just absurd sizes): with the address space limited
// by RLIMIT_AS, reap allocations and reap creation fail with NULL + ENOMEM,
// nothing aborts, and the reap keeps working once memory is back. Runs in a
// forked child so the limit stays there. Not under ASan/TSan (their shadow
// memory needs the address space): labelled no-asan, no-tsan.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "strata/reap.h"

namespace {

// Exit codes tell the parent which check failed.
[[noreturn]] void run_out_of_memory() {
  strata_reap* reap = strata_reap_create(nullptr);
  if (reap == nullptr) std::_Exit(10);
  auto* keep = static_cast<char*>(strata_reap_malloc(reap, 64));
  std::strcpy(keep, "intact");
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(11);
  // Leave ~96 MiB above what the process has mapped now.
  std::size_t mapped = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long pages = 0;
    if (std::fscanf(f, "%lu", &pages) == 1) mapped = pages * 4096ul;
    std::fclose(f);
  }
  limit.rlim_cur = mapped + (96ul << 20);
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(12);

  std::vector<void*> big;
  for (;;) {  // large objects (own mappings) until the kernel says no
    errno = 0;
    void* p = strata_reap_malloc(reap, 1u << 20);
    if (p == nullptr) {
      if (errno != ENOMEM) std::_Exit(13);
      break;
    }
    big.push_back(p);
    if (big.size() > 1000) std::_Exit(14);  // the limit did not bite
  }
  std::size_t small = 0;
  for (;;) {  // then small objects until the chunks cannot grow
    errno = 0;
    if (strata_reap_malloc(reap, 48) == nullptr) {
      if (errno != ENOMEM) std::_Exit(15);
      break;
    }
    if (++small > 100000000) std::_Exit(16);
  }
  errno = 0;
  strata_reap* more = nullptr;
  for (int i = 0; i < 100000 && (more = strata_reap_create(reap)) != nullptr; ++i) {
  }
  if (more != nullptr || errno != ENOMEM) std::_Exit(17);
  if (std::strcmp(keep, "intact") != 0) std::_Exit(18);
  for (void* p : big) strata_reap_free(reap, p);  // memory comes back...
  if (strata_reap_malloc(reap, 1u << 20) == nullptr) std::_Exit(19);  // ...and is usable
  if (strata_reap_malloc(reap, 48) == nullptr) std::_Exit(20);
  strata_reap_clear(reap);
  if (strata_reap_malloc(reap, 100) == nullptr) std::_Exit(21);
  strata_reap_destroy(reap);
  std::_Exit(0);
}

TEST(ReapOutOfMemory, FailsWithEnomemAndRecovers) {
  EXPECT_EXIT(run_out_of_memory(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
