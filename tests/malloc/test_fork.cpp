// fork() while other threads allocate: the child must be able to allocate,
// free and exit cleanly (the atfork handlers hold every allocator lock across
// fork). Labelled `threads`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "strata/strata.h"

namespace {

// What the child does: every kind of object, then exit 0 if all went well.
int child_work() {
  void* keep[64];
  int n = 0;
  for (std::size_t size : {8u, 100u, 4000u, 20000u, 500000u, 3000000u}) {
    for (int i = 0; i < 8; ++i) {
      void* p = strata_malloc(size);
      if (!p) return 1;
      std::memset(p, 0x33, size);
      keep[n++] = p;
    }
  }
  for (int i = 0; i < n; ++i) {
    if (static_cast<unsigned char*>(keep[i])[0] != 0x33) return 2;
    strata_free(keep[i]);
  }
// The child can even start a thread. Not under a sanitizer: thread creation goes
// through the sanitizer's own allocator and thread registry, which are not
// fork-safe (ASan's allocator lock, held by a parent thread at fork, deadlocked it).
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  std::thread([] { strata_free(strata_malloc(64)); }).join();
#endif
  return 0;
}

TEST(StrataFork, ChildAllocatesWhileParentThreadsAllocate) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < 3; ++t)
    workers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<void*> live;
      live.reserve(128);  // the loop then never calls the system malloc, only libstrata
      while (!stop.load(std::memory_order_relaxed)) {
        std::size_t size = rng() % 10 == 0 ? 10000 + rng() % 300000 : 1 + rng() % 500;
        live.push_back(strata_malloc(size));
        if (live.size() > 100) {
          for (void* p : live) strata_free(p);
          live.clear();
        }
      }
      for (void* p : live) strata_free(p);
    });
  for (int i = 0; i < 20; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(child_work());
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << i << " died (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                   << ")";
    ASSERT_EQ(WEXITSTATUS(status), 0) << "child " << i;
  }
  stop = true;
  for (auto& t : workers) t.join();
}

}  // namespace
