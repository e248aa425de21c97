/* Test programs for the lab: each mode makes a known sequence of malloc-family
 * calls, so lab/tests can assert exact profile counts. No stdio (its buffers
 * would be allocations of their own): results go out with write(2).
 * Usage: lab_alloc_patterns MODE. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void say(const char *text) { (void)!write(1, text, strlen(text)); }

static void check(int ok, const char *what) {
  if (!ok) {
    (void)!write(2, what, strlen(what));
    (void)!write(2, "\n", 1);
    abort();
  }
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* 100 x malloc(24), 50 x calloc(10, 8); all freed. */
static int basic(void) {
  void *small[100], *zeroed[50];
  for (int i = 0; i < 100; ++i) check((small[i] = malloc(24)) != NULL, "malloc");
  for (int i = 0; i < 50; ++i) check((zeroed[i] = calloc(10, 8)) != NULL, "calloc");
  for (int i = 0; i < 100; ++i) free(small[i]);
  for (int i = 0; i < 50; ++i) free(zeroed[i]);
  free(NULL); /* not counted */
  return 0;
}

/* realloc(NULL), grow, shrink, reallocarray, realloc to 0. */
static int reallocs(void) {
  void *volatile nothing = NULL; /* volatile: the compiler would turn realloc(NULL, n) into malloc(n) */
  char *p = realloc(nothing, 100);
  check(p != NULL, "realloc(NULL)");
  memset(p, 1, 100);
  check((p = realloc(p, 200)) != NULL, "realloc grow");
  check((p = realloc(p, 50)) != NULL, "realloc shrink");
  char *q = malloc(64);
  check(q != NULL, "malloc");
  check((q = reallocarray(q, 10, 32)) != NULL, "reallocarray");
  /* volatile: keep the compiler from flagging the overflow, or q as freed by the failed call */
  volatile size_t huge = SIZE_MAX;
  char *volatile same_q = q;
  check(reallocarray(same_q, huge, 2) == NULL, "reallocarray overflow");
  char *r = realloc(p, 0);
  if (r != NULL) { /* some allocators return a minimal object */
    say("realloc0=object\n");
    free(r);
  } else {
    say("realloc0=freed\n");
  }
  free(q);
  return 0;
}

static int aligned(void) {
  void *a = NULL;
  check(posix_memalign(&a, 64, 100) == 0 && ((uintptr_t)a % 64) == 0, "posix_memalign");
  void *b = aligned_alloc(128, 256);
  check(b != NULL && ((uintptr_t)b % 128) == 0, "aligned_alloc");
  void *c = memalign(256, 1000);
  check(c != NULL && ((uintptr_t)c % 256) == 0, "memalign");
  void *d = valloc(5000);
  check(d != NULL && ((uintptr_t)d % 4096) == 0, "valloc");
  void *e = pvalloc(5000); /* rounded up to 8192 */
  check(e != NULL && ((uintptr_t)e % 4096) == 0, "pvalloc");
  free(a), free(b), free(c), free(d), free(e);
  return 0;
}

/* 8 objects of 1..8 MiB (beyond mmap thresholds), freed in reverse. */
static int large(void) {
  char *big[8];
  for (int i = 0; i < 8; ++i) {
    check((big[i] = malloc((size_t)(i + 1) << 20)) != NULL, "malloc large");
    big[i][0] = 1;
  }
  for (int i = 7; i >= 0; --i) free(big[i]);
  return 0;
}

/* 4 threads; thread t makes 1000 objects of 100 + t bytes, frees them in
 * the other half of the threads' order, and gives half to main to free. */
enum { kThreads = 4, kPerThread = 1000 };
static void *handed[kThreads][kPerThread / 2];
static void *thread_body(void *arg) {
  const int t = (int)(intptr_t)arg;
  void *mine[kPerThread];
  for (int i = 0; i < kPerThread; ++i) check((mine[i] = malloc(100 + t)) != NULL, "malloc in thread");
  for (int i = 0; i < kPerThread; ++i) {
    if (i % 2) free(mine[i]);
    else handed[t][i / 2] = mine[i];
  }
  return NULL;
}
static int threads(void) {
  pthread_t ids[kThreads];
  for (int t = 0; t < kThreads; ++t) check(pthread_create(&ids[t], NULL, thread_body, (void *)(intptr_t)t) == 0, "pthread_create");
  for (int t = 0; t < kThreads; ++t) pthread_join(ids[t], NULL);
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kPerThread / 2; ++i) free(handed[t][i]);
  return 0;
}

/* Parent keeps 10 x 32 bytes across a fork; the child makes and frees 5 x 48. */
static int forks(void) {
  void *kept[10];
  for (int i = 0; i < 10; ++i) check((kept[i] = malloc(32)) != NULL, "malloc");
  pid_t child = fork();
  check(child >= 0, "fork");
  if (child == 0) {
    void *mine[5];
    for (int i = 0; i < 5; ++i) check((mine[i] = malloc(48)) != NULL, "malloc in child");
    for (int i = 0; i < 5; ++i) free(mine[i]);
    exit(0);
  }
  int status = 0;
  check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
  for (int i = 0; i < 10; ++i) free(kept[i]);
  return 0;
}

/* Fragmentation: 8192 x 4000 bytes, free every other one, then 4096 x 8000
 * bytes that cannot fit the 4000-byte holes. Peak live = 4096 x 4000 +
 * 4096 x 8000; memory in use ~ 8192 x 4000 + 4096 x 8000: ratio ~ 4/3.
 * Holds the peak for hold_ms (frag: 400 ms, so the meter's timer samples it;
 * frag-brief: not at all, so only the profiler's own samples at live peaks
 * can see it). frag-child runs frag in a forked child while the parent
 * allocates almost nothing. */
enum { kFragObjects = 8192 };
static char *frag_small[kFragObjects], *frag_big[kFragObjects / 2];
static int frag_hold(long hold_ms) {
  for (int i = 0; i < kFragObjects; ++i) {
    check((frag_small[i] = malloc(4000)) != NULL, "malloc");
    memset(frag_small[i], 1, 4000);
  }
  for (int i = 0; i < kFragObjects; i += 2) free(frag_small[i]);
  for (int i = 0; i < kFragObjects / 2; ++i) {
    check((frag_big[i] = malloc(8000)) != NULL, "malloc");
    memset(frag_big[i], 2, 8000);
  }
  if (hold_ms > 0) sleep_ms(hold_ms);
  for (int i = 1; i < kFragObjects; i += 2) free(frag_small[i]);
  for (int i = 0; i < kFragObjects / 2; ++i) free(frag_big[i]);
  return 0;
}
static int frag(void) { return frag_hold(400); }
static int frag_brief(void) { return frag_hold(0); }
static int frag_child(void) {
  pid_t child = fork();
  check(child >= 0, "fork");
  if (child == 0) exit(frag_hold(400));
  int status = 0;
  check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
  return 0;
}

/* For the memory mode (STRATA_LAB_MEMORY=1), allocations the program never
 * touches. untouched: 16384 x malloc(1000), then one malloc of 48 MiB and one
 * calloc of 16 MiB (both mmapped by glibc), none written; all freed. Peak live
 * = 16,384,000 + 64 MiB. */
static int untouched(void) {
  enum { kObjects = 16384 };
  static void *volatile objects[kObjects]; /* volatile: keep malloc/free pairs */
  for (int i = 0; i < kObjects; ++i) check((objects[i] = malloc(1000)) != NULL, "malloc");
  void *volatile big = malloc(48u << 20), *volatile zeroed = calloc(16, 1u << 20);
  check(big != NULL && zeroed != NULL, "large");
  free(big);
  free(zeroed);
  for (int i = 0; i < kObjects; ++i) free(objects[i]);
  return 0;
}

/* known: 16384 x malloc(1000), all untouched and then freed. Peak live =
 * 16,384,000 bytes; glibc holds each in a 1,008-byte chunk. */
static int known(void) {
  enum { kObjects = 16384 };
  static void *volatile objects[kObjects]; /* volatile: keep malloc/free pairs */
  for (int i = 0; i < kObjects; ++i) check((objects[i] = malloc(1000)) != NULL, "malloc");
  for (int i = 0; i < kObjects; ++i) free(objects[i]);
  return 0;
}

/* spike: 300 ms at a few KiB live, a peak of 8192 x 4000 bytes freed as soon
 * as it is made, then 300 ms more: a timer sampling every 100 ms almost
 * always misses it. */
static int spike(void) {
  enum { kObjects = 8192 };
  static void *volatile objects[kObjects]; /* volatile: keep malloc/free pairs */
  void *volatile small = malloc(4096);
  check(small != NULL, "malloc");
  sleep_ms(300);
  for (int i = 0; i < kObjects; ++i) check((objects[i] = malloc(4000)) != NULL, "malloc");
  for (int i = kObjects - 1; i >= 0; --i) free(objects[i]);
  sleep_ms(300);
  free(small);
  return 0;
}

/* contents: the memory mode's touching leaves what the program sees as it
 * was: calloc'd memory reads zero, realloc keeps its bytes. */
static int contents(void) {
  enum { kPage = 4096 };
  unsigned char *zeroed = calloc(5, kPage);
  check(zeroed != NULL, "calloc");
  for (int i = 0; i < 5 * kPage; ++i) check(zeroed[i] == 0, "calloc memory is not zero");
  unsigned char *grown = malloc(3 * kPage);
  check(grown != NULL, "malloc");
  for (int i = 0; i < 3 * kPage; ++i) grown[i] = (unsigned char)(i * 7 + 1);
  check((grown = realloc(grown, 300 * kPage)) != NULL, "realloc");
  for (int i = 0; i < 3 * kPage; ++i) check(grown[i] == (unsigned char)(i * 7 + 1), "realloc lost a byte");
  free(grown);
  free(zeroed);
  say("contents kept\n");
  return 0;
}

/* A deterministic mix for record/replay: random sizes (some large, some
 * aligned, some calloc), reallocs, frees in pseudo-random order; 200 left live. */
static int mixed(void) {
  enum { kSlots = 2000 };
  static void *slot[kSlots];
  uint64_t x = 88172645463325252ull;
  for (int step = 0; step < 40000; ++step) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const int i = (int)(x % kSlots);
    const size_t size = (x >> 20) % 8 == 0 ? (size_t)((x >> 24) % 200000) : (size_t)((x >> 24) % 512);
    if (slot[i] == NULL) {
      switch ((x >> 40) % 4) {
        case 0: slot[i] = calloc(1, size); break;
        case 1: check(posix_memalign(&slot[i], 64, size) == 0, "posix_memalign"); break;
        default: slot[i] = malloc(size); break;
      }
      check(slot[i] != NULL || size == 0, "allocation");
    } else if ((x >> 44) % 3 == 0) {
      void *p = realloc(slot[i], size + 1);
      check(p != NULL, "realloc");
      slot[i] = p;
    } else {
      free(slot[i]);
      slot[i] = NULL;
    }
  }
  int live = 0;
  for (int i = 0; i < kSlots; ++i)
    if (slot[i] != NULL && live++ >= 200) free(slot[i]), slot[i] = NULL;
  return 0;
}

/* Allocation-heavy churn for measuring the shims' overhead (strata-lab bench shims):
 * 3 million malloc/free of 8..519 bytes over 4096 slots. Prints the loop's
 * own time ("ns=...") so process start and exit do not count. */
static int churn(void) {
  enum { kSlots = 4096 };
  static void *slot[kSlots];
  uint64_t x = 2463534242ull;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int step = 0; step < 3000000; ++step) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const int i = (int)(x % kSlots);
    if (slot[i] != NULL) {
      free(slot[i]);
      slot[i] = NULL;
    } else {
      check((slot[i] = malloc(8 + (x >> 32) % 512)) != NULL, "malloc");
      *(char *)slot[i] = 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  for (int i = 0; i < kSlots; ++i) free(slot[i]);
  char line[64];
  long long ns = (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
  int n = 0;
  char digits[24];
  do digits[n++] = (char)('0' + ns % 10); while ((ns /= 10) != 0);
  int len = 0;
  memcpy(line, "ns=", 3), len = 3;
  while (n > 0) line[len++] = digits[--n];
  line[len++] = '\n';
  (void)!write(1, line, (size_t)len);
  return 0;
}

/* glibc only: a free the shims cannot see (glibc's internal entry point),
 * then a malloc that gets the same address back from glibc's cache. */
extern void __libc_free(void *);
static int bypass(void) {
  void *p = malloc(40);
  check(p != NULL, "malloc");
  __libc_free(p);
  void *q = malloc(40);
  check(q == p, "glibc did not reuse the address");
  free(q);
  return 0;
}

/* Allocates a little, then exits 3 / aborts: the CLI must report it. */
static int exit3(void) {
  check(malloc(16) != NULL, "malloc");
  exit(3);
}
static int crash(void) {
  check(malloc(16) != NULL, "malloc");
  abort();
}

int main(int argc, char **argv) {
  static const struct { const char *name; int (*run)(void); } modes[] = {
      {"basic", basic}, {"realloc", reallocs}, {"aligned", aligned}, {"large", large},
      {"threads", threads}, {"fork", forks}, {"frag", frag}, {"frag-brief", frag_brief},
      {"frag-child", frag_child}, {"untouched", untouched}, {"known", known}, {"spike", spike},
      {"contents", contents}, {"mixed", mixed},
      {"churn", churn}, {"bypass", bypass}, {"exit3", exit3}, {"crash", crash}, {"nothing", NULL},
  };
  if (argc != 2) {
    say("usage: lab_alloc_patterns basic|realloc|aligned|large|threads|fork|frag|frag-brief|frag-child|untouched|known|spike|contents|mixed|churn|bypass|exit3|crash|nothing\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
    if (strcmp(argv[1], modes[i].name) == 0) return modes[i].run ? modes[i].run() : 0;
  say("unknown mode\n");
  return 2;
}
