/* Thread churn with cross-thread transfers, in the spirit of mimalloc's
 * test-stress: threads are created, allocate a lot, pass objects to each other,
 * free in an order unrelated to the allocation order, and exit -- every
 * iteration, with a fresh set of threads.
 *
 * Each iteration starts --threads threads. Each thread keeps a private window
 * of slots: every step allocates an object (mostly 16-256 B, sometimes up to
 * 4 KiB, rarely 8-64 KiB) into a random slot, freeing the object it
 * displaces. One step in --transfer-every swaps the new object with one in a
 * shared transfer table instead (an atomic exchange), and keeps whatever it
 * gets back -- an object another thread, often an exited one, allocated. When
 * its steps are done a thread frees its window slot by slot (not in allocation
 * order) and exits. The transfer table lives across iterations and is emptied
 * at the end, so objects outlive their threads and frees land in the heaps of
 * threads that are gone.
 *
 * The objects allocated depend only on the seed (each thread draws sizes and
 * decisions from its own generator), so the checksum -- the sum of the tags of
 * all objects freed -- is the same under every allocator. */
#include <pthread.h>
#include <stdatomic.h>

#include "bench_common.h"

enum { kMinSize = 16, kMaxSize = 64 * 1024, kMaxThreads = 64, kPeakSampleEvery = 64 };

static bench_option options[] = {
    {"iterations", 100, "rounds of thread creation"},
    {"threads", 8, "threads per iteration (<= 64)"},
    {"ops", 10000, "allocations per thread per iteration"},
    {"window", 2000, "slots in each thread's private window"},
    {"transfer", 4096, "slots in the shared transfer table"},
    {"transfer-every", 4, "one step in N swaps its object through the transfer table"},
    {"seed", 1, "random seed"},
};

typedef struct {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by whoever ran as this thread number */
  uint64_t checksum;
  int64_t peak_bytes;
} thread_account;

static struct {
  uint64_t ops, window, transfer, transfer_every, seed, iterations, threads;
  int verify_full;
  _Atomic(unsigned char *) *table;
  unsigned char **windows; /* threads * window slots, bookkeeping from mmap */
  thread_account accounts[kMaxThreads];
} g;

/* Mostly small, sometimes medium, rarely large: the mix of a busy program. */
static size_t draw_size(bench_rng *rng) {
  uint64_t r = bench_next(rng);
  unsigned kind = (unsigned)(r & 255);
  r >>= 8;
  if (kind < 224) return 16 + (size_t)(r % (256 - 16 + 1));
  if (kind < 255) return 256 + (size_t)(r % (4096 - 256 + 1));
  return 8192 + (size_t)(r % (kMaxSize - 8192 + 1));
}

static void check_and_free(thread_account *a, unsigned char *p) {
  a->checksum += bench_check_and_free(p, kMinSize, kMaxSize, g.verify_full, &a->net_bytes);
}

static void sample_peak(thread_account* a) {
  bench_sample_peak(&a->peak_bytes, &g.accounts[0].net_bytes, sizeof g.accounts[0], g.threads);
}

static void *run_thread(void *argp) {
  const bench_thread_arg* arg = argp;
  thread_account *a = &g.accounts[arg->index];
  unsigned char **window = g.windows + arg->index * g.window;
  bench_rng rng = {g.seed * 0x10001 + arg->iteration * kMaxThreads + arg->index};
  bench_rng place = {~rng.state};
  uint64_t seq = ((arg->iteration * kMaxThreads + arg->index) << 20);
  for (uint64_t i = 0; i < g.ops; i++) {
    size_t size = draw_size(&rng);
    unsigned char *p = bench_new_object(++seq, size);
    bench_net_add(&a->net_bytes, (int64_t)size);
    if (bench_next(&rng) % g.transfer_every == 0) {
      uint64_t slot = bench_next(&place) % g.transfer;
      p = atomic_exchange_explicit(&g.table[slot], p, memory_order_acq_rel);
      if (p == NULL) continue;
    }
    uint64_t slot = bench_next(&place) % g.window;
    if (window[slot] != NULL) check_and_free(a, window[slot]);
    window[slot] = p;
    if (i % kPeakSampleEvery == 0) sample_peak(a);
  }
  sample_peak(a);
  for (uint64_t s = 0; s < g.window; s++) { /* slot order, not allocation order */
    if (window[s] != NULL) check_and_free(a, window[s]);
    window[s] = NULL;
  }
  return NULL;
}

int main(int argc, char **argv) {
  g.verify_full = bench_parse_iteration_options(argc, argv, options, sizeof options / sizeof options[0], kMaxThreads);
  g.iterations = options[0].value;
  g.threads = options[1].value;
  g.ops = options[2].value;
  g.window = options[3].value;
  g.transfer = options[4].value;
  g.transfer_every = options[5].value;
  g.seed = options[6].value;
  bench_require_positive(argv[0], "--window", g.window);
  bench_require_positive(argv[0], "--transfer", g.transfer);
  bench_require_positive(argv[0], "--transfer-every", g.transfer_every);
  if (g.iterations * kMaxThreads >= ((uint64_t)1 << (64 - 20 - BENCH_SIZE_BITS)) || g.ops >= ((uint64_t)1 << 20)) {
    fprintf(stderr, "%s: --iterations or --ops too large for the object tags\n", argv[0]);
    return 2;
  }
  g.table = bench_map(g.transfer * sizeof *g.table);
  g.windows = bench_map(g.threads * g.window * sizeof *g.windows);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t it = 0; it < g.iterations; it++) bench_run_iteration(it, g.threads, run_thread);
  for (uint64_t s = 0; s < g.transfer; s++) {
    unsigned char *p = atomic_load(&g.table[s]);
    if (p != NULL) check_and_free(&g.accounts[0], p);
  }
  double elapsed = bench_now_seconds() - start;

  bench_totals totals = {0, 0, 0};
  for (uint64_t t = 0; t < g.threads; t++)
    bench_totals_add(&totals, &g.accounts[t].net_bytes, g.accounts[t].checksum, g.accounts[t].peak_bytes);
  bench_totals_finish(&totals, "threadchurn", g.iterations * g.threads * g.ops, elapsed, rss_start);
  return 0;
}
