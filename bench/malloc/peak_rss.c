/* peak_rss [--preload LIB] PROGRAM [ARGS...]: runs PROGRAM and prints the
 * peak RSS of its whole process tree and its wall time, for the driver's
 * real-program table:
 *
 *   peak_rss_bytes=N elapsed_s=S
 *
 * Why a helper: a child's ru_maxrss starts at its parent's RSS at fork time
 * (Linux carries it over exec), so children of the Python driver would all
 * report at least the driver's ~15 MiB. Forked from this small program they
 * start near 1 MiB. wait4's ru_maxrss covers the descendants the child
 * waited for (gcc's cc1 and as), so it is the largest process of the tree.
 * The preload goes to the child only, so this program's own footprint does
 * not depend on the allocator. Exits with the child's status (128 + signal). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int first = 1;
  const char *preload = NULL;
  if (argc > 2 && strcmp(argv[1], "--preload") == 0) {
    preload = argv[2];
    first = 3;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: %s [--preload LIB] PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  double start = now_seconds();
  pid_t pid = fork();
  if (pid < 0) {
    perror("peak_rss: fork");
    return 1;
  }
  if (pid == 0) {
    if (preload != NULL) setenv("LD_PRELOAD", preload, 1);
    execvp(argv[first], argv + first);
    fprintf(stderr, "peak_rss: cannot run %s\n", argv[first]);
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) < 0) {
    perror("peak_rss: wait4");
    return 1;
  }
  double elapsed = now_seconds() - start;
  printf("peak_rss_bytes=%lld elapsed_s=%.6f\n", (long long)usage.ru_maxrss * 1024, elapsed);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
