// delayed double free of a large object: other large frees between the two
#include "misuse.h"

int main(void) { return double_free(MISUSE_LARGE, 4, "delayed double free (large)"); }
