/* Large objects: 64 KiB - 8 MiB (log-uniform: each power of two in the range
 * is equally likely), over a small live window, with realloc in the mix.
 *
 * Each operation picks a random slot. A quarter of the time an occupied slot's
 * object is reallocated to a new size (its preserved prefix is checked);
 * otherwise the object is checked and freed and a new one takes its place.
 * Every page of a new object (and of a realloc's new tail) is written, as a
 * program would, so the figures include page faults and the resident set
 * reflects what the allocator really keeps. */
#include "bench_common.h"

enum { kMinShift = 16, kMaxShift = 23, kPage = 4096 };

static bench_option options[] = {
    {"ops", 8000, "operations (slot visits)"},
    {"window", 24, "slots in the live window"},
    {"seed", 1, "random seed"},
};

/* 2^k + uniform[0, 2^k) for k in [16, 23): 64 KiB .. 8 MiB - 1. */
static size_t draw_size(bench_rng *rng) {
  unsigned shift = kMinShift + (unsigned)bench_range(rng, 0, kMaxShift - kMinShift - 1);
  return ((size_t)1 << shift) + (size_t)(bench_next(rng) & (((uint64_t)1 << shift) - 1));
}

/* The tag sits at both ends; the fill byte at offset 8 of every page between. */
static size_t first_fill(void) { return sizeof(uint64_t); }
static int is_fill_offset(size_t off, size_t size) { return off + sizeof(uint64_t) < size; }

static void write_pattern(unsigned char *p, size_t size, uint64_t tag) {
  unsigned char fill = bench_fill_byte(tag);
  for (size_t off = first_fill(); is_fill_offset(off, size); off += kPage) p[off] = fill;
  memcpy(p, &tag, sizeof tag);
  memcpy(p + size - sizeof tag, &tag, sizeof tag);
}

/* Checks the tags at both ends, and with --verify the fill of every page
 * below `upto` (the whole object, or what realloc promised to keep). */
static void check_pattern(const bench_live* s, const unsigned char* p, size_t upto, uint64_t tag) {
  unsigned char fill = bench_fill_byte(tag);
  if (s->verify_full) {
    for (size_t off = first_fill(); is_fill_offset(off, upto); off += kPage)
      if (p[off] != fill) bench_fail("object body overwritten", p);
  }
}

/* The object's tag, after checking that its two copies agree. */
static uint64_t read_tag(const unsigned char *p) {
  uint64_t head, tail;
  memcpy(&head, p, sizeof head);
  size_t size = bench_tag_size(head);
  if (size < ((size_t)1 << kMinShift) || size >= ((size_t)1 << kMaxShift)) bench_fail("object header overwritten", p);
  memcpy(&tail, p + size - sizeof tail, sizeof tail);
  if (tail != head) bench_fail("object tail overwritten", p);
  return head;
}

static unsigned char* new_object(bench_live* s, size_t size) {
  unsigned char *p = malloc(size);
  if (p == NULL) bench_fail("malloc returned NULL", NULL);
  write_pattern(p, size, bench_tag(++s->next_seq, size));
  bench_live_add(s, (int64_t)size);
  return p;
}

static void check_and_free(bench_live* s, unsigned char* p) {
  uint64_t tag = read_tag(p);
  check_pattern(s, p, bench_tag_size(tag), tag);
  bench_live_free(s, p, tag);
}

/* realloc keeps min(old, new) bytes: check them, then retag the object. */
static unsigned char* resize(bench_live* s, unsigned char* p, size_t size) {
  uint64_t old_tag = read_tag(p);
  size_t old_size = bench_tag_size(old_tag);
  check_pattern(s, p, old_size, old_tag);
  unsigned char *q = realloc(p, size);
  if (q == NULL) bench_fail("realloc returned NULL", p);
  uint64_t moved_head;
  memcpy(&moved_head, q, sizeof moved_head);
  if (moved_head != old_tag) bench_fail("realloc lost the object's head", q);
  check_pattern(s, q, old_size < size ? old_size : size, old_tag);
  s->checksum += old_tag;
  bench_live_add(s, (int64_t)size - (int64_t)old_size);
  write_pattern(q, size, bench_tag(++s->next_seq, size));
  return q;
}

int main(int argc, char **argv) {
  bench_live s = bench_parse_window_options(argc, argv, options, sizeof options / sizeof options[0]);
  const uint64_t ops = options[0].value, window = options[1].value;
  bench_rng rng = {options[2].value};
  unsigned char** slots = bench_map(window * sizeof *slots);
  uint64_t rss_start = bench_rss_bytes();

  double start = bench_now_seconds();
  for (uint64_t i = 0; i < ops; i++) {
    uint64_t slot = bench_next(&rng) % window;
    int do_realloc = (bench_next(&rng) & 3) == 0;
    size_t size = draw_size(&rng);
    if (slots[slot] != NULL && do_realloc) {
      slots[slot] = resize(&s, slots[slot], size);
    } else {
      if (slots[slot] != NULL) check_and_free(&s, slots[slot]);
      slots[slot] = new_object(&s, size);
    }
  }
  for (uint64_t i = 0; i < window; i++)
    if (slots[i] != NULL) check_and_free(&s, slots[i]);
  double elapsed = bench_now_seconds() - start;

  bench_finish("large", ops, elapsed, (int64_t)s.live_bytes, s.peak_live_bytes, rss_start, s.checksum);
  return 0;
}
