// 1-byte overflow of a large object (256 KiB), found at free or a later malloc
#include "misuse.h"

int main(void) { return overflow(MISUSE_LARGE, 1, "1-byte overflow (large)"); }
