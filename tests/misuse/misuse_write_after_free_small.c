// write after free of a small object (32 bytes overwritten), found at a later malloc
#include "misuse.h"

int main(void) { return write_after_free(MISUSE_SMALL, "write after free (small)"); }
