/* Small-object churn: 16-64-byte objects allocated and freed in random order
 * over a live window of slots (one thread).
 *
 * Each operation picks a random slot. An occupied slot's object is checked and
 * freed, and half the time replaced by a new one; an empty slot gets a new
 * object. About two thirds of the slots stay occupied, so the live set hovers
 * near window * 2/3 objects while allocations and frees interleave randomly. */
#include "bench_common.h"

enum { kMinSize = 16, kMaxSize = 64 };

static bench_option options[] = {
    {"ops", 10000000, "operations (slot visits)"},
    {"window", 300000, "slots in the live window"},
    {"seed", 1, "random seed"},
};

static void* new_object(bench_live* s, size_t size) {
  unsigned char *p = bench_new_object(++s->next_seq, size);
  bench_live_add(s, (int64_t)size);
  return p;
}

static void check_and_free(bench_live* s, unsigned char* p) {
  bench_live_free(s, p, bench_check_object(p, kMinSize, kMaxSize, s->verify_full));
}

int main(int argc, char **argv) {
  bench_live s = bench_parse_window_options(argc, argv, options, sizeof options / sizeof options[0]);
  const uint64_t ops = options[0].value, window = options[1].value;
  bench_rng rng = {options[2].value};
  unsigned char** slots = bench_map(window * sizeof *slots);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t i = 0; i < ops; i++) {
    uint64_t r = bench_next(&rng);
    size_t size = kMinSize + (size_t)(r & 0xffff) % (kMaxSize - kMinSize + 1);
    int replace = (int)((r >> 16) & 1);
    uint64_t slot = (r >> 17) % window;
    if (slots[slot] != NULL) {
      check_and_free(&s, slots[slot]);
      slots[slot] = replace ? new_object(&s, size) : NULL;
    } else {
      slots[slot] = new_object(&s, size);
    }
  }
  for (uint64_t i = 0; i < window; i++)
    if (slots[i] != NULL) check_and_free(&s, slots[i]);
  double elapsed = bench_now_seconds() - start;

  bench_finish("churn", ops, elapsed, (int64_t)s.live_bytes, s.peak_live_bytes, rss_start, s.checksum);
  return 0;
}
