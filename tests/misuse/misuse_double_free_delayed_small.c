// delayed double free of a small object: other frees of its size between the two
#include "misuse.h"

int main(void) { return double_free(MISUSE_SMALL, 16, "delayed double free (small)"); }
