/* Allocate-write-free loops over one small object per thread (the pattern of
 * Hoard's cache-scratch, as mimalloc-bench runs it at 1 thread; issue 20
 * measured libstrata at 1.10x mimalloc's time there).
 *
 * main allocates one object of --size bytes per thread, writes it, and hands
 * it to a fresh thread, which frees it (a remote free, as in cache-scratch:
 * it may leave the thread's next objects on a cache line another thread
 * writes). Then each thread --iterations times allocates an object of --size
 * bytes, writes every byte --repetitions times through a volatile pointer
 * (store, load into a volatile on the stack, increment, store back), checks
 * it and frees it. So the time is mostly the writes, and the allocator shows
 * through where it puts the objects: on a line or a 4 KiB alias shared with
 * something else, or not.
 *
 * --handoff 0 leaves out main's objects: Hoard's cache-thrash, where the
 * threads only allocate, write and free their own objects at once, and an
 * allocator that puts two threads' objects on one cache line makes every
 * write a coherence miss (false sharing).
 *
 * Every object's bytes are checked before it is freed (after every
 * repetition with --verify). They depend only on the options, so the
 * checksum (a sum over the checked bytes) is the same under every allocator. */
#include <pthread.h>
#include <stdatomic.h>

#include "bench_common.h"

enum { kMaxThreads = 64, kMaxSize = 1 << 16 };

static bench_option options[] = {
    {"threads", 1, "threads (<= 64)"},
    {"iterations", 1000, "objects allocated, written and freed per thread"},
    {"size", 8, "bytes per object (<= 65536)"},
    {"repetitions", 20000, "times each byte of an object is written"},
    {"handoff", 1, "1: main allocates each thread's first object (cache-scratch); 0: none (cache-thrash)"},
};

typedef struct {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by this thread (main's object counts here) */
  unsigned char *first;                   /* main's object, freed by this thread */
  uint64_t checksum;
} worker;

static struct {
  uint64_t threads, iterations, size, repetitions, handoff;
  int verify_full;
  worker workers[kMaxThreads];
} g;

static unsigned char expected_byte(uint64_t k, uint64_t repetition) { return (unsigned char)(k + repetition + 1); }

/* Sums the object's bytes after repetition `rep`, failing on a wrong one. */
static uint64_t check_bytes(const unsigned char *p, uint64_t rep) {
  uint64_t sum = 0;
  for (uint64_t k = 0; k < g.size; k++) {
    if (p[k] != expected_byte(k, rep)) bench_fail("object overwritten", p);
    sum += p[k];
  }
  return sum;
}

/* Cache-scratch's inner loop: every byte stored, loaded into a volatile on
 * the stack, incremented there and stored back. */
static void scratch(unsigned char *p, int verify_full) {
  volatile unsigned char *v = p;
  for (uint64_t rep = 0; rep < g.repetitions; rep++) {
    for (uint64_t k = 0; k < g.size; k++) {
      v[k] = (unsigned char)(k + rep);
      volatile unsigned char ch = v[k];
      ch++;
      v[k] = ch;
    }
    if (verify_full) check_bytes(p, rep);
  }
}

static unsigned char *new_object(worker *w) {
  unsigned char *p = malloc(g.size);
  if (p == NULL) bench_fail("malloc returned NULL", NULL);
  bench_net_add(&w->net_bytes, (int64_t)g.size);
  return p;
}

static void free_object(worker *w, unsigned char *p) {
  bench_net_add(&w->net_bytes, -(int64_t)g.size);
  free(p);
}

static void *run_worker(void *arg) {
  worker *w = arg;
  if (w->first != NULL) {
    w->checksum += check_bytes(w->first, 0);
    free_object(w, w->first);
  }
  for (uint64_t i = 0; i < g.iterations; i++) {
    unsigned char *p = new_object(w);
    scratch(p, g.verify_full);
    w->checksum += check_bytes(p, g.repetitions - 1);
    free_object(w, p);
  }
  return NULL;
}

int main(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  g.threads = options[0].value;
  g.iterations = options[1].value;
  g.size = options[2].value;
  g.repetitions = options[3].value;
  g.handoff = options[4].value;
  g.verify_full = flags.verify_full;
  bench_require_range(argv[0], "--threads", g.threads, 1, kMaxThreads);
  bench_require_range(argv[0], "--size", g.size, 1, kMaxSize);
  bench_require_positive(argv[0], "--repetitions", g.repetitions);
  bench_require_range(argv[0], "--handoff", g.handoff, 0, 1);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t t = 0; g.handoff && t < g.threads; t++) { /* main's objects, all live at once */
    g.workers[t].first = new_object(&g.workers[t]);
    for (uint64_t k = 0; k < g.size; k++) g.workers[t].first[k] = expected_byte(k, 0);
  }
  bench_run_threads(g.threads, run_worker, g.workers, sizeof g.workers[0]);
  double elapsed = bench_now_seconds() - start;

  int64_t net = 0;
  uint64_t checksum = 0;
  for (uint64_t t = 0; t < g.threads; t++) {
    net += atomic_load(&g.workers[t].net_bytes);
    checksum += g.workers[t].checksum;
  }
  if (net != 0) bench_fail("live byte count does not return to zero", NULL);
  /* At most one object per thread is live at a time, all of main's at once. */
  bench_report report = {g.handoff ? "cachescratch" : "cachethrash", g.threads * (g.iterations + g.handoff), elapsed,
                         g.threads * g.size, rss_start, checksum, 0};
  bench_print(&report);
  return 0;
}
