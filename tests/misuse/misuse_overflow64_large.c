// heap overflow: 64 bytes written past a 100 000-byte object (not a page multiple)
#include "misuse.h"

int main(void) { return overflow(100000, 64, "64-byte overflow (large)"); }
