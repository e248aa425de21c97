// write after free of a large object (256 KiB overwritten), found at a later malloc
#include "misuse.h"

int main(void) { return write_after_free(MISUSE_LARGE, "write after free (large)"); }
