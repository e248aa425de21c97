// Start-up, thread exit and fork: reading the options once, the thread-exit
// destructor that abandons a heap, the fork handlers that hold every lock, a
// thread's first heap, and the statistics at exit.
#include <fcntl.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>

#include "allocator.hpp"
#include "fast_paths.hpp"
#include "options.hpp"

extern char** environ;

namespace strata::malloc_detail {

namespace {

std::atomic<int> g_init_state{0};  // 0: not yet, 1: running, 2: done
Options g_options;
int g_stats_fd = 2;
pthread_key_t g_thread_key;
std::atomic<bool> g_thread_key_ready{false};

void on_thread_exit(void* value) noexcept {
  auto* heap = static_cast<PerThreadHeap*>(value);
  // Frees after this point (other destructors) take the remote path; a malloc
  // claims a heap again and re-arms this destructor.
  if (tl_heap == heap) tl_heap = &g_no_heap;
  tl_heap_given_up = true;
  heap_abandon(heap);
}

void fork_prepare() noexcept {
  heaps_lock();
  large_lock_all();
  huge_lock();
  segment_range_lock();
}
void fork_release() noexcept {  // parent and child: the forking thread holds every lock
  segment_range_unlock();
  huge_unlock();
  large_unlock_all();
  heaps_unlock();
}

// Idempotent; tolerates re-entry (pthread_atfork may call malloc while it runs:
// the allocator works before and during initialization, which only reads the
// environment and registers hooks).
void ensure_initialized() noexcept {
  if (STRATA_LIKELY(g_init_state.load(std::memory_order_acquire) == 2)) return;
  // The segment range before the first segment is mapped, even when the
  // options cannot be read yet (a malloc from the dynamic loader).
  AddressRange range = reserve_segment_range();
  int expected = 0;
  if (!g_init_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return;
  if (!environ) {  // too early (the dynamic loader); try again on a later call
    g_init_state.store(0, std::memory_order_release);
    return;
  }
  g_options = read_options();
  if (!checked_mode()) open_free_gate(range);  // checked mode: every free takes the checks
  if (g_options.show_stats) {
    // Programs such as coreutils close stderr in an atexit handler, before the
    // statistics are printed: keep a private copy (close-on-exec, high number).
    int fd = ::fcntl(2, F_DUPFD_CLOEXEC, 200);
    if (fd >= 0) g_stats_fd = fd;
  }
  if (pthread_key_create(&g_thread_key, on_thread_exit) == 0) g_thread_key_ready.store(true, std::memory_order_release);
  pthread_atfork(fork_prepare, fork_release, fork_release);
  if (g_options.verbose) print_config(g_options);
  g_init_state.store(2, std::memory_order_release);
}

__attribute__((constructor)) void initialize_at_load() { ensure_initialized(); }
__attribute__((destructor)) void report_at_exit() {
  if (g_options.show_stats) print_stats_to(g_stats_fd);
}

}  // namespace

thread_local constinit bool tl_heap_given_up __attribute__((tls_model("initial-exec"))) = false;

PerThreadHeap* claim_thread_heap() noexcept {
  ensure_initialized();
  if (PerThreadHeap* heap = tl_heap; heap != &g_no_heap) return heap;  // initialization allocated, and claimed one
  PerThreadHeap* heap = heap_claim();
  if (!heap) {
    errno = ENOMEM;
    return nullptr;
  }
  tl_heap = heap;  // before setspecific, which may itself allocate
  if (g_thread_key_ready.load(std::memory_order_acquire)) pthread_setspecific(g_thread_key, heap);
  return heap;
}

}  // namespace strata::malloc_detail
