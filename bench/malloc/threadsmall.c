/* A small multithreaded program: the pattern of glibc's thread malloc
 * benchmark, where the point is the footprint (issue 12: libstrata 0.86x
 * mimalloc's peak RSS there, glibc 0.18x, snmalloc 0.35x).
 *
 * --threads threads (default 2) each own a fixed working set of --slots
 * slots. Every step picks a random slot, checks and frees its object (if
 * any) and puts a new one of a random size there: 3/4 of sizes 16-128 B,
 * 3/16 128 B-1 KiB, 1/16 1-4 KiB. No object crosses threads, and the live
 * set is small (~0.3 MiB per thread), so peak RSS is mostly what the
 * allocator itself keeps per process and per thread.
 *
 * The objects depend only on the seed and the thread's index, so the
 * checksum (sum of freed tags) is the same under every allocator. */
#include <pthread.h>
#include <stdatomic.h>

#include "bench_common.h"

enum { kMinSize = 16, kMaxSize = 4096, kMaxThreads = 64, kPeakSampleEvery = 64 };

static bench_option options[] = {
    {"ops", 5000000, "steps (free + allocate) per thread"},
    {"slots", 1000, "slots in each thread's working set"},
    {"threads", 2, "threads (<= 64)"},
    {"seed", 1, "random seed"},
};

typedef struct {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by this thread; read by the others */
  _Alignas(64) unsigned char **slots;
  bench_rng rng;
  uint64_t seq, checksum;
  int64_t peak_bytes;
} worker;

static struct {
  bench_thread_options opt; /* .slots: each thread's working set */
  worker workers[kMaxThreads];
} g;

static size_t draw_size(bench_rng *rng) {
  uint64_t r = bench_next(rng);
  unsigned bucket = (unsigned)(r & 15); /* 0-11: small, 12-14: medium, 15: large */
  uint64_t x = r >> 4;
  if (bucket < 12) return 16 + (size_t)(x % (128 - 16 + 1));
  if (bucket < 15) return 128 + (size_t)(x % (1024 - 128 + 1));
  return 1024 + (size_t)(x % (kMaxSize - 1024 + 1));
}

static void sample_peak(worker* w) {
  bench_sample_peak(&w->peak_bytes, &g.workers[0].net_bytes, sizeof g.workers[0], g.opt.threads);
}

static void *run_worker(void *arg) {
  worker *w = arg;
  for (uint64_t i = 0; i < g.opt.ops; i++) {
    uint64_t slot = bench_next(&w->rng) % g.opt.slots;
    if (w->slots[slot] != NULL)
      w->checksum += bench_check_and_free(w->slots[slot], kMinSize, kMaxSize, g.opt.verify_full, &w->net_bytes);
    size_t size = draw_size(&w->rng);
    w->slots[slot] = bench_new_object(++w->seq, size);
    bench_net_add(&w->net_bytes, (int64_t)size);
    if (i % kPeakSampleEvery == 0) sample_peak(w);
  }
  sample_peak(w);
  /* The thread frees its own working set before it exits, like a program's
   * worker that cleans up. */
  for (uint64_t s = 0; s < g.opt.slots; s++)
    if (w->slots[s] != NULL) {
      w->checksum += bench_check_and_free(w->slots[s], kMinSize, kMaxSize, g.opt.verify_full, &w->net_bytes);
      w->slots[s] = NULL;
    }
  return NULL;
}

int main(int argc, char **argv) {
  g.opt = bench_parse_thread_options(argc, argv, options, 1, kMaxThreads);
  for (uint64_t t = 0; t < g.opt.threads; t++) {
    worker *w = &g.workers[t];
    w->slots = bench_map(g.opt.slots * sizeof *w->slots);
    w->rng.state = g.opt.seed * 0x10001 + t;
    w->seq = t << 36; /* distinct tags per thread */
  }
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  bench_run_threads(g.opt.threads, run_worker, g.workers, sizeof g.workers[0]);
  double elapsed = bench_now_seconds() - start;

  bench_totals totals = {0, 0, 0};
  for (uint64_t t = 0; t < g.opt.threads; t++)
    bench_totals_add(&totals, &g.workers[t].net_bytes, g.workers[t].checksum, g.workers[t].peak_bytes);
  bench_totals_finish(&totals, "threadsmall", g.opt.ops * g.opt.threads, elapsed, rss_start);
  return 0;
}
