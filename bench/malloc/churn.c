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

typedef struct {
  uint64_t live_bytes;
  uint64_t peak_live_bytes;
  uint64_t checksum;
  uint64_t next_seq;
  int verify_full;
} churn_state;

static void *new_object(churn_state *s, size_t size) {
  unsigned char *p = bench_new_object(++s->next_seq, size);
  s->live_bytes += size;
  if (s->live_bytes > s->peak_live_bytes) s->peak_live_bytes = s->live_bytes;
  return p;
}

static void check_and_free(churn_state *s, unsigned char *p) {
  uint64_t tag = bench_check_object(p, kMinSize, kMaxSize, s->verify_full);
  s->checksum += tag;
  s->live_bytes -= bench_tag_size(tag);
  free(p);
}

int main(int argc, char **argv) {
  bench_flags flags = bench_parse(argc, argv, options, sizeof options / sizeof options[0]);
  bench_check_origin(&flags);
  const uint64_t ops = options[0].value, window = options[1].value;
  bench_require_positive(argv[0], "--window", window);
  bench_rng rng = {options[2].value};
  unsigned char **slots = bench_map(window * sizeof *slots);
  churn_state s = {0, 0, 0, 0, flags.verify_full};
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

  if (s.live_bytes != 0) bench_fail("live byte count does not return to zero", NULL);
  bench_report report = {"churn", ops, elapsed, s.peak_live_bytes, rss_start, s.checksum, 0};
  bench_print(&report);
  return 0;
}
