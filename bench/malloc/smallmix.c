/* Single-threaded small objects of varied sizes with some realloc: the pattern
 * of a compiler or a logic minimiser (espresso), and of glibc's simple
 * benchmark.
 *
 * Each step visits a random slot of a live window. An empty slot gets a new
 * object: 60% are 16-64 B, 30% 64-256 B, 10% 256 B-2 KiB. An occupied slot's
 * object is, one time in four, grown with realloc by half (a growing string
 * or vector: the kept prefix is checked, the new tail filled) unless that would
 * pass 8 KiB; otherwise it is checked and freed. Every --phase steps a run of
 * --phase-free consecutive slots is freed at once, as when a compiler drops
 * the trees of one function. */
#include "bench_common.h"

enum { kMinSize = 16, kMaxSize = 8192 };

static bench_option options[] = {
    {"ops", 8000000, "operations (slot visits)"},
    {"window", 100000, "slots in the live window"},
    {"phase", 4096, "steps between bulk frees"},
    {"phase-free", 512, "consecutive slots freed by a bulk free"},
    {"seed", 1, "random seed"},
};

static size_t draw_size(bench_rng *rng) {
  uint64_t r = bench_next(rng);
  unsigned kind = (unsigned)(r % 10);
  r /= 10;
  if (kind < 6) return 16 + (size_t)(r % (64 - 16 + 1));
  if (kind < 9) return 64 + (size_t)(r % (256 - 64 + 1));
  return 256 + (size_t)(r % (2048 - 256 + 1));
}

static void check_and_free(bench_live* s, unsigned char* p) {
  bench_live_free(s, p, bench_check_object(p, kMinSize, kMaxSize, s->verify_full));
}

/* Grow p by half: realloc must keep the old bytes; the object gets a new tag. */
static unsigned char* grow(bench_live* s, unsigned char* p) {
  uint64_t tag = bench_check_object(p, kMinSize, kMaxSize, s->verify_full);
  size_t old_size = bench_tag_size(tag);
  size_t new_size = old_size + old_size / 2;
  unsigned char *q = realloc(p, new_size);
  if (q == NULL) bench_fail("realloc returned NULL", p);
  uint64_t kept;
  memcpy(&kept, q, sizeof kept);
  if (kept != tag || q[old_size - 1] != bench_fill_byte(tag)) bench_fail("realloc lost the object's contents", q);
  s->checksum += tag;
  uint64_t new_tag = bench_tag(++s->next_seq, new_size);
  memcpy(q, &new_tag, sizeof new_tag);
  memset(q + sizeof new_tag, bench_fill_byte(new_tag), new_size - sizeof new_tag);
  bench_live_add(s, (int64_t)(new_size - old_size));
  return q;
}

int main(int argc, char **argv) {
  bench_live s = bench_parse_window_options(argc, argv, options, sizeof options / sizeof options[0]);
  const uint64_t ops = options[0].value, window = options[1].value;
  const uint64_t phase = options[2].value, phase_free = options[3].value;
  bench_require_positive(argv[0], "--phase", phase);
  bench_rng rng = {options[4].value};
  unsigned char** slots = bench_map(window * sizeof *slots);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t i = 0; i < ops; i++) {
    uint64_t r = bench_next(&rng);
    uint64_t slot = (r >> 8) % window;
    unsigned char *p = slots[slot];
    if (p == NULL) {
      size_t size = draw_size(&rng);
      slots[slot] = bench_new_object(++s.next_seq, size);
      bench_live_add(&s, (int64_t)size);
    } else if ((r & 3) == 0) {
      uint64_t tag;
      memcpy(&tag, p, sizeof tag);
      size_t size = bench_tag_size(tag);
      if (size + size / 2 <= kMaxSize) {
        slots[slot] = grow(&s, p);
      } else {
        check_and_free(&s, p);
        slots[slot] = NULL;
      }
    } else {
      check_and_free(&s, p);
      slots[slot] = NULL;
    }
    if (i % phase == phase - 1) { /* bulk free of a run of slots */
      uint64_t first = bench_next(&rng) % window;
      for (uint64_t k = 0; k < phase_free && k < window; k++) {
        uint64_t j = (first + k) % window;
        if (slots[j] != NULL) check_and_free(&s, slots[j]);
        slots[j] = NULL;
      }
    }
  }
  for (uint64_t i = 0; i < window; i++)
    if (slots[i] != NULL) check_and_free(&s, slots[i]);
  double elapsed = bench_now_seconds() - start;

  bench_finish("smallmix", ops, elapsed, (int64_t)s.live_bytes, s.peak_live_bytes, rss_start, s.checksum);
  return 0;
}
