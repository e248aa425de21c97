/* Producer-consumer with small objects: one thread allocates, the other frees
 * (the pattern of xmalloc-test at 2 threads; issue 20 measured libstrata at
 * 1.24x mimalloc's time and 1.59x snmalloc's there).
 *
 * The producer allocates --ops objects of 16-128 B (uniform, 8-byte steps)
 * and hands every one to the consumer through a lock-free single-producer
 * single-consumer ring (64 Ki slots); the consumer checks and frees each at
 * once. So every free is remote, continuously, and the live set is only what
 * is in flight (up to ~5 MiB). A full ring (producer) or an empty one (consumer) yields the
 * CPU: on a shared machine, and under valgrind, the other thread must run.
 *
 * Objects get a tag at the front and a fill byte at the end only (every byte
 * with --verify). The objects depend only on the seed, so the checksum (the
 * sum of the tags freed) is the same under every allocator. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "bench_common.h"
/* A wide ring: with 1024 slots a loaded machine made the run mostly waits for
 * the scheduler (a full ring every 1024 objects, then the consumer must get a
 * CPU); 64 Ki slots hold up to ~5 MiB in flight. */
#define BENCH_RING_SLOTS 65536
#include "bench_ring.h"

enum { kMinSize = 16, kMaxSize = 128, kSizeStep = 8, kPeakSampleEvery = 256 };

static bench_option options[] = {
    {"ops", 10000000, "objects the producer allocates and the consumer frees"},
    {"seed", 1, "random seed"},
};

typedef struct {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by this thread; read by the producer */
} account;

static struct {
  uint64_t ops, seed;
  int verify_full;
  account producer, consumer;
  _Atomic int producer_done;
  int64_t peak_bytes; /* sampled by the producer */
  uint64_t checksum;  /* written by the consumer */
  ring queue;
} g;

static size_t draw_size(bench_rng *rng) {
  return kMinSize + kSizeStep * (size_t)bench_range(rng, 0, (kMaxSize - kMinSize) / kSizeStep);
}

static void sample_peak(void) {
  int64_t total = atomic_load_explicit(&g.producer.net_bytes, memory_order_relaxed) +
                  atomic_load_explicit(&g.consumer.net_bytes, memory_order_relaxed);
  if (total > g.peak_bytes) g.peak_bytes = total;
}

static void *run_producer(void *unused) {
  (void)unused;
  bench_rng rng = {g.seed};
  for (uint64_t i = 0; i < g.ops; i++) {
    size_t size = draw_size(&rng);
    unsigned char *p = bench_new_object_ends(i + 1, size, g.verify_full);
    bench_net_add(&g.producer.net_bytes, (int64_t)size);
    while (!ring_push(&g.queue, p)) sched_yield();
    if (i % kPeakSampleEvery == 0) sample_peak();
  }
  sample_peak();
  atomic_store_explicit(&g.producer_done, 1, memory_order_release);
  return NULL;
}

static void *run_consumer(void *unused) {
  (void)unused;
  uint64_t freed = 0, checksum = 0;
  while (freed < g.ops) {
    unsigned char *p = ring_pop(&g.queue);
    if (p == NULL) {
      sched_yield();
      continue;
    }
    checksum += bench_check_and_free(p, kMinSize, kMaxSize, g.verify_full, &g.consumer.net_bytes);
    freed++;
  }
  g.checksum = checksum;
  return NULL;
}

int main(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  g.ops = options[0].value;
  g.seed = options[1].value;
  g.verify_full = flags.verify_full;
  bench_require_positive(argv[0], "--ops", g.ops);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  pthread_t producer, consumer;
  if (pthread_create(&consumer, NULL, run_consumer, NULL) != 0) bench_fail("pthread_create", NULL);
  if (pthread_create(&producer, NULL, run_producer, NULL) != 0) bench_fail("pthread_create", NULL);
  pthread_join(producer, NULL);
  pthread_join(consumer, NULL);
  double elapsed = bench_now_seconds() - start;

  if (!atomic_load(&g.producer_done) || ring_pop(&g.queue) != NULL) bench_fail("objects left in the ring", NULL);
  if (atomic_load(&g.producer.net_bytes) + atomic_load(&g.consumer.net_bytes) != 0)
    bench_fail("live byte count does not return to zero", NULL);
  bench_report report = {"prodcons", g.ops, elapsed, (uint64_t)g.peak_bytes, rss_start, g.checksum, 0};
  bench_print(&report);
  return 0;
}
