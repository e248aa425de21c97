// free of a pointer into the middle of a large object (256 KiB, freed at +64 KiB)
#include "misuse.h"

int main(void) { return free_inside(MISUSE_LARGE, 64 * 1024, "free of an interior pointer (large)"); }
