// correct: a child process allocates and frees what its parent left live
#include <sys/wait.h>
#include <unistd.h>

#include "misuse.h"

int main(void) {
  char *kept = hidden_malloc(1000);
  fill(kept, 1000, 0x61);
  pid_t child = fork();
  expect(child >= 0, "fork failed");
  if (child == 0) {
    expect(holds(kept, 1000, 0x61), "the child sees other contents");
    hidden_free(kept);
    churn(48, 3);
    _exit(0);
  }
  int status = 0;
  expect(waitpid(child, &status, 0) == child, "waitpid failed");
  expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed");
  hidden_free(kept);
  return 0;
}
