/* Shared pieces of the malloc benchmarks: clock, RNG, options, object tags,
 * bookkeeping memory, the self-check of which malloc is in effect, and the
 * one-line report the driver (`strata-lab bench malloc`) parses.
 *
 * The benchmarks call plain malloc/free/realloc: the allocator under test is
 * chosen by LD_PRELOAD. Their own bookkeeping (slot arrays) comes from mmap so
 * it never goes through the allocator being measured. */
#pragma once
/* Built with _GNU_SOURCE (for dladdr), set by CMake before any system header. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- failure ---------------------------------------------------------- */

static void bench_fail(const char *what, const void *where) {
  fprintf(stderr, "bench: FAILED: %s (object %p)\n", what, where);
  exit(1);
}

/* ---- clock ------------------------------------------------------------ */

static double bench_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- RNG: splitmix64, deterministic per seed and independent of libc --- */

typedef struct {
  uint64_t state;
} bench_rng;

static inline uint64_t bench_next(bench_rng *r) {
  uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi]; the modulo bias is irrelevant here. */
static inline uint64_t bench_range(bench_rng *r, uint64_t lo, uint64_t hi) {
  return lo + bench_next(r) % (hi - lo + 1);
}

/* ---- options: "--name value" pairs, plus the flag "--verify" ----------- */

typedef struct {
  const char *name;
  uint64_t value;
  const char *help;
} bench_option;

typedef struct {
  int verify_full;         /* --verify: check every byte of each object, not only its ends */
  const char *expect_lib;  /* --expect-malloc-from S: fail unless malloc comes from a file containing S */
} bench_flags;

static void bench_usage(const char *prog, const bench_option *opts, size_t n) {
  fprintf(stderr, "usage: %s [--verify] [--expect-malloc-from SUBSTRING]", prog);
  for (size_t i = 0; i < n; i++) fprintf(stderr, " [--%s N]", opts[i].name);
  fprintf(stderr, "\n");
  for (size_t i = 0; i < n; i++)
    fprintf(stderr, "  --%-8s %s (default %" PRIu64 ")\n", opts[i].name, opts[i].help, opts[i].value);
  exit(2);
}

static bench_flags bench_parse(int argc, char **argv, bench_option *opts, size_t n) {
  bench_flags flags = {0, NULL};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--verify") == 0) {
      flags.verify_full = 1;
      continue;
    }
    if (strcmp(arg, "--expect-malloc-from") == 0 && i + 1 < argc) {
      flags.expect_lib = argv[++i];
      continue;
    }
    size_t k = 0;
    while (k < n && !(strncmp(arg, "--", 2) == 0 && strcmp(arg + 2, opts[k].name) == 0)) k++;
    if (k == n || i + 1 >= argc) {
      fprintf(stderr, "%s: unknown or incomplete option '%s'\n", argv[0], arg);
      bench_usage(argv[0], opts, n);
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(argv[++i], &end, 10);
    if (errno != 0 || end == argv[i] || *end != '\0') {
      fprintf(stderr, "%s: --%s wants a non-negative integer, got '%s'\n", argv[0], opts[k].name, argv[i]);
      exit(2);
    }
    opts[k].value = (uint64_t)v;
  }
  return flags;
}

/* ---- which malloc is in effect ---------------------------------------- */

/* The file that defines the malloc this process calls: libc.so.6 without a
 * preload, the preloaded library with one. A missing or broken LD_PRELOAD is
 * only a warning from ld.so, so the driver and the smoke tests check this. */
static const char *bench_malloc_origin(void) {
  Dl_info info;
  void *(*volatile fn)(size_t) = malloc;
  if (dladdr((void *)fn, &info) == 0 || info.dli_fname == NULL) return "unknown";
  return info.dli_fname;
}

static void bench_check_origin(const bench_flags *flags) {
  if (flags->expect_lib == NULL) return;
  const char *origin = bench_malloc_origin();
  if (strstr(origin, flags->expect_lib) == NULL) {
    fprintf(stderr, "bench: FAILED: malloc comes from '%s', expected '%s'\n", origin, flags->expect_lib);
    exit(1);
  }
}

/* ---- memory figures ---------------------------------------------------- */

/* Resident set size now, from /proc/self/statm (0 if unreadable). */
static uint64_t bench_rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, resident = 0;
  if (f == NULL) return 0;
  if (fscanf(f, "%llu %llu", &size, &resident) != 2) resident = 0;
  fclose(f);
  return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Peak resident set size of this process (VmHWM), 0 if unreadable. Unlike
 * the parent's wait4/ru_maxrss, it does not include the RSS of the process
 * that forked us (Linux carries that over exec into ru_maxrss). */
static uint64_t bench_peak_rss_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  unsigned long long kib = 0;
  if (f == NULL) return 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmHWM: %llu kB", &kib) == 1) break;
  fclose(f);
  return (uint64_t)kib * 1024;
}

/* Pages straight from the kernel, outside the allocator under test, through
   strata's platform layer (bench_pages.cpp). */
void *bench_pages_map(size_t bytes);
void bench_pages_unmap(void *pages, size_t bytes);

/* Zeroed, touched bookkeeping memory straight from the kernel. */
static inline void *bench_map(size_t bytes) {
  void *p = bench_pages_map(bytes);
  if (p == NULL) bench_fail("mmap of bookkeeping memory", NULL);
  memset(p, 0, bytes); /* resident before the clock starts and in rss_start */
  return p;
}

/* A bad option value ends the program with status 2, naming the option. */
static inline void bench_require_range(const char *prog, const char *option, uint64_t value, uint64_t lo,
                                       uint64_t hi) {
  if (value < lo || value > hi) {
    fprintf(stderr, "%s: %s must be %llu-%llu\n", prog, option, (unsigned long long)lo, (unsigned long long)hi);
    exit(2);
  }
}
static inline void bench_require_positive(const char *prog, const char *option, uint64_t value) {
  if (value == 0) {
    fprintf(stderr, "%s: %s must be at least 1\n", prog, option);
    exit(2);
  }
}

/* The options of the programs whose threads each own a working set of
 * slots (threadsmall, xfree), in this order: ops per thread, slots per thread
 * (--slots or --window), threads, seed. Parses them, checks where malloc comes
 * from, and ends the program (status 2) on a bad value. */
typedef struct {
  uint64_t ops, slots, threads, seed;
  int verify_full;
} bench_thread_options;

static inline bench_thread_options bench_parse_thread_options(int argc, char **argv, bench_option opts[4],
                                                              uint64_t min_threads, uint64_t max_threads) {
  bench_flags flags = bench_parse(argc, argv, opts, 4);
  bench_check_origin(&flags);
  bench_thread_options o = {opts[0].value, opts[1].value, opts[2].value, opts[3].value, flags.verify_full};
  char slots_option[32];
  snprintf(slots_option, sizeof slots_option, "--%s", opts[1].name);
  bench_require_positive(argv[0], slots_option, o.slots);
  bench_require_range(argv[0], "--threads", o.threads, min_threads, max_threads);
  return o;
}

/* ---- threads --------------------------------------------------------- */

enum { kBenchMaxThreads = 256 };

/* Runs fn on `count` (<= 256) threads at once, thread t getting the worker at
 * (char *)first + t * stride, and joins them all. */
static inline void bench_run_threads(uint64_t count, void *(*fn)(void *), void *first, size_t stride) {
  pthread_t threads[kBenchMaxThreads];
  if (count > kBenchMaxThreads) bench_fail("too many threads", NULL);
  for (uint64_t t = 0; t < count; t++)
    if (pthread_create(&threads[t], NULL, fn, (char *)first + t * stride) != 0) bench_fail("pthread_create", NULL);
  for (uint64_t t = 0; t < count; t++) pthread_join(threads[t], NULL);
}

/* The programs that start fresh threads every iteration (stress,
 * threadchurn): --iterations first, --threads second (1 to max_threads).
 * Parses the options, checks where malloc comes from, ends the program
 * (status 2) on a bad thread count; returns --verify. */
static inline int bench_parse_iteration_options(int argc, char** argv, bench_option* opts, size_t n,
                                                uint64_t max_threads) {
  bench_flags flags = bench_parse(argc, argv, opts, n);
  bench_check_origin(&flags);
  bench_require_range(argv[0], "--threads", opts[1].value, 1, max_threads);
  return flags.verify_full;
}

/* What each of those threads is told: its iteration and its index. */
typedef struct {
  uint64_t iteration, index;
} bench_thread_arg;

/* Iteration `iteration`: fn on `count` (<= 256) fresh threads at once. */
static inline void bench_run_iteration(uint64_t iteration, uint64_t count, void* (*fn)(void*)) {
  bench_thread_arg args[kBenchMaxThreads];
  for (uint64_t t = 0; t < count && t < kBenchMaxThreads; t++) args[t] = (bench_thread_arg){iteration, t};
  bench_run_threads(count, fn, args, sizeof args[0]);
}

/* ---- object tags ------------------------------------------------------- */

/* Every object starts with a 64-bit tag: sequence number above, requested
 * size in the low 24 bits, so a corrupted or swapped object is caught. Its
 * other bytes are filled with the tag's low byte mixed with the sequence. */
#define BENCH_SIZE_BITS 24
static inline uint64_t bench_tag(uint64_t seq, size_t size) {
  return (seq << BENCH_SIZE_BITS) | (uint64_t)size;
}
static inline size_t bench_tag_size(uint64_t tag) {
  return (size_t)(tag & ((1ull << BENCH_SIZE_BITS) - 1));
}
static inline unsigned char bench_fill_byte(uint64_t tag) {
  return (unsigned char)((tag >> BENCH_SIZE_BITS) * 131u + 7u);
}

/* A fresh tagged object of `size` (>= 8) bytes from malloc; aborts on NULL. */
static inline unsigned char *bench_new_object(uint64_t seq, size_t size) {
  unsigned char *p = malloc(size);
  if (p == NULL) bench_fail("malloc returned NULL", NULL);
  uint64_t tag = bench_tag(seq, size);
  memcpy(p, &tag, sizeof tag);
  memset(p + sizeof tag, bench_fill_byte(tag), size - sizeof tag);
  return p;
}

/* A tagged object with only its tag and last byte written (every byte when
 * verify_full): what bench_check_object reads, without timing a memset. */
static inline unsigned char *bench_new_object_ends(uint64_t seq, size_t size, int verify_full) {
  if (verify_full) return bench_new_object(seq, size);
  unsigned char *p = malloc(size);
  if (p == NULL) bench_fail("malloc returned NULL", NULL);
  uint64_t tag = bench_tag(seq, size);
  memcpy(p, &tag, sizeof tag);
  p[size - 1] = bench_fill_byte(tag);
  return p;
}

/* Checks a tagged object (its tag, last byte, and every byte when
 * verify_full) and returns its tag; the caller frees it. */
static inline uint64_t bench_check_object(const unsigned char *p, size_t min_size, size_t max_size, int verify_full) {
  uint64_t tag;
  memcpy(&tag, p, sizeof tag);
  size_t size = bench_tag_size(tag);
  if (size < min_size || size > max_size) bench_fail("object header overwritten", p);
  unsigned char fill = bench_fill_byte(tag);
  if (p[size - 1] != fill) bench_fail("object tail overwritten", p);
  if (verify_full) {
    for (size_t i = sizeof tag; i < size; i++)
      if (p[i] != fill) bench_fail("object body overwritten", p);
  }
  return tag;
}

/* ---- threads' live bytes (larson, threadchurn, xfree) -------------------- */

/* Adds delta to a thread's net byte count (allocated minus freed), which only
 * that thread writes and the others read to sample the peak: a relaxed load
 * and store, no read-modify-write. */
static inline void bench_net_add(_Atomic int64_t *net, int64_t delta) {
  atomic_store_explicit(net, atomic_load_explicit(net, memory_order_relaxed) + delta, memory_order_relaxed);
}

/* Raises *peak to the threads' net bytes now: the sum of `count` counts, the
 * first at *first and each next `stride` bytes on (as bench_run_threads lays
 * out workers), each read relaxed (a sample). */
static inline void bench_sample_peak(int64_t* peak, _Atomic int64_t* first, size_t stride, uint64_t count) {
  int64_t total = 0;
  for (uint64_t t = 0; t < count; t++)
    total += atomic_load_explicit((_Atomic int64_t*)((char*)first + t * stride), memory_order_relaxed);
  if (total > *peak) *peak = total;
}

/* Checks a tagged object, takes its size off *net, frees it; returns its tag. */
static inline uint64_t bench_check_and_free(unsigned char *p, size_t min_size, size_t max_size, int verify_full,
                                            _Atomic int64_t *net) {
  uint64_t tag = bench_check_object(p, min_size, max_size, verify_full);
  bench_net_add(net, -(int64_t)bench_tag_size(tag));
  free(p);
  return tag;
}

/* ---- the report ---------------------------------------------------------- */

typedef struct {
  const char *workload;
  uint64_t ops;
  double elapsed_s;
  uint64_t peak_live_bytes;
  uint64_t rss_start_bytes;
  uint64_t checksum;
  uint64_t rss_idle_bytes; /* burst: RSS after the frees and the idle spell (0: not measured) */
} bench_report;

static void bench_print(const bench_report *r) {
  printf("workload=%s ops=%" PRIu64 " elapsed_s=%.6f peak_live_bytes=%" PRIu64 " rss_start_bytes=%" PRIu64
         " rss_peak_bytes=%" PRIu64 " checksum=%016" PRIx64 " malloc_from=%s",
         r->workload, r->ops, r->elapsed_s, r->peak_live_bytes, r->rss_start_bytes, bench_peak_rss_bytes(),
         r->checksum, bench_malloc_origin());
  if (r->rss_idle_bytes != 0) printf(" rss_idle_bytes=%" PRIu64, r->rss_idle_bytes);
  printf("\n");
}

/* Ends a run whose objects are all freed: fails unless the bytes still
 * counted live are 0, then prints the report. */
static inline void bench_finish(const char* workload, uint64_t ops, double elapsed_s, int64_t live_left,
                                uint64_t peak_live_bytes, uint64_t rss_start_bytes, uint64_t checksum) {
  if (live_left != 0) bench_fail("live byte count does not return to zero", NULL);
  bench_report report = {workload, ops, elapsed_s, peak_live_bytes, rss_start_bytes, checksum, 0};
  bench_print(&report);
}

/* ---- one thread over a window of slots (churn, large, smallmix) --------- */

/* Its live bytes and their peak, the sum of the tags it freed, the last
 * sequence number it gave an object. */
typedef struct {
  uint64_t live_bytes, peak_live_bytes;
  uint64_t checksum;
  uint64_t next_seq;
  int verify_full;
} bench_live;

/* Parses the options (--ops first, then --window: at least 1), checks where
 * malloc comes from; the counts start at 0. */
static inline bench_live bench_parse_window_options(int argc, char** argv, bench_option* opts, size_t n) {
  bench_flags flags = bench_parse(argc, argv, opts, n);
  bench_check_origin(&flags);
  bench_require_positive(argv[0], "--window", opts[1].value);
  bench_live live = {0, 0, 0, 0, flags.verify_full};
  return live;
}

/* delta more bytes live (or fewer); the peak follows. */
static inline void bench_live_add(bench_live* s, int64_t delta) {
  s->live_bytes = (uint64_t)((int64_t)s->live_bytes + delta);
  if (s->live_bytes > s->peak_live_bytes) s->peak_live_bytes = s->live_bytes;
}

/* Frees p, an object checked already (its tag: tag): its tag joins the
 * checksum, its bytes leave the live count. */
static inline void bench_live_free(bench_live* s, void* p, uint64_t tag) {
  s->checksum += tag;
  s->live_bytes -= bench_tag_size(tag);
  free(p);
}

/* ---- threads' accounts, summed at the end ------------------------------- */

/* The threads' net bytes (0 once all is freed), the sum of their checksums
 * and the largest peak one of them sampled. */
typedef struct {
  int64_t net, peak;
  uint64_t checksum;
} bench_totals;

static inline void bench_totals_add(bench_totals* t, _Atomic int64_t* net_bytes, uint64_t checksum, int64_t peak) {
  t->net += atomic_load(net_bytes);
  t->checksum += checksum;
  if (peak > t->peak) t->peak = peak;
}

static inline void bench_totals_finish(const bench_totals* t, const char* workload, uint64_t ops, double elapsed_s,
                                       uint64_t rss_start_bytes) {
  bench_finish(workload, ops, elapsed_s, t->net, (uint64_t)t->peak, rss_start_bytes, t->checksum);
}
