/* Producer/consumer server workload on 2 threads, in the spirit of Larson &
 * Krishnan's server benchmark: objects allocated in one thread are freed in
 * another, and threads come and go while their objects live on.
 *
 * Each of the two threads allocates request-like objects (16-512 bytes by
 * default; --min-size/--max-size change the range and --log-sizes 1 makes
 * every power of two in it equally likely, the "server" workload). Half
 * of them it hands to the other thread through a lock-free single-producer
 * single-consumer ring; the rest, and everything it receives, it keeps in its
 * own window of slots, freeing whatever object a new arrival displaces. So
 * about half the frees are of objects another thread allocated.
 *
 * The work runs in --generations: each generation starts two fresh threads that
 * inherit the previous pair's windows, so objects outlive the threads that
 * allocated them (the allocator must handle frees into exited threads' heaps).
 *
 * The set of objects allocated is fixed by the seed (each thread draws sizes
 * and hand-off decisions from its own RNG; placement uses a second RNG), so the
 * checksum -- the sum of the tags of all objects freed -- does not depend on
 * thread timing and is identical under every allocator. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "bench_common.h"
#include "bench_ring.h"

enum { kPeakSampleEvery = 64, kSmallestSize = 16, kLargestSize = 1 << 20 };

static bench_option options[] = {
    {"ops", 1000000, "allocations per thread per generation"},
    {"window", 50000, "slots in each thread's window"},
    {"generations", 4, "successive pairs of threads"},
    {"seed", 1, "random seed"},
    {"min-size", 16, "smallest object (bytes, >= 16)"},
    {"max-size", 512, "largest object (bytes, <= 1 MiB)"},
    {"log-sizes", 0, "1: log-uniform sizes (each power of two equally likely), 0: uniform"},
};

static size_t g_min_size, g_max_size;
static int g_log_sizes;

/* A request size from the object-set generator r (one draw). */
static size_t draw_size(uint64_t r) {
  if (!g_log_sizes) return g_min_size + (size_t)(r & 0xffff) % (g_max_size - g_min_size + 1);
  unsigned lo = 63u - (unsigned)__builtin_clzll(g_min_size), hi = 63u - (unsigned)__builtin_clzll(g_max_size);
  unsigned shift = lo + (unsigned)((r & 0xff) % (hi - lo + 1));
  size_t size = ((size_t)1 << shift) + (size_t)((r >> 24) & (((uint64_t)1 << shift) - 1));
  return size < g_min_size ? g_min_size : size > g_max_size ? g_max_size : size;
}

/* One side of the exchange; outlives the threads that run it. */
typedef struct side {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by this side; read by the peer */
  _Alignas(64) unsigned char **slots;
  uint64_t window, ops;
  bench_rng alloc_rng; /* sizes and hand-off decisions: the fixed object set */
  bench_rng place_rng; /* which slot an object goes to */
  uint64_t next_seq, seq_base;
  uint64_t checksum;
  int64_t peak_bytes; /* sampled peak of both sides' net bytes */
  int verify_full;
  ring *inbox, *outbox;
  _Atomic int *done, *peer_done;
  struct side *peer;
} side;

static void *new_object(side *s, size_t size) {
  unsigned char *p = bench_new_object(s->seq_base + ++s->next_seq, size);
  bench_net_add(&s->net_bytes, (int64_t)size);
  return p;
}

static void check_and_free(side *s, unsigned char *p) {
  s->checksum += bench_check_and_free(p, g_min_size, g_max_size, s->verify_full, &s->net_bytes);
}

/* Keep p in a random slot, freeing the object it displaces. */
static void place(side *s, unsigned char *p) {
  uint64_t slot = bench_next(&s->place_rng) % s->window;
  if (s->slots[slot] != NULL) check_and_free(s, s->slots[slot]);
  s->slots[slot] = p;
}

static void receive_all(side *s) {
  unsigned char *p;
  while ((p = ring_pop(s->inbox)) != NULL) place(s, p);
}

static void sample_peak(side *s) {
  int64_t total = atomic_load_explicit(&s->net_bytes, memory_order_relaxed) +
                  atomic_load_explicit(&s->peer->net_bytes, memory_order_relaxed);
  if (total > s->peak_bytes) s->peak_bytes = total;
}

static void *run_side(void *arg) {
  side *s = arg;
  for (uint64_t i = 0; i < s->ops; i++) {
    uint64_t r = bench_next(&s->alloc_rng);
    size_t size = draw_size(r);
    unsigned char *p = new_object(s, size);
    if (!((r >> 16) & 1) || !ring_push(s->outbox, p)) place(s, p); /* full ring: keep it */
    receive_all(s);
    if (i % kPeakSampleEvery == 0) sample_peak(s);
  }
  /* Keep receiving until the peer has stopped sending, then once more. */
  atomic_store_explicit(s->done, 1, memory_order_release);
  while (!atomic_load_explicit(s->peer_done, memory_order_acquire)) {
    receive_all(s);
    sched_yield(); /* let the peer run when we share a CPU (and under valgrind) */
  }
  receive_all(s);
  sample_peak(s);
  return NULL;
}

static void free_window(side *s) {
  for (uint64_t i = 0; i < s->window; i++)
    if (s->slots[i] != NULL) check_and_free(s, s->slots[i]);
}

int main(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  const uint64_t ops = options[0].value, window = options[1].value, generations = options[2].value;
  const uint64_t seed = options[3].value;
  bench_require_positive(argv[0], "--window", window);
  g_min_size = (size_t)options[4].value;
  g_max_size = (size_t)options[5].value;
  g_log_sizes = options[6].value != 0;
  if (g_min_size < kSmallestSize || g_max_size > kLargestSize || g_min_size > g_max_size) {
    fprintf(stderr, "%s: sizes must satisfy %d <= --min-size <= --max-size <= %d\n", argv[0], kSmallestSize,
            kLargestSize);
    return 2;
  }
  const char *name = g_log_sizes || g_min_size != 16 || g_max_size != 512 ? "server" : "larson";

  static ring rings[2];
  static _Atomic int done[2];
  static side sides[2];
  for (int t = 0; t < 2; t++) {
    side *s = &sides[t];
    s->slots = bench_map(window * sizeof *s->slots);
    s->window = window;
    s->ops = ops;
    s->alloc_rng.state = seed * 2 + (uint64_t)t;
    s->place_rng.state = ~(seed * 2 + (uint64_t)t);
    s->seq_base = (uint64_t)t << 36; /* distinct tags per side */
    s->verify_full = flags.verify_full;
    s->inbox = &rings[t];
    s->outbox = &rings[1 - t];
    s->done = &done[t];
    s->peer_done = &done[1 - t];
    s->peer = &sides[1 - t];
  }
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t g = 0; g < generations; g++) {
    pthread_t threads[2];
    for (int t = 0; t < 2; t++) atomic_store(&done[t], 0);
    for (int t = 0; t < 2; t++)
      if (pthread_create(&threads[t], NULL, run_side, &sides[t]) != 0) bench_fail("pthread_create", NULL);
    for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
  }
  for (int t = 0; t < 2; t++) free_window(&sides[t]);
  double elapsed = bench_now_seconds() - start;

  int64_t net = atomic_load(&sides[0].net_bytes) + atomic_load(&sides[1].net_bytes);
  if (net != 0) bench_fail("live byte count does not return to zero", NULL);
  int64_t peak = sides[0].peak_bytes > sides[1].peak_bytes ? sides[0].peak_bytes : sides[1].peak_bytes;
  bench_report report = {name, ops * 2 * generations, elapsed, (uint64_t)peak, rss_start,
                         sides[0].checksum + sides[1].checksum, 0};
  bench_print(&report);
  return 0;
}
