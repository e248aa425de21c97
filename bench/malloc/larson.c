/* Producer/consumer server workload on 2 threads, in the spirit of Larson &
 * Krishnan's server benchmark: objects allocated in one thread are freed in
 * another, and threads come and go while their objects live on.
 *
 * Each of the two threads allocates request-like objects (16-512 bytes). Half
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

enum { kMinSize = 16, kMaxSize = 512, kRingSize = 1024, kPeakSampleEvery = 64 };

static bench_option options[] = {
    {"ops", 1000000, "allocations per thread per generation"},
    {"window", 50000, "slots in each thread's window"},
    {"generations", 4, "successive pairs of threads"},
    {"seed", 1, "random seed"},
};

/* Single-producer single-consumer ring of object pointers. */
typedef struct {
  _Alignas(64) _Atomic uint64_t head; /* next slot to read (consumer) */
  _Alignas(64) _Atomic uint64_t tail; /* next slot to write (producer) */
  _Alignas(64) void *items[kRingSize];
} ring;

static int ring_push(ring *q, void *item) {
  uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
  if (tail - head == kRingSize) return 0;
  q->items[tail % kRingSize] = item;
  atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
  return 1;
}

static void *ring_pop(ring *q) {
  uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
  if (head == tail) return NULL;
  void *item = q->items[head % kRingSize];
  atomic_store_explicit(&q->head, head + 1, memory_order_release);
  return item;
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
  atomic_store_explicit(&s->net_bytes, atomic_load_explicit(&s->net_bytes, memory_order_relaxed) + (int64_t)size,
                        memory_order_relaxed);
  return p;
}

static void check_and_free(side *s, unsigned char *p) {
  uint64_t tag = bench_check_object(p, kMinSize, kMaxSize, s->verify_full);
  s->checksum += tag;
  atomic_store_explicit(&s->net_bytes,
                        atomic_load_explicit(&s->net_bytes, memory_order_relaxed) - (int64_t)bench_tag_size(tag),
                        memory_order_relaxed);
  free(p);
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
    size_t size = kMinSize + (size_t)(r & 0xffff) % (kMaxSize - kMinSize + 1);
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
  bench_report report = {"larson", ops * 2 * generations, elapsed, (uint64_t)peak, rss_start,
                         sides[0].checksum + sides[1].checksum};
  bench_print(&report);
  return 0;
}
