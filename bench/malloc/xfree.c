/* Random sizes from 16 B to 16 KiB, freed on another thread (the pattern of
 * the rpmalloc benchmark's cross-thread mode).
 *
 * --threads threads stand in a ring. Each allocates objects of log-uniform
 * sizes (every power of two from 16 B to 16 KiB equally likely) into a random
 * slot of its window; the object a newcomer displaces is handed to the next
 * thread through a lock-free ring, and that thread frees it at once. So nearly
 * every free is remote (when a ring is full the object is freed locally).
 * At the end each thread drains its inbox and frees its own window.
 *
 * The objects allocated depend only on the seed, so the checksum (the sum of
 * the tags of all objects freed) is the same under every allocator. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "bench_common.h"
#include "bench_ring.h"

enum { kMinShift = 4, kMaxShift = 14, kMaxThreads = 16, kPeakSampleEvery = 64 };
#define kMinSize ((size_t)1 << kMinShift)
#define kMaxSize ((size_t)1 << kMaxShift)

static bench_option options[] = {
    {"ops", 1000000, "allocations per thread"},
    {"window", 2000, "slots in each thread's window"},
    {"threads", 2, "threads (<= 16)"},
    {"seed", 1, "random seed"},
};

typedef struct worker {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by this thread; read by the others */
  _Alignas(64) unsigned char **slots;
  bench_rng alloc_rng, place_rng;
  uint64_t seq;
  uint64_t checksum;
  int64_t peak_bytes;
  ring *inbox, *outbox;
  _Atomic int done;
  struct worker *prev; /* the thread that sends to us */
} worker;

static struct {
  bench_thread_options opt; /* .slots: each thread's window */
  worker workers[kMaxThreads];
  ring rings[kMaxThreads];
} g;

static size_t draw_size(bench_rng *rng) {
  uint64_t r = bench_next(rng);
  unsigned shift = kMinShift + (unsigned)(r % (kMaxShift - kMinShift + 1));
  size_t size = ((size_t)1 << shift) + (size_t)((r >> 8) & (((uint64_t)1 << shift) - 1));
  return size > kMaxSize ? kMaxSize : size;
}

static void check_and_free(worker *w, unsigned char *p) {
  w->checksum += bench_check_and_free(p, kMinSize, kMaxSize, g.opt.verify_full, &w->net_bytes);
}

static void receive_all(worker *w) {
  unsigned char *p;
  while ((p = ring_pop(w->inbox)) != NULL) check_and_free(w, p);
}

static void sample_peak(worker* w) {
  bench_sample_peak(&w->peak_bytes, &g.workers[0].net_bytes, sizeof g.workers[0], g.opt.threads);
}

static void *run_worker(void *arg) {
  worker *w = arg;
  for (uint64_t i = 0; i < g.opt.ops; i++) {
    size_t size = draw_size(&w->alloc_rng);
    unsigned char *p = bench_new_object(++w->seq, size);
    bench_net_add(&w->net_bytes, (int64_t)size);
    uint64_t slot = bench_next(&w->place_rng) % g.opt.slots;
    unsigned char *old = w->slots[slot];
    w->slots[slot] = p;
    if (old != NULL && !ring_push(w->outbox, old)) check_and_free(w, old); /* full ring: free it here */
    receive_all(w);
    if (i % kPeakSampleEvery == 0) sample_peak(w);
  }
  atomic_store_explicit(&w->done, 1, memory_order_release);
  while (!atomic_load_explicit(&w->prev->done, memory_order_acquire)) {
    receive_all(w);
    sched_yield(); /* let the sender run when we share a CPU (and under valgrind) */
  }
  receive_all(w);
  sample_peak(w);
  return NULL;
}

int main(int argc, char **argv) {
  g.opt = bench_parse_thread_options(argc, argv, options, 2, kMaxThreads);
  for (uint64_t t = 0; t < g.opt.threads; t++) {
    worker *w = &g.workers[t];
    w->slots = bench_map(g.opt.slots * sizeof *w->slots);
    w->alloc_rng.state = g.opt.seed * 0x10001 + t;
    w->place_rng.state = ~w->alloc_rng.state;
    w->seq = t << 36; /* distinct tags per thread */
    w->inbox = &g.rings[t];
    w->outbox = &g.rings[(t + 1) % g.opt.threads];
    w->prev = &g.workers[(t + g.opt.threads - 1) % g.opt.threads];
  }
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  bench_run_threads(g.opt.threads, run_worker, g.workers, sizeof g.workers[0]);
  for (uint64_t t = 0; t < g.opt.threads; t++) {
    worker *w = &g.workers[t];
    for (uint64_t s = 0; s < g.opt.slots; s++)
      if (w->slots[s] != NULL) check_and_free(w, w->slots[s]);
  }
  double elapsed = bench_now_seconds() - start;

  bench_totals totals = {0, 0, 0};
  for (uint64_t t = 0; t < g.opt.threads; t++)
    bench_totals_add(&totals, &g.workers[t].net_bytes, g.workers[t].checksum, g.workers[t].peak_bytes);
  bench_totals_finish(&totals, "xfree", g.opt.ops * g.opt.threads, elapsed, rss_start);
  return 0;
}
