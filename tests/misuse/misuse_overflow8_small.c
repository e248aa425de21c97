// 8-byte overflow of a small object (32 bytes), found at free or a later malloc
#include "misuse.h"

int main(void) { return overflow(MISUSE_SMALL, 8, "8-byte overflow (small)"); }
