// 1-byte overflow of a small object (32 bytes), found at free or a later malloc
#include "misuse.h"

int main(void) { return overflow(MISUSE_SMALL, 1, "1-byte overflow (small)"); }
