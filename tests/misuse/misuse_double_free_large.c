// double free of a large object (256 KiB): freed twice in a row
#include "misuse.h"

int main(void) { return double_free(MISUSE_LARGE, 0, "double free (large)"); }
