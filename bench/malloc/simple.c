/* Batches of one small size, allocated then all freed (one thread): the
 * pattern of glibc's simple malloc benchmark, where libstrata measured 1.09x
 * mimalloc's time (issue 12).
 *
 * For each size of a fixed list (16 B - 1 KiB) and each batch length (25 -
 * 1600 objects), the program repeatedly allocates a batch, then checks and
 * frees all of it, front to back or back to front (the seed picks per batch),
 * so the allocator's free lists fill and drain completely every time.
 *
 * Objects get a tag at the front and a fill byte at the end only (the whole
 * body with --verify): writing every byte would time memset, not malloc.
 * The checksum (sum of freed tags) depends only on the seed and the sizes. */
#include "bench_common.h"

static const size_t kSizes[] = {16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
static const size_t kBatches[] = {25, 100, 400, 1600};
enum {
  kNumSizes = sizeof kSizes / sizeof kSizes[0],
  kNumBatches = sizeof kBatches / sizeof kBatches[0],
  kMaxBatch = 1600,
};

static bench_option options[] = {
    {"ops", 16000000, "allocations in all (shared equally by every size and batch length)"},
    {"seed", 1, "random seed (free order of each batch)"},
};

typedef struct {
  uint64_t seq, checksum, live_bytes, peak_live_bytes;
  int verify_full;
} simple_state;

static unsigned char *new_object(simple_state *s, size_t size) {
  return bench_new_object_ends(++s->seq, size, s->verify_full);
}

static void check_and_free(simple_state *s, unsigned char *p, size_t size) {
  uint64_t tag = bench_check_object(p, size, size, s->verify_full);
  s->checksum += tag;
  free(p);
}

/* One batch: allocate `count` objects of `size`, then free them all. */
static void run_batch(simple_state *s, unsigned char **batch, size_t size, size_t count, int backwards) {
  for (size_t i = 0; i < count; i++) batch[i] = new_object(s, size);
  s->live_bytes = (uint64_t)count * size;
  if (s->live_bytes > s->peak_live_bytes) s->peak_live_bytes = s->live_bytes;
  for (size_t i = 0; i < count; i++) check_and_free(s, batch[backwards ? count - 1 - i : i], size);
  s->live_bytes = 0;
}

int main(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  const uint64_t ops = options[0].value;
  bench_require_positive(argv[0], "--ops", ops);
  bench_rng rng = {options[1].value};
  unsigned char **batch = bench_map(kMaxBatch * sizeof *batch);
  simple_state s = {0, 0, 0, 0, flags.verify_full};
  const uint64_t per_pair = ops / (kNumSizes * kNumBatches); /* allocations per (size, batch length) */
  uint64_t done = 0;
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (size_t si = 0; si < kNumSizes; si++) {
    for (size_t bi = 0; bi < kNumBatches; bi++) {
      const size_t count = kBatches[bi];
      uint64_t rounds = per_pair / count;
      if (rounds == 0) rounds = 1; /* tiny --ops: every pair still runs once */
      for (uint64_t r = 0; r < rounds; r++) {
        run_batch(&s, batch, kSizes[si], count, (int)(bench_next(&rng) & 1));
        done += count;
      }
    }
  }
  double elapsed = bench_now_seconds() - start;

  if (s.seq != done) bench_fail("allocation count mismatch", NULL);
  bench_report report = {"simple", done, elapsed, s.peak_live_bytes, rss_start, s.checksum, 0};
  bench_print(&report);
  return 0;
}
