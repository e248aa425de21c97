// read after free of a small object: caught when the freed bytes no longer hold the secret
#include "misuse.h"

int main(void) { return read_after_free(MISUSE_SMALL, "read after free (small)"); }
