// unaligned free: one byte past the start of a small object
#include "misuse.h"

int main(void) { return free_inside(64, 1, "unaligned free"); }
