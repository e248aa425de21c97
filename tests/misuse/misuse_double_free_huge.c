// double free of a huge object (5 MiB): freed twice in a row
#include "misuse.h"

int main(void) { return double_free(5u << 20, 0, "double free (huge)"); }
