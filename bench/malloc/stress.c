/* Thread churn at many threads with cross-thread transfers (the pattern of
 * mimalloc's test-stress, written anew here).
 *
 * Every iteration starts --threads OS threads and joins them. Thread t takes
 * 100 * --scale * (t % 8 + 1) steps. A step callocs either a short-lived
 * object of 1..16 words into a local array (grown by realloc, 100 000 pointers
 * at a time) or, half the time while any are left to make, a "retained"
 * object of 1..64 words kept until the thread ends. One object in 100 has 100x
 * the words, and among those one in 10 has 1000x and one in 100 10000x (up to
 * ~10 MiB). Every object is checked to be zero and then filled with a cookie
 * pattern. After each step a random local slot is freed with chance 66 % and
 * a random local pointer is swapped with a random slot of a shared table of
 * 1000 pointers (an atomic exchange) with chance 25 %, so objects move between
 * threads and outlive theirs. A thread frees everything it holds at its end;
 * after each iteration main frees about half of the shared table.
 *
 * Unlike the other workloads, the local and retained arrays come from the
 * allocator (realloc and calloc): that is part of the pattern. The decisions
 * of each thread depend only on the seed, so the checksum (a sum over the
 * objects freed) is the same under every allocator. */
#include <pthread.h>
#include <stdatomic.h>

#include "bench_common.h"

enum {
  kMaxThreads = 256,
  kTransfers = 1000,
  kGrowStep = 100000,
  kShortShifts = 5,    /* short-lived objects: 1 << (0..4) words */
  kRetainedShifts = 7, /* retained objects: 1 << (0..6) words */
  kPeakSampleEvery = 256,
};
#define kCookie ((uint64_t)0xbf58476d1ce4e5b9ull)
#define kMaxWords ((uint64_t)64 * 10000)

static bench_option options[] = {
    {"iterations", 10, "rounds of thread creation"},
    {"threads", 32, "threads per iteration (<= 256)"},
    {"scale", 50, "steps per thread = 100 * scale * (thread % 8 + 1)"},
    {"seed", 1, "random seed"},
};

typedef struct {
  _Alignas(64) _Atomic int64_t net_bytes; /* allocated minus freed by whoever ran as this thread number */
  uint64_t checksum;
  uint64_t allocations;
  int64_t peak_bytes;
} thread_account;

static struct {
  uint64_t iterations, threads, scale, seed;
  int verify_full;
  _Atomic(uint64_t *) transfer[kTransfers];
  thread_account accounts[kMaxThreads + 1]; /* the last one is main's */
} g;

static int chance(bench_rng *rng, unsigned percent) { return bench_next(rng) % 100 < percent; }

/* 1 in 100 objects is bigger: x100, or (1 in 10 of those) x1000, or (1 in 100) x10000. */
static uint64_t draw_words(bench_rng *rng, unsigned shifts) {
  uint64_t words = (uint64_t)1 << (bench_next(rng) % shifts);
  if (chance(rng, 1)) {
    if (chance(rng, 1)) words *= 10000;
    else if (chance(rng, 10)) words *= 1000;
    else words *= 100;
  }
  return words;
}

static uint64_t *new_object(thread_account *a, uint64_t words) {
  uint64_t *p = calloc(words, sizeof *p);
  if (p == NULL) bench_fail("calloc returned NULL", NULL);
  for (uint64_t i = 0; i < words; i++) {
    if (p[i] != 0) bench_fail("calloc memory is not zero", p);
    p[i] = (words - i) ^ kCookie;
  }
  bench_net_add(&a->net_bytes, (int64_t)(words * sizeof *p));
  a->allocations++;
  return p;
}

/* Checks the cookie (both ends, every word with --verify) and frees. */
static void check_and_free(thread_account *a, uint64_t *p) {
  if (p == NULL) return;
  uint64_t words = p[0] ^ kCookie;
  if (words == 0 || words > kMaxWords) bench_fail("object header overwritten", p);
  if ((p[words - 1] ^ kCookie) != 1) bench_fail("object tail overwritten", p);
  if (g.verify_full) {
    for (uint64_t i = 1; i < words; i++)
      if ((p[i] ^ kCookie) != words - i) bench_fail("object body overwritten", p);
  }
  a->checksum += words * 0x9E3779B97F4A7C15ull + 1;
  bench_net_add(&a->net_bytes, -(int64_t)(words * sizeof *p));
  free(p);
}

static void sample_peak(thread_account* a) { /* main's account too */
  bench_sample_peak(&a->peak_bytes, &g.accounts[0].net_bytes, sizeof g.accounts[0], g.threads + 1);
}

static void *run_thread(void *argp) {
  const bench_thread_arg* arg = argp;
  thread_account *a = &g.accounts[arg->index];
  bench_rng rng = {g.seed * 0x10001 + arg->iteration * kMaxThreads + arg->index};
  uint64_t to_alloc = 100 * g.scale * (arg->index % 8 + 1);
  uint64_t to_retain = to_alloc / 2;
  uint64_t **local = NULL;
  uint64_t local_size = 0, local_top = 0;
  uint64_t **retained = calloc(to_retain + 1, sizeof *retained);
  uint64_t retained_top = 0;
  if (retained == NULL) bench_fail("calloc of the retained array", NULL);
  for (uint64_t step = 0; to_alloc > 0 || to_retain > 0; step++) {
    if (to_retain == 0 || (chance(&rng, 50) && to_alloc > 0)) {
      to_alloc--;
      if (local_top == local_size) {
        local_size += kGrowStep;
        local = realloc(local, local_size * sizeof *local);
        if (local == NULL) bench_fail("realloc of the local array", NULL);
      }
      local[local_top++] = new_object(a, draw_words(&rng, kShortShifts));
    } else {
      to_retain--;
      retained[retained_top++] = new_object(a, draw_words(&rng, kRetainedShifts));
    }
    if (chance(&rng, 66) && local_top > 0) {
      uint64_t slot = bench_next(&rng) % local_top;
      check_and_free(a, local[slot]);
      local[slot] = NULL;
    }
    if (chance(&rng, 25) && local_top > 0) {
      uint64_t slot = bench_next(&rng) % local_top;
      uint64_t shared = bench_next(&rng) % kTransfers;
      local[slot] = atomic_exchange_explicit(&g.transfer[shared], local[slot], memory_order_acq_rel);
    }
    if (step % kPeakSampleEvery == 0) sample_peak(a);
  }
  sample_peak(a);
  for (uint64_t i = 0; i < retained_top; i++) check_and_free(a, retained[i]);
  for (uint64_t i = 0; i < local_top; i++) check_and_free(a, local[i]);
  free(retained);
  free(local);
  return NULL;
}

int main(int argc, char **argv) {
  g.verify_full = bench_parse_iteration_options(argc, argv, options, sizeof options / sizeof options[0], kMaxThreads);
  g.iterations = options[0].value;
  g.threads = options[1].value;
  g.scale = options[2].value;
  g.seed = options[3].value;
  bench_require_positive(argv[0], "--scale", g.scale);
  thread_account *main_account = &g.accounts[g.threads];
  bench_rng rng = {g.seed ^ 0x5EED5EED5EEDull};
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t it = 0; it < g.iterations; it++) {
    bench_run_iteration(it, g.threads, run_thread);
    int last = it + 1 == g.iterations;
    for (int s = 0; s < kTransfers; s++) /* about half; everything after the last iteration */
      if (chance(&rng, 50) || last) check_and_free(main_account, atomic_exchange(&g.transfer[s], NULL));
  }
  double elapsed = bench_now_seconds() - start;

  bench_totals totals = {0, 0, 0};
  uint64_t allocations = 0;
  for (uint64_t t = 0; t <= g.threads; t++) {
    bench_totals_add(&totals, &g.accounts[t].net_bytes, g.accounts[t].checksum, g.accounts[t].peak_bytes);
    allocations += g.accounts[t].allocations;
  }
  bench_totals_finish(&totals, "stress", allocations, elapsed, rss_start);
  return 0;
}
