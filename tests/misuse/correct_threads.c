// correct: objects allocated on one thread and freed on another
#include <pthread.h>

#include "misuse.h"

enum { THREADS = 4, OBJECTS = 2000 };
static char *handed[THREADS][OBJECTS];

static void *allocate(void *arg) {
  char **mine = (char **)arg;
  for (int i = 0; i < OBJECTS; i++) {
    mine[i] = hidden_malloc((size_t)(i % 300) + 1);
    fill(mine[i], (size_t)(i % 300) + 1, 0x3c);
  }
  return NULL;
}

static void *release(void *arg) {
  char **theirs = (char **)arg;
  for (int i = 0; i < OBJECTS; i++) {
    expect(holds(theirs[i], (size_t)(i % 300) + 1, 0x3c), "an object changed across threads");
    hidden_free(theirs[i]);
  }
  return NULL;
}

static void all(void *(*work)(void *), int shift) {
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    expect(pthread_create(&threads[t], NULL, work, handed[(t + shift) % THREADS]) == 0, "pthread_create");
  for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
}

int main(void) {
  for (int round = 0; round < 3; round++) {
    all(allocate, 0);
    all(release, 1);  /* each thread frees another's objects */
  }
  return 0;
}
