/* Programs with known drag for strata-drag's tests (lab/tests/test_drag.py).
   usage: drag_cases MODE
   Each mode allocates, touches and reclaims objects at known points of
   allocation time (bytes allocated so far); the test computes the exact
   figures from the same plan. No stdio: it would allocate buffers of its own. */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include <strata/reap.h>

/* One store into the object: its last access is now. */
__attribute__((noinline)) static void touch(void* p) { *(volatile char*)p = 1; }

/* sizes 100, 1000, 400, 500: a is touched only at its allocation, b later. */
static int last_use(void) {
  char* a = malloc(100);
  touch(a);
  char* b = malloc(1000);
  touch(b);
  char* c = malloc(400);
  touch(c);
  touch(b);
  free(c);
  char* d = malloc(500);
  touch(d);
  free(a);
  free(d);
  free(b);
  return 0;
}

/* A region of three objects in a static arena, cleared (destroyed) at a known point. */
static char arena[1024] __attribute__((aligned(16)));
static int region(void) {
  VALGRIND_CREATE_MEMPOOL(arena, 0, 0);
  char* p1 = arena;
  VALGRIND_MEMPOOL_ALLOC(arena, p1, 64);
  touch(p1);
  char* p2 = arena + 64;
  VALGRIND_MEMPOOL_ALLOC(arena, p2, 64);
  touch(p2);
  char* p3 = arena + 128;
  VALGRIND_MEMPOOL_ALLOC(arena, p3, 128);
  touch(p3);
  touch(p1);
  char* h = malloc(256);
  touch(h);
  VALGRIND_MEMPOOL_ALLOC(arena, arena + 512, 0); /* two empty objects at one address: */
  VALGRIND_MEMPOOL_ALLOC(arena, arena + 512, 0); /* the second replaces the first */
  VALGRIND_DESTROY_MEMPOOL(arena);
  free(h);
  return 0;
}

/* A strata reap (it announces its objects with the mempool requests under
   Valgrind): one object freed individually, the rest cleared. */
static int reap(void) {
  strata_reap* r = strata_reap_create(NULL);
  char* a = strata_reap_malloc(r, 64);
  touch(a);
  char* b = strata_reap_malloc(r, 64);
  touch(b);
  char* c = strata_reap_malloc(r, 128);
  touch(c);
  strata_reap_free(r, b);
  touch(a);
  char* d = strata_reap_malloc(r, 64);
  touch(d);
  strata_reap_clear(r);
  char* e = strata_reap_malloc(r, 256);
  touch(e);
  strata_reap_destroy(r);
  return 0;
}

/* realloc moves a: the old block ends there, the new one starts. */
static int reallocate(void) {
  char* a = malloc(100);
  touch(a);
  char* b = malloc(50);
  touch(b);
  a = realloc(a, 300);
  touch(b);
  free(b);
  touch(a);
  char* c = malloc(50);
  touch(c);
  free(c);
  free(a);
  return 0;
}

/* Two threads, run one after the other (semaphores: no allocation). */
static sem_t go[2], done[2];
static char* shared;
static void* first_thread(void* arg) {
  (void)arg;
  sem_wait(&go[0]);
  char* y = malloc(256);
  touch(y);
  touch(shared);
  free(y);
  sem_post(&done[0]);
  return NULL;
}
static void* second_thread(void* arg) {
  char** out = arg;
  sem_wait(&go[1]);
  char* z = malloc(512);
  touch(z);
  *out = z;
  sem_post(&done[1]);
  return NULL;
}
static int threads(void) {
  pthread_t t[2];
  char* z = NULL;
  for (int i = 0; i < 2; i++) {
    sem_init(&go[i], 0, 0);
    sem_init(&done[i], 0, 0);
  }
  /* Both threads exist before the first measured allocation: their own
     start-up allocations (glibc's TLS vector) come first. */
  if (pthread_create(&t[0], NULL, first_thread, NULL) != 0) return 1;
  if (pthread_create(&t[1], NULL, second_thread, &z) != 0) return 1;
  shared = malloc(128);
  touch(shared);
  sem_post(&go[0]);
  sem_wait(&done[0]);
  sem_post(&go[1]);
  sem_wait(&done[1]);
  char* w = malloc(64);
  touch(w);
  free(w);
  free(shared);
  touch(z);
  free(z);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  return 0;
}

/* Two sites: one keeps its objects long after their use, one frees at once. */
static char* kept[10];
__attribute__((noinline)) static void keep_long(int i) {
  kept[i] = malloc(100);
  touch(kept[i]);
}
__attribute__((noinline)) static void use_and_free(void) {
  char* p = malloc(100);
  touch(p);
  free(p);
}
static int two_sites(void) {
  for (int i = 0; i < 10; i++) {
    keep_long(i);
    use_and_free();
  }
  for (int i = 0; i < 10; i++) free(kept[i]);
  return 0;
}

/* Dies by SIGSEGV with two objects live. */
static int crash(void) {
  char* a = malloc(100);
  touch(a);
  char* b = malloc(200);
  touch(b);
  touch(a);
  *(volatile int*)(unsigned long)(a[0] - 1) = 1; /* address 0 */
  return 0;
}

int main(int argc, char** argv) {
  static const struct {
    const char* name;
    int (*run)(void);
  } modes[] = {{"last-use", last_use}, {"region", region},  {"reap", reap},  {"realloc", reallocate},
               {"threads", threads},   {"two-sites", two_sites}, {"crash", crash}};
  for (size_t i = 0; argc == 2 && i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp(argv[1], modes[i].name) == 0) return modes[i].run();
  static const char usage[] = "usage: drag_cases last-use|region|reap|realloc|threads|two-sites|crash\n";
  if (write(2, usage, sizeof usage - 1) < 0) return 2;
  return 2;
}
