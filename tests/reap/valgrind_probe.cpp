// Run under valgrind by valgrind_check.cmake: reads a freed or cleared reap
// object (mode use-after-free / use-after-clear), or only live ones (clean).
#include <cstdio>
#include <cstring>

#include "strata/reap.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "clean";
  strata_reap* reap = strata_reap_create(nullptr);
  // Under Valgrind the reap is checked: its inline window stays closed, so the
  // inline strata_reap_malloc below always reaches the annotating slow path.
  const auto* head = reinterpret_cast<const strata_reap_head*>(reap);
  std::printf("inline window %s\n", (head->flags & STRATA_REAP_SLOW_CHECKED) != 0 ? "closed (checked)" : "open");
  auto* object = static_cast<volatile char*>(strata_reap_malloc(reap, 48));
  auto* other = static_cast<char*>(strata_reap_malloc(reap, 48));
  std::memset(other, 1, 48);
  for (int i = 0; i < 48; ++i) object[i] = static_cast<char>(i);
  int sum = object[7] + other[3];
  if (std::strcmp(mode, "use-after-free") == 0) {
    strata_reap_free(reap, const_cast<char*>(object));
    sum += object[5];  // invalid read
  } else if (std::strcmp(mode, "use-after-clear") == 0) {
    strata_reap_clear(reap);
    sum += object[5];  // invalid read
  } else {
    strata_reap_free(reap, const_cast<char*>(object));
    strata_reap_free(reap, other);
  }
  strata_reap_destroy(reap);
  std::printf("probe reached the end (%d)\n", sum);
  return 0;
}
