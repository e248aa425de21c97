// Out of memory is NULL + ENOMEM, never an abort, for every kind of object;
// after freeing, allocation works again. Runs in a forked child under
// setrlimit(RLIMIT_AS). Labelled no-asan no-tsan (sanitizers reserve terabytes
// of address space).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "address_space.hpp"
#include "huge_heap.hpp"
#include "strata/strata.h"

namespace {

// Exit code: 0 ok; otherwise the stage that misbehaved.
int exhaust(std::size_t size, std::vector<void*>& live) {
  for (;;) {
    errno = 0;
    void* p = strata_malloc(size);
    if (!p) return errno == ENOMEM ? 0 : 10;
    std::memset(p, 1, size < 4096 ? size : 4096);
    if (live.size() == live.capacity()) return 11;  // cannot grow without libc's malloc
    live.push_back(p);
  }
}

// reserve_first: a huge object is allocated (and freed) before the limit, so
// that huge objects have a region of address space reserved already.
int child(bool reserve_first, std::size_t headroom = std::size_t{160} << 20) {
  std::vector<void*> live;
  live.reserve(1 << 22);
  if (reserve_first) {
    void* p = strata_malloc(std::size_t{5} << 20);
    if (!p) return 21;
    std::memset(p, 1, std::size_t{5} << 20);
    strata_free(p);
  }
  struct rlimit limit{};
  limit.rlim_cur = limit.rlim_max = current_address_space() + headroom;
  if (setrlimit(RLIMIT_AS, &limit) != 0) return 20;
  if (!reserve_first) {  // a region reserved under the limit takes at most an eighth of it
    void* p = strata_malloc(std::size_t{5} << 20);
    if (!p) return 22;
    strata_free(p);
    if (strata::malloc_detail::huge_stats().reserved_bytes > limit.rlim_cur / 8) return 23;
  }
  for (std::size_t size : {std::size_t{16} << 20, std::size_t{300000}, std::size_t{20000}, std::size_t{1000},
                           std::size_t{16}}) {
    if (int e = exhaust(size, live)) return e + 1;
  }
  errno = 0;
  if (strata_calloc(1 << 20, 64) != nullptr || errno != ENOMEM) return 30;
  void* keep = live.back();
  live.pop_back();
  errno = 0;
  if (strata_realloc(keep, std::size_t{64} << 20) != nullptr || errno != ENOMEM) return 31;  // keep survives
  strata_free(keep);
  for (void* p : live) strata_free(p);
  live.clear();
  // memory is back: every size works again
  for (std::size_t size : {std::size_t{16}, std::size_t{20000}, std::size_t{300000}, std::size_t{16} << 20}) {
    void* p = strata_malloc(size);
    if (!p) return 40;
    std::memset(p, 2, size);
    strata_free(p);
  }
  return 0;
}

void run_child(bool reserve_first, std::size_t headroom = std::size_t{160} << 20) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(child(reserve_first, headroom));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status) << " instead of getting NULL";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "stage code " << WEXITSTATUS(status) << " (see test_oom.cpp)";
}

// Too little address space for a region: huge objects get mappings of their
// own, and a freed one is reused in place (the fallback's cache).
int child_without_region() {
  struct rlimit limit{};
  limit.rlim_cur = limit.rlim_max = current_address_space() + (std::size_t{64} << 20);
  if (setrlimit(RLIMIT_AS, &limit) != 0) return 20;
  constexpr std::size_t kSize = std::size_t{20} << 20;
  auto before = strata::malloc_detail::huge_stats();
  void* a = strata_malloc(kSize);
  if (!a) return 50;
  std::memset(a, 1, kSize);
  if (strata::malloc_detail::huge_stats().reserved_bytes != 0) return 51;
  strata_free(a);
  void* b = strata_malloc(kSize - 100000);
  if (b != a) return 52;
  if (strata::malloc_detail::huge_stats().reused_bytes - before.reused_bytes < kSize) return 53;
  std::memset(b, 2, kSize - 100000);
  strata_free(b);
  void* c = strata_malloc(std::size_t{100} << 20);  // beyond the limit
  if (c != nullptr || errno != ENOMEM) return 54;
  return 0;
}

TEST(StrataOutOfMemory, WithoutARegionAFreedMappingIsReusedInPlace) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(child_without_region());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "stage code " << WEXITSTATUS(status) << " (see test_oom.cpp)";
}

TEST(StrataOutOfMemory, NullWithEnomemForEverySizeThenRecovers) { run_child(false); }

// The region reserved for huge objects fills up, then the limit is reached
// by the mappings of their own that follow: still NULL + ENOMEM.
TEST(StrataOutOfMemory, NullWithEnomemWhenTheHugeRegionWasReservedBeforeTheLimit) { run_child(true); }

// With 1 GiB of headroom a smaller region is reserved under the limit (an
// eighth of it); it fills up like any other, then mappings of their own.
TEST(StrataOutOfMemory, NullWithEnomemWithARegionSizedToTheLimit) { run_child(false, std::size_t{1} << 30); }

}  // namespace
