// read after free of a large object: caught when the freed bytes no longer hold the secret
#include "misuse.h"

int main(void) { return read_after_free(MISUSE_LARGE, "read after free (large)"); }
