/* A burst of small objects, freed, then idle: does the memory come back?
 *
 * The main thread allocates --mib MiB of --size-byte objects and then frees
 * them all -- itself, or with --remote 1 on a second thread, which exits when
 * done. The program then drops its own pointer array and idles for --idle-ms
 * milliseconds with light activity (a few small objects allocated and freed
 * every 10 ms on the main thread), and reports its RSS: what the allocator
 * kept of the burst. The time reported is the burst (allocation and frees);
 * the idle spell is not timed. */
#include <pthread.h>

#include "bench_common.h"

enum { kTickMs = 10, kIdleObjects = 16 };

static bench_option options[] = {
    {"mib", 256, "size of the burst (MiB of objects)"},
    {"size", 64, "object size (bytes, 16-4096)"},
    {"remote", 0, "1: another thread frees the objects"},
    {"idle-ms", 1000, "idle spell before RSS is read (milliseconds)"},
    {"seed", 1, "random seed (sequence numbers start here)"},
};

typedef struct {
  unsigned char **objects;
  uint64_t count;
  size_t size;
  int verify_full;
  uint64_t checksum;
} burst;

static void *free_all(void *arg) {
  burst *b = arg;
  for (uint64_t i = 0; i < b->count; i++) {
    b->checksum += bench_check_object(b->objects[i], b->size, b->size, b->verify_full);
    free(b->objects[i]);
  }
  return NULL;
}

/* Light activity while idle: a program that is still alive, not busy. */
static void idle(uint64_t ms, size_t size) {
  struct timespec tick = {0, kTickMs * 1000000L};
  void *objects[kIdleObjects];
  for (uint64_t t = 0; t < ms; t += kTickMs) {
    for (int i = 0; i < kIdleObjects; i++) {
      objects[i] = malloc(size);
      if (objects[i] == NULL) bench_fail("malloc returned NULL", NULL);
      memset(objects[i], i, size);
    }
    for (int i = 0; i < kIdleObjects; i++) free(objects[i]);
    nanosleep(&tick, NULL);
  }
}

int main(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  const uint64_t mib = options[0].value, size = options[1].value, remote = options[2].value;
  const uint64_t idle_ms = options[3].value, seed = options[4].value;
  bench_require_positive(argv[0], "--mib", mib);
  bench_require_range(argv[0], "--size", size, 16, 4096);
  burst b = {NULL, (mib << 20) / size, (size_t)size, flags.verify_full, 0};
  size_t array_bytes = b.count * sizeof *b.objects;
  b.objects = bench_map(array_bytes);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t i = 0; i < b.count; i++) b.objects[i] = bench_new_object(seed + i, b.size);
  if (remote) {
    pthread_t freer;
    if (pthread_create(&freer, NULL, free_all, &b) != 0) bench_fail("pthread_create", NULL);
    pthread_join(freer, NULL);
  } else {
    free_all(&b);
  }
  double elapsed = bench_now_seconds() - start;

  bench_pages_unmap(b.objects, array_bytes); /* what stays resident now is the allocator's */
  idle(idle_ms, b.size);
  uint64_t rss_idle = bench_rss_bytes();
  bench_report report = {remote ? "burst-remote" : "burst", b.count, elapsed, b.count * b.size, rss_start,
                         b.checksum, rss_idle > 0 ? rss_idle : 1};
  bench_print(&report);
  return 0;
}
