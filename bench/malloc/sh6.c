/* Mixed-size batches freed LIFO, FIFO and interleaved, on 2 threads (the
 * pattern of MicroQuill's sh6bench/sh8bench as mimalloc-bench runs them).
 *
 * Each thread, --rounds times, allocates a batch of --batch objects whose
 * sizes walk a sawtooth from 16 B up to --max-size (so one batch mixes every
 * small size class), and frees the batch in one of three orders, by turns:
 * back to front (LIFO), front to back (FIFO), or the odd slots and then the
 * even ones (which leaves every page half full before it empties). One
 * object in --keep of each batch survives the round: it replaces one of the
 * thread's --keep-slots long-lived objects, and the one it replaces is freed
 * there (so pages drain unevenly, as in sh6bench's retained blocks). With
 * --cross 1 (sh8bench) the long-lived objects go to a table shared by the
 * threads, so a thread frees objects another allocated.
 *
 * Objects get a tag at the front and a fill byte at the end only (every byte
 * with --verify). The objects depend only on the seed, so the checksum (the
 * sum of the tags freed) is the same under every allocator. */
#include <pthread.h>
#include <stdatomic.h>

#include "bench_common.h"

enum { kMaxThreads = 16, kMinSize = 16 };

static bench_option options[] = {
    {"threads", 2, "threads (<= 16)"},
    {"rounds", 4000, "batches per thread"},
    {"batch", 1000, "objects per batch"},
    {"max-size", 1024, "largest object (B)"},
    {"keep", 64, "one object in this many survives its batch (0: none)"},
    {"keep-slots", 512, "long-lived objects per thread"},
    {"cross", 0, "1: long-lived objects go to a table shared by the threads"},
    {"seed", 1, "random seed"},
};

typedef struct {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by this thread */
  uint64_t index, checksum, allocations, peak_bytes;
  bench_rng rng;
} worker;

static struct {
  uint64_t threads, rounds, batch, max_size, keep, keep_slots, cross;
  int verify_full;
  unsigned char **batches;              /* per thread: --batch slots */
  _Atomic(unsigned char *) *long_lived; /* per thread (or shared with --cross): --keep-slots each */
  worker workers[kMaxThreads];
} g;

static size_t sawtooth_size(uint64_t i) { return kMinSize + (size_t)((i * 24) % (g.max_size - kMinSize + 1)); }

static unsigned char *new_object(worker *w, size_t size) {
  unsigned char *p = bench_new_object_ends((w->index << 32) | ++w->allocations, size, g.verify_full);
  bench_net_add(&w->net_bytes, (int64_t)size);
  int64_t net = atomic_load_explicit(&w->net_bytes, memory_order_relaxed);
  if (net > (int64_t)w->peak_bytes) w->peak_bytes = (uint64_t)net;
  return p;
}

static void check_and_free(worker *w, unsigned char *p) {
  w->checksum += bench_check_and_free(p, kMinSize, g.max_size, g.verify_full, &w->net_bytes);
}

/* The survivor replaces a random long-lived slot; the object there is freed. */
static void keep_object(worker *w, unsigned char *p) {
  uint64_t base = g.cross ? 0 : w->index * g.keep_slots;
  uint64_t span = g.cross ? g.threads * g.keep_slots : g.keep_slots;
  unsigned char *old = atomic_exchange(&g.long_lived[base + bench_range(&w->rng, 0, span - 1)], p);
  if (old != NULL) check_and_free(w, old);
}

static void free_batch(worker *w, unsigned char **slots, uint64_t round) {
  uint64_t n = g.batch;
  switch (round % 3) {
    case 0: /* LIFO */
      for (uint64_t i = n; i-- > 0;)
        if (slots[i] != NULL) check_and_free(w, slots[i]);
      break;
    case 1: /* FIFO */
      for (uint64_t i = 0; i < n; i++)
        if (slots[i] != NULL) check_and_free(w, slots[i]);
      break;
    default: /* odd slots, then even ones */
      for (uint64_t i = 1; i < n; i += 2)
        if (slots[i] != NULL) check_and_free(w, slots[i]);
      for (uint64_t i = 0; i < n; i += 2)
        if (slots[i] != NULL) check_and_free(w, slots[i]);
  }
}

static void *run_worker(void *arg) {
  worker *w = arg;
  unsigned char **slots = g.batches + w->index * g.batch;
  uint64_t next_size = w->index * 7;
  for (uint64_t round = 0; round < g.rounds; round++) {
    for (uint64_t i = 0; i < g.batch; i++) slots[i] = new_object(w, sawtooth_size(next_size++));
    if (g.keep != 0)
      for (uint64_t i = bench_range(&w->rng, 0, g.keep - 1); i < g.batch; i += g.keep) {
        keep_object(w, slots[i]);
        slots[i] = NULL;
      }
    free_batch(w, slots, round);
  }
  return NULL;
}

static void parse(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  g.threads = options[0].value;
  g.rounds = options[1].value;
  g.batch = options[2].value;
  g.max_size = options[3].value;
  g.keep = options[4].value;
  g.keep_slots = options[5].value;
  g.cross = options[6].value;
  g.verify_full = flags.verify_full;
  bench_require_range(argv[0], "--threads", g.threads, 1, kMaxThreads);
  bench_require_positive(argv[0], "--batch", g.batch);
  bench_require_range(argv[0], "--max-size", g.max_size, 16, 1 << 20);
  bench_require_positive(argv[0], "--keep-slots", g.keep_slots);
  bench_require_range(argv[0], "--cross", g.cross, 0, 1);
  for (uint64_t t = 0; t < g.threads; t++) {
    g.workers[t].index = t;
    g.workers[t].rng.state = options[7].value * 1000003u + t;
  }
}

int main(int argc, char **argv) {
  parse(argc, argv);
  g.batches = bench_map(g.threads * g.batch * sizeof *g.batches);
  g.long_lived = bench_map(g.threads * g.keep_slots * sizeof *g.long_lived);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  bench_run_threads(g.threads, run_worker, g.workers, sizeof g.workers[0]);
  worker *w0 = &g.workers[0];
  for (uint64_t i = 0; i < g.threads * g.keep_slots; i++) /* main frees what survived */
    if (g.long_lived[i] != NULL) check_and_free(w0, g.long_lived[i]);
  double elapsed = bench_now_seconds() - start;

  int64_t net = 0;
  uint64_t checksum = 0, allocations = 0, peak = 0;
  for (uint64_t t = 0; t < g.threads; t++) {
    net += atomic_load(&g.workers[t].net_bytes);
    checksum += g.workers[t].checksum;
    allocations += g.workers[t].allocations;
    peak += g.workers[t].peak_bytes; /* a bound: the threads' peaks need not coincide */
  }
  if (net != 0) bench_fail("live byte count does not return to zero", NULL);
  bench_report report = {"sh6", allocations, elapsed, peak, rss_start, checksum, 0};
  bench_print(&report);
  return 0;
}
